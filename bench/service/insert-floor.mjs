// What a store's insert of new tasks costs on this machine, with no HTTP, parsing or checks: the floor under the
// enqueue rate (W6). Tasks like W1's (two headers, a small JSON body, an inline policy), 1,000 per insert.
//
//   node bench/service/insert-floor.mjs [--store sqlite|postgres|redis] [--batches 40] [--json-file FILE]
//
// SQLite: the store's `insertTasks` (synchronous=FULL, then NORMAL: the fsync's share), then the same rows through the
// store's statement alone, and through a table of as many columns with no index (what binding the row costs).
// PostgreSQL: the store's `insertTasks` (durable) with one call in flight, then two (the service keeps the store's
// `concurrentInserts`, 2, in flight), then its statement with `synchronous_commit = off`, and the statement's first
// step alone (reading the batch's positional arrays into rows). Schema `retryd_insert_floor`, dropped before and after.
// Redis: the store's `insertTasks` (with the server's persistence as configured) with one call in flight, then two
// (its `concurrentInserts`), under the key prefix `retryd-insert-floor`, whose keys are deleted before and after.
// --batches: the inserts of each row (after one warm-up insert). Build first: npm run build
//
// --json-file FILE writes { machine, store, batches, rows: [{ what, kind, inFlight, usPerTask, tasksPerSec }],
// ceilingTasksPerSec }: `what` is the printed label; `kind` 'store' for the store's own insertTasks at the service's
// durability and write pattern (no more calls in flight than its concurrentInserts), 'part' for the rest; `inFlight`
// the calls in flight; `ceilingTasksPerSec` the most tasks/s of the 'store' rows (what the service's own writes reach).

import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import pg from 'pg';
import { CURRENT_DIST, inParallel, positiveIntOption, printMachine, writeJsonFile } from './lib/report.mjs';
import { POSTGRES_URL, REDIS_URL, deleteKeys } from './lib/servers.mjs';
import { newTaskMaker } from './lib/new-task.mjs';

const { values: args } = parseArgs({
  options: { store: { type: 'string', default: 'sqlite' }, batches: { type: 'string', default: '40' }, 'json-file': { type: 'string' } },
});
const STORES = ['sqlite', 'postgres', 'redis'];
if (!STORES.includes(args.store)) throw new Error(`--store: expected sqlite, postgres or redis; got ${JSON.stringify(args.store)}`);
const BATCHES = positiveIntOption(args, 'batches');
const dist = (path) => import(join(CURRENT_DIST, path));
const { openStore } = await dist('index.js');
const machine = printMachine('machine');

const { TASK_FIELDS } = await dist('domain/task-fields.js');
const { targetKeyOf } = await dist('domain/target-key.js');
const makeTask = newTaskMaker({ TASK_FIELDS, targetKeyOf, tenantId: 'default' });
const policy = { maxAttempts: 5, backoffType: 'EXPONENTIAL', initialDelayMs: 1, multiplier: 2, maxDelayMs: 10, jitterType: 'FULL' };
let n = 0;
/** A new task like W1's, with a time-ordered id (as UUIDv7's are) and its own key, due in an hour. */
function newTask() {
  const i = n++;
  const now = Date.now();
  // A UUIDv7: the time in its first 48 bits, the rest random UUID's.
  const taskId = /** @type {ReturnType<typeof randomUUID>} */ (`${now.toString(16).padStart(12, '0').replace(/^(.{8})(.{4})$/, '$1-$2')}-7${randomUUID().slice(15)}`);
  return makeTask({
    targetUrl: `http://127.0.0.1:9/hooks/${i}`,
    now,
    dueAt: now + 3_600_000,
    taskId,
    idempotencyKey: `floor-${i}`,
    requestHash: randomUUID().replace(/-/g, '').repeat(2),
    headers: { 'content-type': 'application/json', 'x-request': `r${i}` },
    body: JSON.stringify({ order: i, amount: 1299, currency: 'EUR' }),
    policyId: null,
    policy,
  });
}
const batches = () => Array.from({ length: BATCHES }, () => Array.from({ length: 1000 }, newTask));

/** The rows printed so far, for --json-file. */
const rows = [];

/**
 * µs per task of `insert` over fresh batches (made before the clock starts), after one warm-up batch, with `inFlight`
 * calls kept running at once (each starts the next batch as it ends). `kind`: 'store' for the store's own insertTasks
 * at the service's durability, 'part' for a piece of it.
 */
async function perTask(label, insert, { make = batches, inFlight = 1, kind = 'part' } = {}) {
  await insert(make()[0]);
  const work = make();
  const started = performance.now();
  await inParallel(work.length, inFlight, (i) => insert(work[i]));
  const us = ((performance.now() - started) * 1000) / (work.length * 1000);
  const what = inFlight > 1 ? `${label}, ${inFlight} in flight` : label;
  console.log(`${what.padEnd(72)} ${us.toFixed(1).padStart(6)} µs a task (${Math.round(1e6 / us).toLocaleString('en-US')} tasks/s)`);
  rows.push({ what, kind, inFlight, usPerTask: us, tasksPerSec: 1e6 / us });
}

/**
 * The store's insertTasks with one call in flight, then with each count up to its `concurrentInserts` (the service's
 * own write pattern; a store without it, SQLite's, writes one at a time).
 */
async function storeInserts(label, store) {
  for (let inFlight = 1; inFlight <= (store.concurrentInserts ?? 1); inFlight++) {
    await perTask(label, (tasks) => store.insertTasks(tasks), { inFlight, kind: 'store' });
  }
}

