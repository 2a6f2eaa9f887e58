#!/usr/bin/env node
// The project's one test command: lint, check the alerting rules, type check (and build), then every test of every package.
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
  ['tests', 'npx', ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${resultsFile}`]],
];

let failedStep;
rmSync(resultsFile, { force: true });
for (const [name, cmd, args] of steps) {
  console.log(`\n== ${name}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  if (r.error?.code === 'ENOENT') console.error(`${cmd} is not installed${cmd === 'promtool' ? ' (apt-get install prometheus; .ci/run does it)' : ''}`);
  if (r.status !== 0) {
    failedStep = name;
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
if (failedStep && failed === 0) failed = 1;
if (failedStep) console.error(`\n${failedStep} failed`);
console.log(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failedStep || failed > 0 ? 1 : 0);
