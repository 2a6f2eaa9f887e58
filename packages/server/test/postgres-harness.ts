import { randomBytes } from 'node:crypto';
import { afterEach } from 'vitest';
import pg from 'pg';
import { clientConfig } from '../src/backends/postgres/connection.js';
import type { PostgresStoreOptions } from '../src/backends/postgres/connection.js';
import { PostgresStore } from '../src/backends/postgres/postgres-store.js';
import type { RetryTask } from '../src/domain/task.js';
import { TASK_FIELD_SPECS } from '../src/domain/task-fields.js';

/** The shared test server (trust auth). `RETRYD_TEST_POSTGRES_URL` points the tests elsewhere. */
export const POSTGRES_URL = process.env['RETRYD_TEST_POSTGRES_URL'] ?? 'postgres://root@127.0.0.1:5432/test';

/**
 * Schemas made by {@link freshSchema} and not yet dropped. Each test works in its own schema, so runs and
 * parallel test files never see each other's rows.
 */
const made = new Set<string>();

/** A new, unused schema name (the schema itself is created by the store's `init()`). */
export function freshSchema(): string {
  const schema = `retryd_test_${randomBytes(8).toString('hex')}`;
  made.add(schema);
  return schema;
}

/** A store on a fresh schema (or on `schema`), not yet initialised, with a small pool: the server is shared. */
export function makeStore(schema = freshSchema(), options: Partial<PostgresStoreOptions> = {}): PostgresStore {
  return new PostgresStore({ connectionString: POSTGRES_URL, schema, poolSize: 4, ...options });
}

/**
 * Runs `fn` with a client of its own whose search path is `schema`: a plain one, or with `settings: 'store'` one
 * with exactly the settings of the store's connections (for EXPLAIN).
 */
export async function withClient<T>(
  schema: string,
  fn: (client: pg.Client) => Promise<T>,
  settings: 'plain' | 'store' = 'plain',
): Promise<T> {
  const config =
    settings === 'store'
      ? clientConfig({ connectionString: POSTGRES_URL }, schema)
      : { connectionString: POSTGRES_URL, options: `-c search_path=${schema}` };
  const client = new pg.Client(config);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Drops every schema made so far (call after the stores on them are closed). */
export async function dropSchemas(): Promise<void> {
  if (made.size === 0) return;
  const schemas = [...made];
  made.clear();
  await withClient('public', async (client) => {
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });
}

/**
 * Registers the clean-up of the calling test file (stores closed, schemas dropped after each test) and returns a
 * maker of initialised stores on one schema, each with its own pool: stand-ins for separate retryd instances.
 */
export function postgresInstances(): (count: number, schema?: string) => Promise<PostgresStore[]> {
  const opened: PostgresStore[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
    await dropSchemas();
  });
  return async (count, schema = freshSchema()) => {
    const stores = Array.from({ length: count }, () => makeStore(schema));
    opened.push(...stores);
    for (const store of stores) await store.init();
    return stores;
  };
}

/**
 * Tasks as rows of a schema an earlier store version made, for `INSERT INTO tasks SELECT * FROM
 * json_populate_recordset(NULL::tasks, $1::json)`: a JSON array of one record per task, every column under its own
 * name holding the field's value as the domain has it (the request hash as its hex text, the body as the JSON string
 * its `json` column holds). A column that the older table lacks is ignored.
 */
export function olderTaskRecords(tasks: readonly RetryTask[]): string {
  return JSON.stringify(tasks.map((task) => Object.fromEntries(TASK_FIELD_SPECS.map((spec) => [spec.column, task[spec.name]]))));
}
