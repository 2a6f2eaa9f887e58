// W2's enqueue on every store, in interleaved rounds: the CPU per enqueued task the sizing model takes as its input
// (packages/server/src/simulate/capacity-inputs.ts) and the enqueue rate it is checked against
// (packages/server/test/simulate-capacity.test.ts).
//
//   node bench/service/w2-enqueue.mjs [--stores sqlite,postgres,redis] [--rounds 3] [--backlog 1000000] [--json-file FILE]
//
// Every round runs bench/service/w2.mjs --skip-library once per store (in its own child process, the store order
// rotated by round): the backlog through POST /retry-tasks/batch (1,000 a call, 4 in flight), then its due-now steps.
// Figures per store and round: enqueue tasks/s, the service's, the store server's and the load generator's CPU per
// task; then the medians. SQLite runs with synchronous=FULL; the durability of the others is read back from their
// servers (w2.mjs prints it).
// Build the service first: npm run build

import { spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fmt, median, printMachine, printTable, serviceBuild, writeJsonFile } from './lib/report.mjs';

const { values: args } = parseArgs({
  options: {
    stores: { type: 'string', default: 'sqlite,postgres,redis' },
    rounds: { type: 'string', default: '3' },
    backlog: { type: 'string', default: '1000000' },
    'json-file': { type: 'string' },
  },
});
const stores = args.stores.split(',');
const ROUNDS = Number(args.rounds);
const dir = await mkdtemp(join(tmpdir(), 'retryd-w2-enqueue-'));
const FIGURES = ['enqueuePerSec', 'cpuMsPerTask', 'storeCpuMsPerTask', 'clientCpuMsPerTask'];

function w2(store, file) {
  const child = spawn(process.execPath, [join(import.meta.dirname, 'w2.mjs'), '--store', store, '--skip-library', '--backlog', args.backlog, '--json-file', file], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let tail = '';
  child.stdout.on('data', (d) => (tail = (tail + d.toString()).slice(-4000)));
  return /** @type {Promise<void>} */ (new Promise((resolve, reject) => child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`w2 on ${store} exited ${code}:\n${tail}`))))));
}

const machine = printMachine();
/** @typedef {{ round: number | string, [figure: string]: number | string }} Round */
/** @type {Record<string, Round[]>} */
const rounds = Object.fromEntries(stores.map((s) => [s, []]));
for (let round = 1; round <= ROUNDS; round++) {
  for (const store of stores.map((_, i) => stores[(i + round - 1) % stores.length])) {
    const file = join(dir, `${store}-r${round}.json`);
    await w2(store, file);
    const api = JSON.parse(await readFile(file, 'utf8')).api;
    /** @type {Round} */
    const r = { round, ...Object.fromEntries(FIGURES.map((k) => [k, api[k] ?? 0])), bytesAfterBacklog: api.sizeAfterBacklog.total };
    rounds[store].push(r);
    console.log(`round ${round} ${store}: ${JSON.stringify(r)}`);
  }
}
/** @type {Record<string, Record<string, number>>} */
const medians = Object.fromEntries(stores.map((s) => [s, Object.fromEntries(FIGURES.map((k) => [k, median(rounds[s].map((r) => Number(r[k])))]))]));
printMachine('load after the run');
printTable(
  ['store', 'round', 'enqueue tasks/s', 'service CPU ms/task', 'store server CPU ms/task', 'load generator CPU ms/task'],
  stores.flatMap((s) =>
    [...rounds[s], { round: 'median', ...medians[s] }].map((r) => [
      s,
      String(r.round),
      fmt(Number(r.enqueuePerSec)),
      fmt(Number(r.cpuMsPerTask), 4),
      fmt(Number(r.storeCpuMsPerTask), 4),
      fmt(Number(r.clientCpuMsPerTask), 4),
    ]),
  ),
);
writeJsonFile(args['json-file'], { machine, build: serviceBuild().hash, backlog: Number(args.backlog), rounds, medians });
