// Runs the planned workload scripts one after the other (never two at once: they would share the two cores) and
// collects what each wrote with --json-file; a
// scarce-CPU step (`cpus`) runs pinned to its cores (scarce.mjs).

import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './environment.mjs';
import { coreList, pinSharedServers } from './scarce.mjs';

/**
 * Runs one step: `node bench/service/<script, or else workload>.mjs <args> --json-file <tmp>`, its output shown
 * (unless `quiet`) and appended to `logFile`. Resolves to `{ workload, script?, store, args, exitCode, seconds, data?,
 * error? }`: a script that fails its own checks exits 1 but still writes its figures, which the report shows with
 * the failure.
 *
 * @param {{ workload: string, script?: string | undefined, store: string, args: string[],
 *   cpus?: number | undefined }} step
 * @param {{ quiet?: boolean | undefined, logFile?: string | undefined }} [options]
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
  const pinning = step.cpus === undefined ? [] : ['taskset', '-c', coreList(step.cpus)];
  log(`\n== ${step.workload} (${step.store}${step.cpus === undefined ? '' : `, ${step.cpus} core${step.cpus === 1 ? '' : 's'}`}): ${[...pinning, 'node'].join(' ')} bench/service/${name}.mjs ${step.args.join(' ')}\n`);
  // A scarce step: the shared servers are pinned too, and always given their affinity back (also when the step fails).
  const shared = step.cpus === undefined ? undefined : pinSharedServers(step.cpus);
  let exitCode;
  try {
    exitCode = await new Promise((resolve, reject) => {
      // The scripts resolve docs/ and the build from the repository's root; taskset's affinity passes to every child.
      const [command, ...prefix] = [...pinning, process.execPath];
      const child = spawn(command, [...prefix, script, ...step.args, '--json-file', jsonFile], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.on('data', log);
      child.stderr.on('data', log);
      child.on('error', reject);
      child.on('close', (code, signal) => resolve(code ?? (signal === null ? 1 : 128)));
    });
  } finally {
    shared?.restore();
  }
  /** @type {{ workload: string, script?: string, store: string, args: string[], cpus?: number, pinned?: object, exitCode: number, seconds: number, data?: any, error?: string }} */
  const result = {
    workload: step.workload,
    ...(step.script === undefined ? {} : { script: step.script }),
    store: step.store,
    args: step.args,
    ...(step.cpus === undefined ? {} : { cpus: step.cpus, pinned: shared?.pinned }),
    exitCode,
    seconds: (performance.now() - started) / 1000,
  };
  try {
    if (existsSync(jsonFile)) result.data = JSON.parse(readFileSync(jsonFile, 'utf8'));
    else result.error = `exit code ${exitCode} and no results written`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (exitCode !== 0 && result.error === undefined) result.error = `exit code ${exitCode}: a check of the script failed (see its log)`;
  return result;
}
