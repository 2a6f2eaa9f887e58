// W6 (../shared/WORKLOADS.md, "bulk enqueue") through the transactional enqueue: the application's own PostgreSQL
// transactions, beside pg-boss's `insert` into its own schema on the same server, in the same run.
//
//   node bench/service/w6-transactional.mjs [--tasks 50000] [--batch 1000] [--concurrency 4] [--rounds 3] [--peer none]
//                                           [--json-file FILE]
//
// Both sides take W6's tasks (each due in an hour, its own idempotency key, two headers, a small JSON body, W1's policy
// inline) in batches of --batch, --concurrency transactions in flight, each on a pooled connection of the
// application's: BEGIN, one batch, COMMIT. retryd: `createPgEnqueuer(...).enqueueBatch(client, tasks)` of
// `@retryd/server/pg` into a schema `retryd migrate` made (validation, the target check, the idempotency key, the
// insert and its NOTIFY, as POST /retry-tasks/batch). pg-boss: `boss.insert(jobs, { db })` on the same client (its jobs
// carry the same task as `data`, `startAfter` an hour on). Each round runs on fresh schemas, the two sides one after
// the other, the order swapped every round; the figures are medians. Durability is read back from the server
// (synchronous_commit): a COMMIT returns once its WAL is flushed. Every task is counted in its table afterwards.
// `--peer none`: retryd alone.
//
// --json-file FILE writes { machine, tasks, batch, concurrency, rounds, durability: { label, durable, fsync,
// synchronousCommit, walSyncMethod }, peer?: { id, name }, rows: [{ id, name, tasksPerSec, rounds: [tasksPerSec] }],
// retrydPerSec, peerPerSec? }: row ids 'retryd' and 'pgboss' (no peer: `peer` and `peerPerSec` absent). The report
// (npm run bench, bench/report/) runs it as its `w6tx` step.
//
// The build is packages/server/dist (or RETRYD_CLI's). Build it first: npm run build

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { CURRENT_DIST, fmt, inParallel, median, positiveIntOption, printMachine, printTable, ratioText, writeJsonFile } from './lib/report.mjs';
import { POSTGRES_URL, dropSchema, postgresDurability, withPostgres } from './lib/servers.mjs';
import { W6, w6Task } from './lib/w6-requests.mjs';

const { values: args } = parseArgs({
  options: {
    tasks: { type: 'string', default: '50000' },
    batch: { type: 'string', default: String(W6.perRequest) },
    concurrency: { type: 'string', default: String(W6.inFlight) },
    rounds: { type: 'string', default: '3' },
    peer: { type: 'string' },
    'json-file': { type: 'string' },
  },
});
if (args.peer !== undefined && args.peer !== 'none') throw new Error(`--peer: expected none (or no --peer: pg-boss), got ${JSON.stringify(args.peer)}`);
const WITH_PEER = args.peer !== 'none';
const TASKS = positiveIntOption(args, 'tasks');
const BATCH = positiveIntOption(args, 'batch');
const CONCURRENCY = positiveIntOption(args, 'concurrency');
const ROUNDS = positiveIntOption(args, 'rounds');
const RETRYD_SCHEMA = 'retryd_bench_w6_tx';
const PGBOSS_SCHEMA = 'retryd_bench_w6_tx_pgboss';
const QUEUE = 'w6';

const { createPgEnqueuer } = await import(join(CURRENT_DIST, 'pg-enqueue', 'index.js'));
const CLI = join(CURRENT_DIST, 'cli', 'main.js');

const machine = printMachine('machine');
const durability = await postgresDurability();
console.log(`PostgreSQL: ${durability.label}`);
console.log(`${fmt(TASKS)} tasks, ${fmt(BATCH)} a transaction, ${CONCURRENCY} transactions in flight, ${ROUNDS} round(s)\n`);

/** Runs `total` tasks through `enqueue(client, tasks)`, one batch a transaction; resolves with the seconds it took. */
async function load(enqueue, keyPrefix) {
  const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: CONCURRENCY });
  const notBefore = Date.now() + 3_600_000;
  try {
    // Every connection opened (and, for retryd, the schema's version read) before the clock starts.
    await inParallel(CONCURRENCY, CONCURRENCY, async (lane) => {
      const client = await pool.connect();
      await client.query('SELECT 1');
      if (lane === 0) await inTransaction(client, () => enqueue(client, [w6Task(-1, { keyPrefix: `${keyPrefix}-warm`, notBefore })]));
      client.release();
    });
    const started = performance.now();
    await inParallel(Math.ceil(TASKS / BATCH), CONCURRENCY, async (b) => {
      const tasks = Array.from({ length: Math.min(BATCH, TASKS - b * BATCH) }, (_, i) => w6Task(b * BATCH + i, { keyPrefix, notBefore }));
      const client = await pool.connect();
      try {
        await inTransaction(client, () => enqueue(client, tasks));
      } finally {
        client.release();
      }
    });
    return (performance.now() - started) / 1000;
  } finally {
    await pool.end();
  }
}

