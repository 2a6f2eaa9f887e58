import { existsSync } from 'node:fs';
import pg from 'pg';
import { clientConfig } from '../backends/postgres/connection.js';
import { parsePostgresStoreUrl } from '../backends/postgres/open-postgres-store.js';
import { createClient, DEFAULT_REDIS_PREFIX, parseRedisUrl, quit } from '../backends/redis/connection.js';
import { globalKeys } from '../backends/redis/keys.js';
import { parseStoreUrl } from '../service/open-store.js';

/**
 * Why the store a `--store` URL names holds no retryd data, or undefined when it does: a SQLite file that does not
 * exist, a PostgreSQL schema without retryd's `schema_migrations` table, Redis without the `{prefix}:layout` key every
 * retryd store writes when it first opens. Only reads: nothing is created. A store that cannot be reached rejects
 * with the driver's error, as opening it would. `sqlite::memory:` always counts as there (it is made empty anyway).
 */
export async function missingStoreReason(url: string): Promise<string | undefined> {
  const location = parseStoreUrl(url);
  if (location.kind === 'sqlite') {
    if (location.path === ':memory:' || existsSync(location.path)) return undefined;
    return `the SQLite file ${location.path} does not exist`;
  }
  if (location.kind === 'postgres') {
    const { connectionString, schema } = parsePostgresStoreUrl(location.url);
    const client = new pg.Client(clientConfig({ connectionString }, schema));
    await client.connect();
    try {
      const { rows } = await client.query<{ present: boolean }>("SELECT to_regclass(format('%I.schema_migrations', $1::text)) IS NOT NULL AS present", [schema]);
      return rows[0]?.present === true ? undefined : `the PostgreSQL schema ${schema} holds no retryd tables`;
    } finally {
      await client.end();
    }
  }
  const redis = parseRedisUrl(location.url);
  const prefix = redis.prefix ?? DEFAULT_REDIS_PREFIX;
  const client = createClient(redis, {}, `retryd:${prefix}:check`);
  // Without a listener, ioredis prints a failed connection's error itself; connect() rejects with it all the same.
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.exists(globalKeys(prefix).layout)) === 1 ? undefined : `Redis holds no retryd keys under the prefix ${prefix}`;
  } finally {
    await quit(client);
  }
}
