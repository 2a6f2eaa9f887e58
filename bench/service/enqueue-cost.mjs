// The service's CPU per enqueued task, for builds side by side: what the API's enqueue path costs (parsing, checks,
// the idempotency fingerprint, the secrets step, the insert), without dispatch competing for the CPU.
//
//   npm run bench -- probe enqueue-cost [--store sqlite|postgres|redis] [--tasks 40000] [--rounds 3]
//        [--baseline PATH/dist/cli/main.js] [--cpu-prof DIR] [--full] [--node-flags "--max-semi-space-size=64"]
//
// Each run starts `retryd serve --role api` (no workers) on a fresh store (SQLite: a new file, synchronous=FULL;
// PostgreSQL, Redis: a schema or key prefix of their own, emptied before and after) and sends --tasks
// tasks due in an hour through POST /retry-tasks/batch, 1,000 a request, 4 requests in flight, each task with its own
// idempotency key, two headers and a small JSON body, as W1's, with `Prefer: return=minimal` (ids back, as a caller
// loading a backlog asks; --full: whole tasks back, as before that preference existed). Figures: tasks/s, and the service's CPU time
// (utime + stime from /proc) per task, which moves less than the rate on a shared machine. With --baseline the
// builds alternate run by run, the order rotated every round; the figures are medians over the rounds.
// With --cpu-prof, each service writes a V8 CPU profile into DIR (read it with cpu-profile-top.mjs). --node-flags
// are given to the service's node (both builds), e.g. `--max-semi-space-size=64` (a larger young generation).
// The build is packages/server/dist or RETRYD_CLI. Build it first: npm run build

import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { CLI, cpuMsOf } from './lib/retryd-service.mjs';
import { retrydStore } from './lib/contenders/retryd.mjs';
import { fmt, printMachine, printTable } from './lib/report.mjs';
import { sendW6, startUrlService } from './lib/w6-requests.mjs';

const { values: args } = parseArgs({
  options: {
    tasks: { type: 'string', default: '40000' },
    rounds: { type: 'string', default: '3' },
    baseline: { type: 'string' },
    'cpu-prof': { type: 'string' },
    full: { type: 'boolean', default: false },
    store: { type: 'string', default: 'sqlite' },
    'node-flags': { type: 'string', default: '' },
  },
});
const TASKS = Number(args.tasks);
const ROUNDS = Number(args.rounds);
const builds = [{ label: 'retryd', cli: CLI }];
if (args.baseline !== undefined) builds.push({ label: 'retryd (before)', cli: resolve(args.baseline) });
printMachine('machine', { baseline: args.baseline });
console.log(`store: ${args.store}; service node flags: ${args['node-flags'] || 'none'}; answers: ${args.full ? 'whole tasks' : 'Prefer: return=minimal'}`);

async function run(cli) {
  const store = await retrydStore(args.store, { name: 'enqueue-cost' });
  const profile = args['cpu-prof'] === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', resolve(args['cpu-prof'])];
  const nodeFlags = args['node-flags'].split(' ').filter((flag) => flag !== '');
  const service = await startUrlService([...nodeFlags, ...profile, cli, 'serve', '--port', '0', '--role', 'api', '--store', store.url, '--allow-targets', '127.0.0.1/32']);
  try {
    const cpuBefore = await cpuMsOf(service.child.pid);
    const seconds = await sendW6(service.url, TASKS, { prefer: args.full ? undefined : 'return=minimal', keyPrefix: 'enqueue-cost' });
    return { perSecond: TASKS / seconds, cpuUsPerTask: (((await cpuMsOf(service.child.pid)) - cpuBefore) * 1000) / TASKS };
  } finally {
    await service.stop();
    await store.cleanup();
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
/** @type {Map<string, any>} The figures (a list) of each build's rounds, by label. */
const results = new Map(builds.map((b) => [b.label, []]));
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? builds : [...builds].reverse();
  for (const build of order) {
    const result = await run(build.cli);
    results.get(build.label).push(result);
    console.log(`${build.label} round ${round + 1}: ${fmt(result.perSecond)} tasks/s, ${result.cpuUsPerTask.toFixed(1)} µs CPU per task`);
  }
}
console.log('');
const rows = builds.map((b) => {
  const r = results.get(b.label);
  return [b.label, fmt(median(r.map((x) => x.perSecond))), median(r.map((x) => x.cpuUsPerTask)).toFixed(1)];
});
printTable(['build', 'tasks/s (median)', 'µs CPU per task (median)'], rows);
if (builds.length === 2) {
  const [after, before] = builds.map((b) => median(results.get(b.label).map((x) => x.cpuUsPerTask)));
  console.log(`\nCPU per task after ÷ before: ${(after / before).toFixed(2)}×`);
}
