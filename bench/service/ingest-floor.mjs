// W6's enqueue against its floor on this machine: the same requests through retryd, through the least an HTTP
// enqueue does (lib/ingest-floor-server.mjs: parse, an id and a SHA-256 fingerprint a task, the store's insert; no
// checks), and the peer's bulk insert, side by side in one run. Where the floor itself misses an enqueue aim, no
// build of retryd can meet it on this machine; retryd ÷ floor is the share of the floor its own work leaves.
//
//   node bench/service/ingest-floor.mjs [--store sqlite|postgres|redis] [--tasks 50000] [--rounds 3] [--peer none]
//                                       [--json-file FILE]
//
// retryd: `retryd serve --role api` on a fresh store (as enqueue-cost.mjs starts it), answering `Prefer:
// return=minimal`. The floor: its server on a fresh store of the same kind, at the service's durability (SQLite
// synchronous=FULL; PostgreSQL durable; Redis as configured), its inserts in flight as the service keeps them. Both
// get --tasks tasks as W6 sends them (lib/w6-requests.mjs: 1,000 a request, 4 in flight), due in an hour. The peer,
// as W1 runs it (lib/contenders/): BullMQ's `addBulk` beside SQLite and Redis, pg-boss's `insert` beside PostgreSQL,
// 1,000 a call, 4 in flight, in this process (`--peer none`: no peer). The order is rotated every round; figures are
// medians over the rounds. CPU per task is the service process's (retryd and the floor; utime + stime), not its store
// server's. The build (retryd's and the floor's store) is packages/server/dist or RETRYD_CLI's. Build it first:
// npm run build
//
// --json-file FILE writes { machine, store, tasks, rounds, peer, rows: [{ id, name, tasksPerSec, cpuUsPerTask,
// rounds: [tasksPerSec] }], floorPerSec, retrydPerSec, peerPerSec }: id 'retryd', 'floor' or the peer's (no peer:
// `peer` and `peerPerSec` absent).

import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CLI, cpuMsOf } from './lib/retryd-service.mjs';
import { retrydStore } from './lib/contenders/retryd.mjs';
import { bullmqContender } from './lib/contenders/bullmq.mjs';
import { pgbossContender } from './lib/contenders/pgboss.mjs';
import { STORE_NAMES, fmt, median, positiveIntOption, printMachine, printTable, writeJsonFile } from './lib/report.mjs';
import { sendW6, startUrlService } from './lib/w6-requests.mjs';

const { values: args } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite' },
    tasks: { type: 'string', default: '50000' },
    rounds: { type: 'string', default: '3' },
    peer: { type: 'string' },
    'json-file': { type: 'string' },
  },
});
if (!Object.hasOwn(STORE_NAMES, args.store)) throw new Error(`--store: expected sqlite, postgres or redis; got ${JSON.stringify(args.store)}`);
const TASKS = positiveIntOption(args, 'tasks');
const ROUNDS = positiveIntOption(args, 'rounds');
const machine = printMachine('machine');

/** Starts a service (node arguments `serviceArgs(store url)`) on a fresh store, sends W6's requests, stops it. */
async function throughService(name, serviceArgs, prefer) {
  const store = await retrydStore(args.store, { name });
  try {
    const service = await startUrlService(serviceArgs(store.url));
    try {
      const cpuBefore = await cpuMsOf(service.child.pid);
      const seconds = await sendW6(service.url, TASKS, { prefer, keyPrefix: name });
      return { tasksPerSec: TASKS / seconds, cpuUsPerTask: (((await cpuMsOf(service.child.pid)) - cpuBefore) * 1000) / TASKS };
    } finally {
      await service.stop();
    }
  } finally {
    await store.cleanup();
  }
}

if (args.peer !== undefined && args.peer !== 'none') throw new Error(`--peer: expected none (or no --peer: the store's peer), got ${JSON.stringify(args.peer)}`);
const peer = args.peer === 'none' ? undefined : args.store === 'postgres' ? pgbossContender() : bullmqContender();
const contenders = [
  {
    id: 'retryd',
    name: `retryd (${STORE_NAMES[args.store]}), POST /retry-tasks/batch`,
    run: () =>
      throughService('ingest-retryd', (url) => [CLI, 'serve', '--port', '0', '--role', 'api', '--store', url, '--allow-targets', '127.0.0.1/32'], 'return=minimal'),
  },
  {
    id: 'floor',
    name: `the floor (${STORE_NAMES[args.store]}): HTTP, parse, id and SHA-256, the store's insert`,
    run: () => throughService('ingest-floor', (url) => [join(import.meta.dirname, 'lib', 'ingest-floor-server.mjs'), url]),
  },
  peer && {
    id: peer.id,
    name: `${peer.name}, ${args.store === 'postgres' ? 'insert' : 'addBulk'}`,
    run: async () => {
      await peer.setup();
      try {
        const tasks = Array.from({ length: TASKS }, (_, i) => ({ key: `ingest-${i}`, body: JSON.stringify({ order: i, amount: 1299, currency: 'EUR' }) }));
        // Never dispatched: BullMQ's worker is made but not started.
        const { ms } = await peer.enqueue(tasks, 'http://127.0.0.1:9');
        return { tasksPerSec: TASKS / (ms / 1000), cpuUsPerTask: undefined };
      } finally {
        await peer.teardown();
      }
    },
  },
].filter((c) => c !== undefined);

/** @type {Map<string, any>} The figures (a list) of each contender's rounds, by id. */
const results = new Map(contenders.map((c) => [c.id, []]));
for (let round = 0; round < ROUNDS; round++) {
  const order = contenders.map((_, i) => contenders[(i + round) % contenders.length]);
  for (const c of order) {
    const result = await c.run();
    results.get(c.id).push(result);
    console.log(`round ${round + 1} ${c.name}: ${fmt(result.tasksPerSec)} tasks/s${result.cpuUsPerTask === undefined ? '' : `, ${result.cpuUsPerTask.toFixed(1)} µs CPU a task`}`);
  }
}
const rows = contenders.map((c) => {
  const runs = results.get(c.id);
  const cpu = runs.map((r) => r.cpuUsPerTask).filter((v) => v !== undefined);
  return { id: c.id, name: c.name, tasksPerSec: median(runs.map((r) => r.tasksPerSec)), cpuUsPerTask: cpu.length === 0 ? undefined : median(cpu), rounds: runs.map((r) => r.tasksPerSec) };
});
const rate = (id) => rows.find((r) => r.id === id)?.tasksPerSec;
const vsPeer = (n) => (peer === undefined ? '–' : `${(n / rate(peer.id)).toFixed(2)}×`);
console.log('');
printTable(
  ['contender', 'tasks/s (median)', '÷ peer', 'µs CPU a task (service)', 'rounds'],
  rows.map((r) => [r.name, fmt(r.tasksPerSec), vsPeer(r.tasksPerSec), r.cpuUsPerTask === undefined ? '–' : r.cpuUsPerTask.toFixed(1), r.rounds.map((x) => fmt(x)).join(', ')]),
);
console.log(`\nretryd ÷ the floor: ${(rate('retryd') / rate('floor')).toFixed(2)}×`);
if (args['json-file'] !== undefined) {
  writeJsonFile(args['json-file'], {
    machine,
    store: args.store,
    tasks: TASKS,
    rounds: ROUNDS,
    ...(peer === undefined ? {} : { peer: { id: peer.id, name: peer.name }, peerPerSec: rate(peer.id) }),
    rows,
    floorPerSec: rate('floor'),
    retrydPerSec: rate('retryd'),
  });
}
process.exit(0); // the peers keep connections of their own open