if (args.store === 'sqlite') {
  const dir = mkdtempSync(join(tmpdir(), 'retryd-insert-floor-'));
  try {
    for (const synchronous of ['FULL', 'NORMAL']) {
      const { store } = await openStore(`sqlite:${join(dir, `${synchronous}.db`)}`, { synchronous });
      // FULL is the service's own durability; NORMAL shows the fsync's share.
      const kind = synchronous === 'FULL' ? 'store' : 'part';
      await perTask(`SQLite store insertTasks, synchronous=${synchronous}`, (tasks) => store.insertTasks(tasks), { kind });
      await store.close();
    }
    // The store's own statement on the same schema, rows already mapped: what SQLite itself costs a row.
    const { taskToParams, TASK_INSERT_COLUMNS } = await dist('backends/sqlite/task-row.js');
    const db = new Database(join(dir, 'NORMAL.db'));
    db.pragma('synchronous = OFF');
    const columns = /** @type {{ name: string }[]} */ (db.prepare("SELECT name FROM pragma_table_info('tasks')").all()).map((r) => r.name);
    const insert = db.prepare(`INSERT INTO tasks (${TASK_INSERT_COLUMNS.join(', ')}, ended_at) VALUES (${TASK_INSERT_COLUMNS.map(() => '?').join(', ')}, ?)
      ON CONFLICT (tenant_id, idempotency_key) DO NOTHING`);
    // Every task names one target, whose queue the store's inserts above made: each row keeps its number.
    const { queue_id: queueId } = /** @type {{ queue_id: number }} */ (db.prepare('SELECT queue_id FROM target_queues').get());
    const mapped = () => batches().map((batch) => batch.map((task) => taskToParams(task, queueId)));
    const all = db.transaction((batch) => { for (const row of batch) insert.run(...row); });
    await perTask(`the store's INSERT alone, rows mapped, ${columns.length} columns, 4 indexes, synchronous=OFF`, (batch) => all.immediate(batch), { make: mapped });
    db.exec(`CREATE TABLE bare (${columns.map((c) => `${c} ANY`).join(', ')}) STRICT`);
    const bare = db.prepare(`INSERT INTO bare VALUES (${columns.map(() => '?').join(', ')})`);
    const allBare = db.transaction((batch) => { for (const row of batch) bare.run(...row); });
    await perTask(`the same rows into a table of ${columns.length} columns and no index (binding a row)`, (batch) => allBare.immediate(batch), { make: mapped });
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
} else if (args.store === 'postgres') {
  const schema = 'retryd_insert_floor';
  const admin = new pg.Client(POSTGRES_URL);
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  try {
    const url = new URL(POSTGRES_URL);
    url.searchParams.set('schema', schema);
    const { store } = await openStore(url.toString());
    await storeInserts('PostgreSQL store insertTasks (durable: synchronous_commit=on)', store);
    await store.close();
    const { loadQueries } = await dist('backends/postgres/queries.js');
    const { insertTaskValues } = await dist('backends/postgres/insert-records.js');
    const { expandMacros } = await dist('backends/postgres/query-macros.js');
    const text = (await loadQueries())['insert-tasks'].text;
    await admin.query(`SET search_path TO ${schema}`);
    await admin.query('SET synchronous_commit = off');
    // Its values as the store sends them on the channel `floor` ($10 false: the session's synchronous_commit=off holds).
    const records = () => batches().map((batch) => insertTaskValues(batch, 'floor'));
    await perTask('its insert-tasks statement, records made, synchronous_commit=off', (values) => admin.query({ name: 'insert', text, values }), { make: records });
    // count(input.*) makes every column be read, as the INSERT reads them.
    // Its FROM as the statement's own (the shared fields of $8 cast once, the places of $9); the arguments it does not
    // read are typed once in the WHERE, so that the same values can be sent.
    const parse = `SELECT count(input.*) FROM (SELECT ${expandMacros('floor', '{{task_record_values}}')}
      FROM (SELECT (SELECT $3::jsonb) AS json_values, (SELECT $9::integer[]) AS places${expandMacros('floor', '{{task_shared_values}}')}) AS shared,
        ROWS FROM (jsonb_array_elements($1::jsonb), json_array_elements($2::json)) WITH ORDINALITY AS r(task, texts, i)) AS input
      WHERE $4::integer >= 0 AND cardinality($5::text[]) >= 0 AND cardinality($6::text[]) >= 0 AND $7::text <> '' AND $10::boolean IS NOT NULL`;
    await perTask("the statement's first step alone (the batch's arrays read into rows)", (values) => admin.query({ name: 'parse', text: parse, values }), { make: records });
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
} else if (args.store === 'redis') {
  // A fixed prefix, emptied before and after (its keys are `{prefix}:…` and `{prefix:partition}:…`; see keys.ts).
  const prefix = 'retryd-insert-floor';
  const pattern = `{${prefix}[:}]*`;
  const admin = new Redis(REDIS_URL);
  await deleteKeys(admin, pattern);
  try {
    const url = new URL(REDIS_URL);
    url.searchParams.set('prefix', prefix);
    const { store } = await openStore(url.toString());
    try {
      await storeInserts(`Redis store insertTasks (persistence: ${store.durabilityMode})`, store);
    } finally {
      await store.close();
    }
  } finally {
    await deleteKeys(admin, pattern);
    await admin.quit();
  }
}

writeJsonFile(args['json-file'], {
  machine,
  store: args.store,
  batches: BATCHES,
  rows,
  // Every 'store' row is the service's own write pattern (storeInserts goes no further than concurrentInserts).
  ceilingTasksPerSec: Math.max(...rows.filter((r) => r.kind === 'store').map((r) => r.tasksPerSec)),
});
