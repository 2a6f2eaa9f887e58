// The space a pending task takes in the SQL stores, table by table and index by index (the figures of
// docs/stores.md, "What a task costs in each store").
//
//   node bench/service/store-space.mjs [--store sqlite,postgres] [--tasks 100000] [--dist PATH/dist]
//
// Enqueues --tasks W2-like tasks (due in an hour, each with its own idempotency key, one header and a small JSON
// body, the service's default policy) through the built TaskService, 1,000 a batch, into a fresh store: SQLite, a
// temporary file (checkpointed before measuring); PostgreSQL, a schema `retryd_bench_space_*` on
// RETRYD_BENCH_POSTGRES_URL (default postgres://root@127.0.0.1:5432/test), vacuumed and dropped afterwards.
// Figures: bytes per task of each table and index (SQLite: pages from `dbstat`, with the payload they hold;
// PostgreSQL: pg_relation_size of the heap, TOAST and each index), and the total.
// The build is packages/server/dist or --dist. Build it first: npm run build

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';

const { values: args } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite,postgres' },
    tasks: { type: 'string', default: '100000' },
    dist: { type: 'string', default: join(import.meta.dirname, '..', '..', 'packages', 'server', 'dist') },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  console.log('node bench/service/store-space.mjs [--store sqlite,postgres] [--tasks 100000] [--dist PATH/dist]');
  process.exit(0);
}
const TASKS = Number(args.tasks);
const POSTGRES_URL = process.env.RETRYD_BENCH_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test';
const { openStore, TaskService, TargetGuard, parseAllowList } = await import(pathToFileURL(join(resolve(args.dist), 'index.js')).href);

/** Enqueues the tasks through the service's own enqueue path, as `POST /retry-tasks/batch` would. */
async function fill(url) {
  const { store, blobs } = await openStore(url);
  const service = new TaskService({ store, blobs, targetGuard: new TargetGuard({ allow: parseAllowList('127.0.0.1/32') }) });
  try {
    for (let start = 0; start < TASKS; start += 1000) {
      const batch = Array.from({ length: Math.min(1000, TASKS - start) }, (_, j) => ({
        targetUrl: 'http://127.0.0.1:9999/w2-backlog',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ orderId: start + j, amountCents: 1250, currency: 'EUR', note: 'w2' }),
        idempotencyKey: `w2-${start + j}`,
        delayMs: 3_600_000,
      }));
      const failed = (await service.enqueueBatch('default', batch)).find((result) => result.kind === 'error');
      if (failed !== undefined) throw new Error(`enqueue failed: ${JSON.stringify(failed)}`);
    }
  } finally {
    await service.close?.();
    await store[Symbol.asyncDispose]?.();
  }
}

function print(label, rows) {
  console.log(`\n${label}, ${TASKS} pending tasks: bytes per task`);
  let total = 0;
  for (const row of rows) {
    total += row.bytes;
    const extra = row.payload === undefined ? '' : `  (payload ${Math.round(row.payload / TASKS)})`;
    console.log(`  ${row.name.padEnd(26)} ${String(Math.round(row.bytes / TASKS)).padStart(5)}${extra}`);
  }
  console.log(`  ${'total'.padEnd(26)} ${String(Math.round(total / TASKS)).padStart(5)}`);
}

async function sqlite() {
  const dir = mkdtempSync(join(tmpdir(), 'retryd-bench-space-'));
  try {
    const path = join(dir, 'retryd.db');
    await fill(`sqlite:${path}`);
    const db = new Database(path);
    try {
      db.pragma('wal_checkpoint(TRUNCATE)');
      const rows = db
        .prepare('SELECT name, SUM(pgsize) AS bytes, SUM(payload) AS payload FROM dbstat GROUP BY name ORDER BY bytes DESC')
        .all()
        .filter((row) => row.bytes >= TASKS / 2);
      print('SQLite', rows);
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
    print('PostgreSQL', rows.filter((row) => row.bytes >= TASKS / 2));
  } finally {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  }
}

for (const store of args.store.split(',')) {
  if (store === 'sqlite') await sqlite();
  else if (store === 'postgres') await postgres();
  else throw new Error(`--store: expected sqlite or postgres, got ${JSON.stringify(store)}`);
}
