// `npm run bench -- probe [<name> [args]]`: the one way in to the scripts of bench/service/ that the report does not
// run. Each answers one question about a cost (a store call, the enqueue, the metrics, a profile) more precisely than
// a workload can on a shared machine, usually for two builds side by side (`--baseline`); its usage is the comment at
// the top of its file, which `probe <name> --help` prints.

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './environment.mjs';

/**
 * The probes, by script name (bench/service/<name>.mjs), each with the line `probe` lists it with.
 *
 * @type {Readonly<Record<string, string>>}
 */
export const PROBES = Object.freeze({
  'claim-cost': 'claimDue through the store port with and without a held backlog of another target, per store',
  'completion-cost': "PostgreSQL's CPU and the service's per completeAttempts call, builds side by side",
  'cpu-profile-top': 'summarises a V8 CPU profile (--cpu-prof) by function and by category, mapped to the TypeScript',
  'cycle-cost': "W1's store work alone through the store port, CPU per attempt, builds side by side",
  'downstream-cost': "the CPU the benchmarks' own downstream spends per request (an input of docs/scaling.md's model)",
  'enqueue-cost': "the service's CPU per task enqueued through the API with no dispatch, builds side by side",
  'metrics-cost': 'the CPU the Prometheus metrics add per attempt, on the metrics alone',
  'redis-store-cost': "the Redis store's calls per task, the service's CPU and redis-server's, builds side by side",
  'w4-paired': "W4's lag against its two ceilings (the relay with the store's work, the bare relay) round by round",
});

/**
 * The script of a probe, or undefined when there is no probe by that name; `name` may carry the `.mjs`.
 *
 * @param {string} name
 * @returns {string | undefined}
 */
export function probeScript(name) {
  const bare = name.replace(/\.mjs$/, '');
  return Object.hasOwn(PROBES, bare) ? join(ROOT, 'bench', 'service', `${bare}.mjs`) : undefined;
}

/**
 * The comment a script opens with (after a `#!` line), without its `// ` marks: its usage.
 *
 * @param {string} file
 * @returns {string}
 */
export function usageHeader(file) {
  const lines = readFileSync(file, 'utf8').split('\n');
  const start = lines[0]?.startsWith('#!') ? 1 : 0;
  const header = [];
  for (const line of lines.slice(start)) {
    if (!line.startsWith('//')) break;
    header.push(line.replace(/^\/\/ ?/, ''));
  }
  return header.join('\n').trimEnd();
}

/** One line a probe: what `npm run bench -- probe` prints. */
export function probeList() {
  const width = Math.max(...Object.keys(PROBES).map((n) => n.length));
  return [
    'npm run bench -- probe <name> [args]   (probe <name> --help: its usage)',
    '',
    ...Object.entries(PROBES).map(([name, line]) => `  ${name.padEnd(width)}  ${line}`),
  ].join('\n');
}

/**
 * `probe` with the arguments after it: lists the probes (no name), prints a probe's usage (`<name> --help`), or runs
 * `node bench/service/<name>.mjs [args]` from the repository's root, its output shown as it comes. Resolves to the exit
 * code to leave with: the probe's own, or 2 for a name that is no probe's.
 *
 * @param {string[]} argv
 * @returns {Promise<number>}
 */
export async function runProbe(argv) {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h') {
    console.log(probeList());
    return 0;
  }
  const script = probeScript(name);
  if (script === undefined) {
    console.error(`no probe ${name}\n\n${probeList()}`);
    return 2;
  }
  if (args.length === 1 && (args[0] === '--help' || args[0] === '-h')) {
    console.log(usageHeader(script));
    return 0;
  }
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { cwd: ROOT, stdio: 'inherit' });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve(code ?? (signal === null ? 1 : 128)));
  });
}
