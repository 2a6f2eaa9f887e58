// The space a pending task takes in the peers' stores, for store-space.mjs: the same W2-like calls, each kept as the
// peer keeps a job that is due in an hour, with its idempotency key used the way the peer offers (BullMQ: the job id,
// which `add` skips when a job of that id exists; pg-boss: the job's id, which its `insert` skips on conflict).

import { createHash, randomBytes } from 'node:crypto';
import PgBoss from 'pg-boss';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { bullmqContender } from './contenders/bullmq.mjs';
import { pgbossContender } from './contenders/pgboss.mjs';
import { deleteKeys, dropSchema, settledUsedMemory, withPostgres } from './servers.mjs';

/** W2-like calls (store-space.mjs enqueues the same ones into retryd): one header, a small JSON body, its own key. */
export function w2Call(i) {
  return {
    targetUrl: 'http://127.0.0.1:9999/w2-backlog',
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ orderId: i, amountCents: 1250, currency: 'EUR', note: 'w2' }),
    idempotencyKey: `w2-${i}`,
  };
}

const HOUR_MS = 3_600_000;
/** What a peer's job carries: the call as retryd keeps it, without the key (which becomes the job's id). */
const jobData = ({ targetUrl, method, headers, body }) => ({ url: targetUrl, method, headers, body });

/**
 * BullMQ, on the Redis at `redisUrl`: `addBulk` of delayed jobs (`delay` an hour, `attempts: 5`, exponential backoff as W1's), `jobId` the
 * idempotency key. Bytes per task: Redis's `used_memory` before and after, the job hashes by `MEMORY USAGE` of a
 * sample of 200, the rest (the delayed set, the events stream, the id counter) by difference.
 */
export async function bullmqSpace(tasks, { redisUrl }) {
  const prefix = `retryd-bench-space-bullmq-${randomBytes(6).toString('hex')}`;
  const client = new Redis(redisUrl, { maxRetriesPerRequest: null });
  // A connection handed to BullMQ stays open when the queue closes: quit below.
  // Typed as BullMQ's own connection: its types name the copy of ioredis it bundles, the same client as this one.
  const connection = /** @type {import('bullmq').ConnectionOptions & Redis} */ (/** @type {unknown} */ (new Redis(redisUrl, { maxRetriesPerRequest: null })));
  const queue = new Queue('w2', { connection, prefix });
  try {
    await queue.waitUntilReady();
    const before = await settledUsedMemory(client);
    const opts = { delay: HOUR_MS, attempts: 5, backoff: { type: 'exponential', delay: 1 } };
    for (let start = 0; start < tasks; start += 1000) {
      const calls = Array.from({ length: Math.min(1000, tasks - start) }, (_, j) => w2Call(start + j));
      await queue.addBulk(calls.map((c) => ({ name: 'call', data: jobData(c), opts: { ...opts, jobId: c.idempotencyKey } })));
    }
    const total = (await settledUsedMemory(client)) - before;
    const delayed = await queue.getDelayedCount();
    if (delayed !== tasks) throw new Error(`BullMQ: expected ${tasks} delayed jobs, found ${delayed}`);
    let sampled = 0;
    for (let i = 0; i < 200; i++) sampled += Number(await client.memory('USAGE', `${prefix}:w2:w2-${Math.floor((i * tasks) / 200)}`));
    const jobs = (sampled / 200) * tasks;
    if (total < jobs) throw new Error(`BullMQ: used_memory grew ${total} B, less than its job hashes' ${Math.round(jobs)} B: another client changed the server's memory`);
    return [
      { name: 'job hashes (one per job)', bytes: jobs },
      { name: 'the delayed set, the events stream and the rest', bytes: total - jobs },
    ];
  } finally {
    await queue.close();
    await connection.quit();
    await deleteKeys(client, `${prefix}:*`);
    await client.quit();
  }
}

/** A job id for a key: pg-boss's ids are uuids; the first 16 bytes of the key's SHA-256, written as one. */
function uuidOfKey(key) {
  const h = createHash('sha256').update(key).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/**
 * pg-boss, on the PostgreSQL at `postgresUrl`: `insert` of jobs starting in an hour (`retryLimit: 4`, exponential backoff), `id` from the idempotency
 * key, in a schema of its own. Bytes per task: `pg_relation_size` of every table and index of the schema that grew
 * by at least half a byte a task, after a `VACUUM`, as for retryd.
 */
export async function pgbossSpace(tasks, { postgresUrl }) {
  const schema = `retryd_bench_space_pgboss_${randomBytes(6).toString('hex')}`;
  const boss = new PgBoss({ connectionString: postgresUrl, schema, schedule: false, supervise: false });
  boss.on('error', (e) => console.error('pg-boss error:', e.message));
  try {
    await boss.start();
    // @ts-expect-error pg-boss 10's types ask for `name` in the options too; it takes the name from the first argument.
    await boss.createQueue('w2', { retryLimit: 4, retryDelay: 1, retryBackoff: true });
    const startAfter = new Date(Date.now() + HOUR_MS).toISOString();
    for (let start = 0; start < tasks; start += 1000) {
      const calls = Array.from({ length: Math.min(1000, tasks - start) }, (_, j) => w2Call(start + j));
      await boss.insert(calls.map((c) => ({ name: 'w2', id: uuidOfKey(c.idempotencyKey), data: jobData(c), startAfter, retryLimit: 4, retryDelay: 1, retryBackoff: true })));
    }
    return await withPostgres(async (c) => {
      const { rows: counted } = await c.query(`SELECT count(*)::int AS n FROM ${schema}.job WHERE name = 'w2' AND state = 'created'`);
      if (counted[0].n !== tasks) throw new Error(`pg-boss: expected ${tasks} created jobs, found ${counted[0].n}`);
      const { rows: parts } = await c.query(`SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`, [schema]);
      for (const p of parts) await c.query(`VACUUM (ANALYZE) ${schema}.${p.relname}`);
      // The queue's partition is named `j` and the SHA-224 of the queue's name; it is shown as `job (w2)`.
      const { rows } = await c.query(
        `SELECT CASE WHEN c.relname LIKE 'j%' AND length(c.relname) > 50 THEN 'job (w2)' || substr(c.relname, 58) ELSE c.relname END AS name,
           pg_relation_size(c.oid)::float8 AS bytes
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relkind IN ('r', 'i')
         UNION ALL
         SELECT 'job (w2) (toast)', pg_total_relation_size(c.reltoastrelid)::float8
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relkind = 'r' AND c.reltoastrelid <> 0 AND c.relname LIKE 'j%'
         ORDER BY bytes DESC`,
        [schema],
      );
      return rows.filter((row) => row.bytes >= tasks / 2);
    }, postgresUrl);
  } finally {
    await boss.stop({ graceful: false, wait: true, close: true }).catch((e) => console.error('pg-boss stop:', e.message));
    await dropSchema(schema, postgresUrl);
  }
}

/** The peers store-space.mjs can measure, by id: their name (as W1 shows it) and what measures them. */
export const SPACE_PEERS = Object.freeze({
  bullmq: { name: bullmqContender().name, measure: bullmqSpace },
  pgboss: { name: pgbossContender().name, measure: pgbossSpace },
});