async function inTransaction(client, work) {
  await client.query('BEGIN');
  try {
    await work();
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}

const sides = {
  async retryd(round) {
    await dropSchema(RETRYD_SCHEMA);
    await promisify(execFile)(process.execPath, [CLI, 'migrate', '--store', `${POSTGRES_URL}?schema=${RETRYD_SCHEMA}`]);
    // The environment's retryd settings are not this run's: the tasks call loopback, and carry no credential.
    const enqueuer = createPgEnqueuer({ schema: RETRYD_SCHEMA, allowTargets: '127.0.0.1/32', env: {} });
    const seconds = await load((client, tasks) => enqueuer.enqueueBatch(client, tasks), `w6tx-${round}`);
    const stored = await count(`SELECT count(*)::int AS n FROM ${RETRYD_SCHEMA}.tasks WHERE idempotency_key NOT LIKE '%-warm-%'`);
    await dropSchema(RETRYD_SCHEMA);
    return { seconds, stored };
  },
  async pgboss(round) {
    await dropSchema(PGBOSS_SCHEMA);
    const boss = new PgBoss({ connectionString: POSTGRES_URL, schema: PGBOSS_SCHEMA, schedule: false, supervise: false });
    boss.on('error', (e) => console.error('pg-boss error:', e.message));
    await boss.start();
    await boss.createQueue(QUEUE);
    try {
      const jobs = (tasks) => tasks.map((t) => ({ name: QUEUE, data: t, startAfter: new Date(t.notBefore) }));
      const seconds = await load((client, tasks) => boss.insert(jobs(tasks), { db: { executeSql: (text, values) => client.query(text, values) } }), `w6tx-${round}`);
      const stored = await count(`SELECT count(*)::int AS n FROM ${PGBOSS_SCHEMA}.job WHERE name = '${QUEUE}' AND data->>'idempotencyKey' NOT LIKE '%-warm-%'`);
      return { seconds, stored };
    } finally {
      await boss.stop({ graceful: false, wait: true, close: true });
      await dropSchema(PGBOSS_SCHEMA);
    }
  },
};

const count = (sql) => withPostgres(async (c) => (await c.query(sql)).rows[0].n);

const NAMES = { retryd: 'retryd `enqueueBatch` (@retryd/server/pg)', pgboss: 'pg-boss 10.4.2 `insert` (`db`: the same client)' };
const rates = { retryd: [], ...(WITH_PEER ? { pgboss: [] } : {}) };
for (let round = 0; round < ROUNDS; round++) {
  const order = (round % 2 === 0 ? ['retryd', 'pgboss'] : ['pgboss', 'retryd']).filter((side) => side in rates);
  for (const side of order) {
    const { seconds, stored } = await sides[side](round);
    if (stored !== TASKS) throw new Error(`${side}: ${stored} of ${TASKS} tasks committed`);
    rates[side].push(TASKS / seconds);
    console.log(`round ${round + 1}, ${side}: ${fmt(TASKS / seconds)} tasks/s (${seconds.toFixed(2)} s), ${fmt(stored)} stored`);
  }
}
console.log('');
const rows = Object.entries(rates).map(([id, runs]) => ({ id, name: NAMES[id], tasksPerSec: median(runs), rounds: runs }));
printTable(
  ['enqueue inside the application\'s transaction', 'tasks/s (median)', 'rounds'],
  rows.map((r) => [r.name, fmt(r.tasksPerSec), r.rounds.map((x) => fmt(x)).join(', ')]),
);
const retryd = median(rates.retryd);
const pgboss = WITH_PEER ? median(rates.pgboss) : undefined;
if (pgboss !== undefined) console.log(`\nretryd ÷ pg-boss: ${ratioText(retryd / pgboss)}`);
writeJsonFile(args['json-file'], {
  machine,
  tasks: TASKS,
  batch: BATCH,
  concurrency: CONCURRENCY,
  rounds: ROUNDS,
  durability,
  ...(WITH_PEER ? { peer: { id: 'pgboss', name: 'pg-boss 10.4.2' }, peerPerSec: pgboss } : {}),
  rows,
  retrydPerSec: retryd,
});
