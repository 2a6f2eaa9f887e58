// The space a pending task takes in each store, table by table and index by index (the figures of docs/stores.md,
// "What a task costs in each store").
//
//   node bench/service/store-space.mjs [--store sqlite,postgres,redis] [--tasks 100000] [--dist PATH/dist]
//                                      [--peer auto|none] [--json-file FILE]
//
// Enqueues --tasks W2-like tasks (due in an hour, each with its own idempotency key, one header and a small JSON
// body, the service's default policy) through the built TaskService, 1,000 a batch, into a fresh store: SQLite, a
// temporary file (checkpointed before measuring); PostgreSQL, a schema `retryd_bench_space_*` on
// RETRYD_BENCH_POSTGRES_URL (default postgres://root@127.0.0.1:5432/test), vacuumed and dropped afterwards.
// Figures: bytes per task of each table and index (SQLite: pages from `dbstat`, with the payload they hold;
// PostgreSQL: pg_relation_size of the heap, TOAST and each index; Redis: the server's used_memory before and after
// the fill, under a fresh key prefix on RETRYD_BENCH_REDIS_URL (default redis://127.0.0.1:6379) deleted afterwards,
// with MEMORY USAGE of the partition's hash of task records and its hash of data JSON; the rest is the tasks' share
// of the partition's other sets and hashes), and the total.
// The build is packages/server/dist or --dist. Build it first: npm run build
//
// Beside PostgreSQL and Redis, the peer on the same server (pg-boss, BullMQ; --peer none leaves them out) keeps the
// same calls as jobs due in an hour, idempotent the way it offers (lib/peer-space.mjs): bytes per task of its tables
// and indexes, or of its Redis memory, measured the same way, on the same servers. No peer keeps its jobs in SQLite.
//
// --json-file FILE writes { machine, tasks, stores: [{ store, rows: [{ name, bytesPerTask }], totalBytesPerTask }] }:
// store 'sqlite', 'postgres' or 'redis', a row for each line printed (bytes ÷ tasks, unrounded), and the total; each
// store names its `peer`, whose figures are in `peers: [{ peer, name, rows, totalBytesPerTask }]`.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { Redis } from 'ioredis';
import { SPACE_PEERS, w2Call } from './lib/peer-space.mjs';
import { machine, writeJsonFile } from './lib/report.mjs';
import { deleteKeys, settledUsedMemory } from './lib/servers.mjs';

const { values: args } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite,postgres,redis' },
    tasks: { type: 'string', default: '100000' },
    dist: { type: 'string', default: join(import.meta.dirname, '..', '..', 'packages', 'server', 'dist') },
    peer: { type: 'string', default: 'auto' },
    'json-file': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  console.log(
    'node bench/service/store-space.mjs [--store sqlite,postgres,redis] [--tasks 100000] [--dist PATH/dist] [--peer auto|none] [--json-file FILE]',
  );
  process.exit(0);
}
const TASKS = Number(args.tasks);
if (args.peer !== 'auto' && args.peer !== 'none') throw new Error(`--peer: expected auto or none, got ${JSON.stringify(args.peer)}`);
const POSTGRES_URL = process.env.RETRYD_BENCH_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test';
const REDIS_URL = process.env.RETRYD_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const { openStore, TaskService, TargetGuard, parseAllowList } = await import(pathToFileURL(join(resolve(args.dist), 'index.js')).href);
const { taskIdOfSortKey } = await import(pathToFileURL(join(resolve(args.dist), 'backends', 'redis', 'keys.js')).href);

/** Enqueues the tasks through the service's own enqueue path, as `POST /retry-tasks/batch` would. */
async function fill(url) {
  const { store, blobs } = await openStore(url);
  const service = new TaskService({ store, blobs, targetGuard: new TargetGuard({ allow: parseAllowList('127.0.0.1/32') }) });
  try {
    for (let start = 0; start < TASKS; start += 1000) {
      const batch = Array.from({ length: Math.min(1000, TASKS - start) }, (_, j) => ({ ...w2Call(start + j), delayMs: 3_600_000 }));
      const failed = (await service.enqueueBatch('default', batch)).find((result) => result.kind === 'error');
      if (failed !== undefined) throw new Error(`enqueue failed: ${JSON.stringify(failed)}`);
    }
  } finally {
    await service.close?.();
    await store[Symbol.asyncDispose]?.();
  }
}

/** Each store's figures, and each peer's, for --json-file. */
const stores = [];
const peers = [];

/** Prints a store's or a peer's rows (bytes of each table, index or kind of key) per task; returns them. */
function print(label, rows) {
  console.log(`\n${label}, ${TASKS} pending tasks: bytes per task`);
  let total = 0;
  for (const row of rows) {
    total += row.bytes;
    const extra = row.payload === undefined ? '' : `  (payload ${Math.round(row.payload / TASKS)})`;
    console.log(`  ${row.name.padEnd(26)} ${String(Math.round(row.bytes / TASKS)).padStart(5)}${extra}`);
  }
  console.log(`  ${'total'.padEnd(26)} ${String(Math.round(total / TASKS)).padStart(5)}`);
  return { rows: rows.map((row) => ({ name: row.name, bytesPerTask: row.bytes / TASKS })), totalBytesPerTask: total / TASKS };
}

