// The PostgreSQL and Redis servers the peers (and retryd's networked stores) run on: connection defaults,
// durability read back from the server, and clean-up of a benchmark's own schema or key prefix.

import pg from 'pg';

/** PostgreSQL of these machines (database `test`, user `root`, trust); override with BENCH_POSTGRES_URL. */
export const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? process.env.PGBOSS_URL ?? 'postgres://root@127.0.0.1:5432/test';
/** Redis of these machines; override with BENCH_REDIS_URL. */
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

export async function withPostgres(fn, connectionString = POSTGRES_URL) {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** PostgreSQL's durability settings, read back from the server. */
export async function postgresDurability(connectionString = POSTGRES_URL) {
  return withPostgres(async (c) => {
    const show = async (k) => (await c.query(`SHOW ${k}`)).rows[0][k];
    const fsync = await show('fsync');
    const synchronousCommit = await show('synchronous_commit');
    const walSyncMethod = await show('wal_sync_method');
    const durable = fsync === 'on' && synchronousCommit !== 'off';
    return {
      durable,
      fsync,
      synchronousCommit,
      walSyncMethod,
      label: `${durable ? 'durable' : 'NOT durable'}: fsync=${fsync}, synchronous_commit=${synchronousCommit}, wal_sync_method=${walSyncMethod}`,
    };
  }, connectionString);
}

export const dropSchema = (schema, connectionString = POSTGRES_URL) =>
  withPostgres((c) => c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`), connectionString);

/** Bytes of every table and index in a schema. */
export const schemaSize = (schema, connectionString = POSTGRES_URL) =>
  withPostgres(async (c) => {
    const { rows } = await c.query(
      `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'm')`,
      [schema],
    );
    return Number(rows[0].n);
  }, connectionString);

/**
 * Redis's persistence settings, read back from the server (an ioredis client): the settings, `label` (what a crash
 * loses, for a durability column) and `persistence` (a few words for a contender's name: `AOF everysec`, `AOF always`,
 * `no persistence`, `snapshots only`).
 */
export async function redisDurability(redis) {
  const get = async (k) => (await redis.config('GET', k))[1];
  const appendonly = await get('appendonly');
  const appendfsync = await get('appendfsync');
  const save = await get('save');
  const label =
    appendonly === 'yes'
      ? `AOF on, appendfsync ${appendfsync}${appendfsync === 'always' ? ' (durable)' : ' (NOT durable: up to 1 s lost)'}`
      : `NO durability: appendonly no, save "${save}" (everything since start is lost on a crash)`;
  const persistence = appendonly === 'yes' ? `AOF ${appendfsync}` : save === '' ? 'no persistence' : 'snapshots only';
  return { appendonly, appendfsync, save, label, persistence };
}

/**
 * The server's `used_memory` once nothing waits to be freed: `UNLINK` (deleteKeys) frees a large value on a
 * background thread, and memory read before that ends still holds it.
 */
export async function settledUsedMemory(redis) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const info = await redis.info('memory');
    if (/lazyfree_pending_objects:0\b/.test(info)) return Number(/used_memory:(\d+)/.exec(info)?.[1]);
    if (Date.now() > deadline) throw new Error('Redis still freeing unlinked keys after 60 s (lazyfree_pending_objects)');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Deletes every key matching a SCAN pattern (e.g. `*retryd-bench-w1*`). */
export async function deleteKeys(redis, pattern) {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== '0');
}
