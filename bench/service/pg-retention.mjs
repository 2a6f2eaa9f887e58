// PostgreSQL past one table (docs/stores.md): what ending a day of finished tasks costs, deleted row by row as retryd's
// purge does today, beside dropping a partition that holds exactly that day (a layout by end time, which retryd cannot
// adopt: see the docs).
//
//   node bench/service/pg-retention.mjs [--day 200000] [--live 200000] [--batch 100] [--rounds 3] [--json-file FILE]
//
// Every round, on fresh schemas:
// 1. Rows: a schema made by `retryd migrate` (today's single tasks table) holding --live PENDING tasks (due in an hour)
//    and --day SUCCEEDED ones whose retention ended yesterday, each with one attempt logged; the retryd store (its
//    built dist) purges them through `purgeExpired(now, --batch)` (the purger's batch, 100 by default) until none
//    is left, then `VACUUM tasks, attempts` makes their space reusable. Figures: the purge's time, the vacuum's, the WAL
//    both wrote (pg_current_wal_lsn before and after: other users of the server add to it) and the schema's size.
// 2. A partition: the same --day rows in a table with the same columns partitioned by RANGE (expires_at), one partition
//    for that day, the live rows in the DEFAULT partition (NULL expires_at), no attempts (an attempt log dropped by
//    day would need the task's end time in every attempt row). `ALTER TABLE … DETACH PARTITION` then `DROP TABLE`.
//    Figures: time and WAL.
// Build the service first: npm run build

import { parseArgs } from 'node:util';
import { openBuiltStore } from './lib/built-store.mjs';
import { retrydStore } from './lib/contenders/retryd.mjs';
import { CURRENT_DIST, fmt, median, printMachine, printTable, writeJsonFile } from './lib/report.mjs';
import { CLI } from './lib/retryd-service.mjs';
import { POSTGRES_URL, dropSchema, schemaSize, withPostgres } from './lib/servers.mjs';
import { spawnSync } from 'node:child_process';

const { values: args } = parseArgs({
  options: {
    day: { type: 'string', default: '200000' },
    live: { type: 'string', default: '200000' },
    batch: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '3' },
    'json-file': { type: 'string' },
  },
});
const DAY = Number(args.day);
const LIVE = Number(args.live);
const BATCH = Number(args.batch);
const ROUNDS = Number(args.rounds);
const HOUR = 3_600_000;
const now = Date.now();
const yesterday = now - 24 * HOUR;

/** Rows of W2's shape (a small JSON POST), `n` of them from `from`, as an INSERT … SELECT over generate_series. */
const taskRows = (table, { from, n, ended }) => `
  INSERT INTO ${table} (queue_id, fencing_token, version, created_at, updated_at, last_delay_ms, next_attempt_at,
    task_id, attempt_number, run_attempt_offset, cancel_requested, tenant_id, status, idempotency_key, request_hash,
    target_url, method, headers, body, expires_at)
  SELECT (SELECT queue_id FROM target_queues LIMIT 1), 1, 1, ${yesterday - HOUR} + i, ${yesterday - HOUR} + i, 0,
    ${ended ? 'NULL' : `${now + HOUR}`}, gen_random_uuid(), ${ended ? 1 : 0}, 0, false, 'default',
    '${ended ? 'SUCCEEDED' : 'PENDING'}', 'retention-' || i, sha256(i::text::bytea),
    'http://127.0.0.1:9/w2-backlog', 'POST', '{"content-type":"application/json"}',
    convert_to('{"orderId":' || i || ',"amountCents":1250,"currency":"EUR","note":"w2"}', 'UTF8'),
    ${ended ? `${yesterday} + i * ${(12 * HOUR) / Math.max(1, DAY)}` : 'NULL'}
  FROM generate_series(${from}, ${from + n - 1}) AS i`;

const walLsn = async (c) => (await c.query('SELECT pg_current_wal_lsn() AS l')).rows[0].l;
const walSince = async (c, lsn) => Number((await c.query('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1) AS d', [lsn])).rows[0].d);
const timed = async (fn) => {
  const t = performance.now();
  const value = await fn();
  return { ms: performance.now() - t, value };
};