async function sqlite() {
  const dir = mkdtempSync(join(tmpdir(), 'retryd-bench-space-'));
  try {
    const path = join(dir, 'retryd.db');
    await fill(`sqlite:${path}`);
    const db = new Database(path);
    try {
      db.pragma('wal_checkpoint(TRUNCATE)');
      const rows = /** @type {{ name: string, bytes: number, payload: number }[]} */ (
        db
          .prepare('SELECT name, SUM(pgsize) AS bytes, SUM(payload) AS payload FROM dbstat GROUP BY name ORDER BY bytes DESC')
          .all()
      ).filter((row) => row.bytes >= TASKS / 2);
      return print('SQLite', rows);
    } finally {
      db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgres() {
  const schema = `retryd_bench_space_${randomBytes(6).toString('hex')}`;
  const url = new URL(POSTGRES_URL);
  url.searchParams.set('schema', schema);
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await fill(url.href);
    // Measured as a settled table: what autovacuum leaves once it has passed (the visibility map, no dead rows).
    await client.query(`VACUUM (ANALYZE) ${schema}.tasks`);
    const { rows } = await client.query(
      `SELECT c.relname AS name, pg_relation_size(c.oid)::float8 AS bytes
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relkind IN ('r', 'i')
       UNION ALL
       SELECT c.relname || ' (toast)', pg_total_relation_size(c.reltoastrelid)::float8
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relkind = 'r' AND c.reltoastrelid <> 0
       ORDER BY bytes DESC`,
      [schema],
    );
    return print('PostgreSQL', rows.filter((row) => row.bytes >= TASKS / 2));
  } finally {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  }
}

async function redis() {
  const prefix = `retryd-bench-space-${randomBytes(6).toString('hex')}`;
  const url = new URL(REDIS_URL);
  url.searchParams.set('prefix', prefix);
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  try {
    const before = await settledUsedMemory(client);
    await fill(url.href);
    const total = (await settledUsedMemory(client)) - before;
    // The partition's hashes of task records and data JSON (`{prefix:default}:tasks`, `…:data`; see keys.ts), whole,
    // by MEMORY USAGE (SAMPLES 0: every field counted).
    const usage = async (name) => Number(await client.memory('USAGE', `{${prefix}:default}:${name}`, 'SAMPLES', '0'));
    // A build before layout 6 (--dist): a hash and a string per task, by MEMORY USAGE of a sample of 200 tasks.
    const ids = (await client.zrange(`{${prefix}:default}:status:PENDING`, 0, 199)).map(taskIdOfSortKey);
    const sampled = async (kind) => {
      let bytes = 0;
      for (const id of ids) bytes += Number(await client.memory('USAGE', `{${prefix}:default}:${kind}:${id}`));
      return (bytes / ids.length) * TASKS;
    };
    const parts =
      (await client.exists(`{${prefix}:default}:tasks`)) === 1
        ? [{ name: 'tasks (hash: id → record)', bytes: await usage('tasks') }, { name: 'data (hash: id → data JSON)', bytes: await usage('data') }]
        : [{ name: 'task:<id> (hash)', bytes: await sampled('task') }, { name: 'data:<id> (string)', bytes: await sampled('data') }];
    const rest = parts.reduce((left, part) => left - part.bytes, total);
    if (rest < 0) throw new Error(`Redis: used_memory grew ${total} B, less than the task hashes' ${Math.round(total - rest)} B: another client changed the server's memory`);
    return print('Redis (used_memory)', [...parts, { name: 'sets and hashes by task', bytes: rest }]);
  } finally {
    await deleteKeys(client, `*${prefix}*`);
    await client.quit();
  }
}

const MEASURE = { sqlite, postgres, redis };
for (const store of args.store.split(',')) {
  if (!Object.hasOwn(MEASURE, store)) throw new Error(`--store: expected sqlite, postgres or redis, got ${JSON.stringify(store)}`);
  const peer = args.peer === 'none' ? undefined : { postgres: 'pgboss', redis: 'bullmq' }[store];
  stores.push({ store, peer, ...(await MEASURE[store]()) });
  if (peer !== undefined) {
    const { name, measure } = SPACE_PEERS[peer];
    peers.push({ peer, name, ...print(`${name}, as jobs due in an hour`, await measure(TASKS, { postgresUrl: POSTGRES_URL, redisUrl: REDIS_URL })) });
  }
}
writeJsonFile(args['json-file'], { machine: machine(), tasks: TASKS, stores, peers });
