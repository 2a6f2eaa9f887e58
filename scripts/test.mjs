#!/usr/bin/env node
// The project's one test command: lint, check the alerting rules, type check (and build; the benchmarks too), then every test of every package.
// Ends with a single summary line, `tests: N passed, N failed, N skipped`, and exits non-zero on any failure.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';

const resultsFile = '.vitest-results.json';
const steps = [
  ['lint', 'npx', ['eslint', '.']],
  // The alerting rules operators load into Prometheus (promtool: the Debian package `prometheus`, see .ci/run).
  ['alert rules', 'promtool', ['check', 'rules', 'docs/alerts.yml']],
  ['alert rule tests', 'promtool', ['test', 'rules', 'docs/alerts.test.yml']],
  ['build', 'npm', ['run', 'build']],
  ['typecheck tests', 'npx', ['tsc', '-p', 'tsconfig.check.json']],
  // The benchmark scripts (bench/**/*.mjs), checked from their JSDoc against the build above.
  ['typecheck bench', 'npx', ['tsc', '-p', 'bench/tsconfig.json']],
  // The clients of other languages (clients/), each against a real `retryd serve` of the build above. A suite that
  // fails does not stop the others; one whose toolchain is missing is skipped with a line saying so (.ci/run installs go).
  ['go client: vet', 'go', ['vet', './...'], { cwd: 'clients/go', optional: true, keepGoing: true }],
  ['go client: tests', 'go', ['test', '-count=1', '-v', './...'], { cwd: 'clients/go', optional: true, keepGoing: true, count: countGoTests }],
  ['python client: tests', 'python3', ['-m', 'unittest', 'discover', '-v', '-s', 'tests', '-t', '.'], { cwd: 'clients/python', optional: true, keepGoing: true, count: countUnittests }],
  // Every tier of vitest.config.ts (unit, stores, service) in one run, so the summary counts them all.
  ['tests', 'npx', ['vitest', 'run', '--project', 'unit', '--project', 'stores', '--project', 'service', '--reporter=default', '--reporter=json', `--outputFile.json=${resultsFile}`]],
];

/** Counts of `go test -v`: one `--- PASS|FAIL|SKIP: Name` line per test. */
function countGoTests(output) {
  const count = (word) => (output.match(new RegExp(`^\\s*--- ${word}: `, 'gm')) ?? []).length;
  return { passed: count('PASS'), failed: count('FAIL'), skipped: count('SKIP') };
}

/** Counts of `python -m unittest`: its `Ran N tests` line and `FAILED (failures=…, errors=…, skipped=…)` or `OK (skipped=…)`. */
function countUnittests(output) {
  const field = (name) => Number(new RegExp(`[(, ]${name}=(\\d+)`).exec(output)?.[1] ?? 0);
  const ran = Number(/^Ran (\d+) tests?/m.exec(output)?.[1] ?? 0);
  const failed = field('failures') + field('errors') + field('unexpected successes');
  const skipped = field('skipped');
  return { passed: Math.max(0, ran - failed - skipped), failed, skipped };
}

const counted = { passed: 0, failed: 0, skipped: 0 };

let failedStep;
rmSync(resultsFile, { force: true });
for (const [name, cmd, args, options = {}] of steps) {
  console.log(`\n== ${name}: ${options.cwd === undefined ? '' : `(in ${options.cwd}) `}${cmd} ${args.join(' ')}`);
  // A counted step's output is read for its counts, then shown.
  const r = spawnSync(cmd, args, { cwd: options.cwd, stdio: options.count === undefined ? 'inherit' : ['inherit', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
  if (options.count !== undefined && r.error === undefined) {
    process.stdout.write(r.stdout);
    process.stderr.write(r.stderr);
    const counts = options.count(`${r.stdout}\n${r.stderr}`);
    for (const key of Object.keys(counted)) counted[key] += counts[key];
    console.log(`${name}: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
  }
  if (r.error?.code === 'ENOENT' && options.optional === true) {
    console.log(`${name}: skipped, ${cmd} is not installed${cmd === 'go' ? ' (apt-get install golang-go; .ci/run does it)' : ''}`);
    continue;
  }
  if (r.error?.code === 'ENOENT') console.error(`${cmd} is not installed${cmd === 'promtool' ? ' (apt-get install prometheus; .ci/run does it)' : ''}`);
  if (r.status !== 0) {
    failedStep ??= name;
    if (options.keepGoing === true) continue;
    break;
  }
}

let passed = 0;
let failed = 0;
let skipped = 0;
try {
  const results = JSON.parse(readFileSync(resultsFile, 'utf8'));
  passed = results.numPassedTests;
  failed = results.numFailedTests;
  skipped = results.numPendingTests + (results.numTodoTests ?? 0);
  // A suite that failed to load has no tests counted; count it as a failure so the line never says "0 failed" wrongly.
  failed += results.testResults.filter((f) => f.status === 'failed' && f.assertionResults.length === 0).length;
} catch {
  // No results: the run stopped before the tests (lint or type errors).
}
passed += counted.passed;
failed += counted.failed;
skipped += counted.skipped;
if (failedStep && failed === 0) failed = 1;
if (failedStep) console.error(`\n${failedStep} failed`);
console.log(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failedStep || failed > 0 ? 1 : 0);
