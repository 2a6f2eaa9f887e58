// Runs the planned workload scripts one after the other (never two at once: they would share the two cores) and
// collects what each wrote with --json-file.

import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './environment.mjs';

/**
 * Runs one step: `node bench/service/<script, or else workload>.mjs <args> --json-file <tmp>`, its output shown
 * (unless `quiet`) and appended to `logFile`. Resolves to `{ workload, script?, store, args, exitCode, seconds, data?,
 * error? }`: a script that fails its own checks exits 1 but still writes its figures, which the report shows with
 * the failure.
 */
export async function runStep(step, { quiet = false, logFile } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'retryd-bench-report-'));
  const name = step.script ?? step.workload;
  const jsonFile = join(dir, `${name}.json`);
  const script = join(ROOT, 'bench', 'service', `${name}.mjs`);
  const started = performance.now();
  const log = (chunk) => {
    if (!quiet) process.stdout.write(chunk);
    if (logFile !== undefined) appendFileSync(logFile, chunk);
  };
  log(`\n== ${step.workload} (${step.store}): node bench/service/${name}.mjs ${step.args.join(' ')}\n`);
  const exitCode = await new Promise((resolve, reject) => {
    // The scripts resolve docs/ and the build from the repository's root.
    const child = spawn(process.execPath, [script, ...step.args, '--json-file', jsonFile], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', log);
    child.stderr.on('data', log);
    child.on('error', reject);
    child.on('close', (code, signal) => resolve(code ?? (signal === null ? 1 : 128)));
  });
  const result = { workload: step.workload, ...(step.script === undefined ? {} : { script: step.script }), store: step.store, args: step.args, exitCode, seconds: (performance.now() - started) / 1000 };
  try {
    if (existsSync(jsonFile)) result.data = JSON.parse(readFileSync(jsonFile, 'utf8'));
    else result.error = `exit code ${exitCode} and no results written`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (exitCode !== 0 && result.error === undefined) result.error = `exit code ${exitCode}: a check of the script failed (see its log)`;
  return result;
}