async function rowsRound() {
  const place = await retrydStore('postgres', { name: 'retention-rows' });
  const schema = new URL(place.url).searchParams.get('schema');
  const migrated = spawnSync(process.execPath, [CLI, 'migrate', '--store', place.url], { encoding: 'utf8' });
  if (migrated.status !== 0) throw new Error(`retryd migrate failed: ${migrated.stderr}`);
  await withPostgres(async (c) => {
    await c.query(`SET search_path = "${schema}"`);
    await c.query(`INSERT INTO target_queues (tenant_id, target_key, next_due_at) VALUES ('default', 'http://127.0.0.1:9', ${now + HOUR})`);
    await c.query(taskRows('tasks', { from: 1, n: LIVE, ended: false }));
    await c.query(taskRows('tasks', { from: LIVE + 1, n: DAY, ended: true }));
    await c.query(`INSERT INTO attempts (tenant_id, task_id, attempt_number, started_at, duration_ms, response_status, outcome, worker_id)
      SELECT tenant_id, task_id, 1, updated_at, 3, 200, 'SUCCEEDED', 'w' FROM tasks WHERE status = 'SUCCEEDED'`);
    await c.query('VACUUM ANALYZE tasks, attempts');
  });
  const sizeBefore = await schemaSize(schema);
  const store = await openBuiltStore(CURRENT_DIST, place);
  const out = await withPostgres(async (c) => {
    const lsn = await walLsn(c);
    const purge = await timed(async () => {
      let purged = 0;
      for (;;) {
        const batch = await store.purgeExpired(now, BATCH);
        if (batch.length === 0) return purged;
        purged += batch.length;
      }
    });
    const purgeWal = await walSince(c, lsn);
    if (purge.value !== DAY) throw new Error(`purged ${purge.value} tasks, expected ${DAY}`);
    await c.query(`SET search_path = "${schema}"`);
    const lsn2 = await walLsn(c);
    const vacuum = await timed(() => c.query('VACUUM tasks, attempts'));
    return { purgeMs: purge.ms, purgeWalBytes: purgeWal, vacuumMs: vacuum.ms, vacuumWalBytes: await walSince(c, lsn2) };
  });
  await store.close();
  const sizeAfter = await schemaSize(schema);
  await place.cleanup();
  return { ...out, sizeBefore, sizeAfter };
}

async function partitionRound() {
  const schema = 'retryd_bench_retention_range';
  await dropSchema(schema);
  const place = await retrydStore('postgres', { name: 'retention-range-source' });
  const migrated = spawnSync(process.execPath, [CLI, 'migrate', '--store', place.url], { encoding: 'utf8' });
  if (migrated.status !== 0) throw new Error(`retryd migrate failed: ${migrated.stderr}`);
  const source = new URL(place.url).searchParams.get('schema');
  const out = await withPostgres(async (c) => {
    await c.query(`CREATE SCHEMA "${schema}"`);
    await c.query(`SET search_path = "${schema}", "${source}"`);
    await c.query(`INSERT INTO target_queues (tenant_id, target_key, next_due_at) VALUES ('default', 'http://127.0.0.1:9', ${now + HOUR})`);
    // No unique index can hold the key (tenant_id, task_id) here: it would have to include expires_at (docs/stores.md).
    await c.query(`CREATE TABLE "${schema}".tasks_by_end (LIKE "${source}".tasks INCLUDING DEFAULTS) PARTITION BY RANGE (expires_at)`);
    await c.query(`CREATE TABLE "${schema}".tasks_day PARTITION OF "${schema}".tasks_by_end FOR VALUES FROM (${yesterday}) TO (${yesterday + 24 * HOUR})`);
    await c.query(`CREATE TABLE "${schema}".tasks_live PARTITION OF "${schema}".tasks_by_end DEFAULT`);
    await c.query(`CREATE INDEX ON "${schema}".tasks_by_end (tenant_id, task_id)`);
    await c.query(`CREATE INDEX ON "${schema}".tasks_by_end (tenant_id, idempotency_key)`);
    await c.query(taskRows(`"${schema}".tasks_by_end`, { from: 1, n: LIVE, ended: false }));
    await c.query(taskRows(`"${schema}".tasks_by_end`, { from: LIVE + 1, n: DAY, ended: true }));
    await c.query(`VACUUM ANALYZE "${schema}".tasks_by_end`);
    const lsn = await walLsn(c);
    const drop = await timed(async () => {
      await c.query(`ALTER TABLE "${schema}".tasks_by_end DETACH PARTITION "${schema}".tasks_day`);
      await c.query(`DROP TABLE "${schema}".tasks_day`);
    });
    return { dropMs: drop.ms, dropWalBytes: await walSince(c, lsn) };
  });
  await dropSchema(schema);
  await place.cleanup();
  return out;
}

const machine = printMachine();
console.log(`retention on PostgreSQL: ${fmt(DAY)} finished tasks of one day among ${fmt(LIVE)} live ones; purge batch ${BATCH}; ${ROUNDS} rounds\n`);
const rounds = [];
for (let round = 1; round <= ROUNDS; round++) {
  const rows = await rowsRound();
  const partition = await partitionRound();
  rounds.push({ round, ...rows, ...partition });
  console.log(`round ${round}: ${JSON.stringify(rounds.at(-1))}`);
}
const m = (k) => median(rounds.map((r) => r[k]));
const MiB = 2 ** 20;
printTable(
  ['round', 'purge (s)', 'purge WAL (MiB)', 'vacuum (s)', 'vacuum WAL (MiB)', 'schema before → after purge (MiB)', 'detach + drop (ms)', 'drop WAL (KiB)'],
  [...rounds.map((r) => [String(r.round), r]), ['median', Object.fromEntries(Object.keys(rounds[0]).map((k) => [k, m(k)]))]].map(([label, r]) => [
    label,
    fmt(r.purgeMs / 1000, 1),
    fmt(r.purgeWalBytes / MiB, 1),
    fmt(r.vacuumMs / 1000, 2),
    fmt(r.vacuumWalBytes / MiB, 1),
    `${fmt(r.sizeBefore / MiB)} → ${fmt(r.sizeAfter / MiB)}`,
    fmt(r.dropMs, 1),
    fmt(r.dropWalBytes / 1024, 1),
  ]),
);
writeJsonFile(args['json-file'], { machine, day: DAY, live: LIVE, batch: BATCH, rounds, postgres: POSTGRES_URL });
