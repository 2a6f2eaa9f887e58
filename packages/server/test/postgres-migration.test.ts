import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { clientConfig } from '../src/backends/postgres/connection.js';
import { loadMigrations, migrate } from '../src/backends/postgres/migrate.js';
import type { RetryTask } from '../src/domain/task.js';
import { T0, makePolicy, makeTask } from './fixtures/tasks.js';
import { POSTGRES_URL, dropSchemas, freshSchema, makeStore, olderTaskRecords, withClient } from './postgres-harness.js';

afterEach(dropSchemas);

/**
 * A schema migrated up to 006, holding `tasks` as 006 stored them: the request hash as its hex text (inserted as text,
 * not through the mapping's check). `json_populate_recordset` takes each record's columns by name, and the body as
 * the JSON value its `json` column holds.
 */
async function madeBy006(tasks: readonly RetryTask[]): Promise<string> {
  const schema = freshSchema();
  const pool = new pg.Pool({ ...clientConfig({ connectionString: POSTGRES_URL }, schema), max: 1 });
  try {
    expect(await migrate(pool, schema, loadMigrations().filter((m) => m.version <= 6))).toEqual([1, 2, 3, 4, 5, 6]);
    await pool.query('INSERT INTO tasks SELECT * FROM json_populate_recordset(NULL::tasks, $1::json)', [olderTaskRecords(tasks)]);
  } finally {
    await pool.end();
  }
  return schema;
}

describe('PostgresStore migration 007 (task space)', () => {
  it('keeps every request hash as its bytes, reads it back as the same text, and lists by policy without tasks_by_policy', async () => {
    const onPolicy = makeTask({ requestHash: `00${'0f'.repeat(30)}a0`, nextAttemptAt: T0 + 1 });
    const inline = makeTask({ policyId: null, policy: makePolicy('inline').policy, nextAttemptAt: T0 + 2 });
    const ended = makeTask({ status: 'FAILED', nextAttemptAt: null, deadLetterReason: 'permanent_status:400' });
    const schema = await madeBy006([onPolicy, inline, ended]);

    await using store = makeStore(schema);
    await store.init();
    for (const task of [onPolicy, inline, ended]) expect(await store.getTask('default', task.taskId)).toEqual(task);
    const stored = await withClient(schema, async (client) => ({
      hashes: (await client.query('SELECT DISTINCT pg_typeof(request_hash)::text AS type, octet_length(request_hash) AS bytes FROM tasks')).rows,
      byPolicyIndex: (await client.query("SELECT to_regclass('tasks_by_policy') AS index")).rows,
    }));
    expect(stored).toEqual({ hashes: [{ type: 'bytea', bytes: 32 }], byPolicyIndex: [{ index: null }] });
    const byPolicy = await store.listTasks({ tenantId: 'default', policyId: 'default', limit: 10 });
    expect(byPolicy.items.map((t) => t.taskId).sort()).toEqual([onPolicy.taskId, ended.taskId].sort());
    // The same request again is a duplicate of the migrated task, its hash compared exactly.
    expect(await store.insertTasks([makeTask({ idempotencyKey: onPolicy.idempotencyKey, requestHash: onPolicy.requestHash })])).toEqual([
      { kind: 'duplicate', task: onPolicy },
    ]);
  });

  it('refuses, and leaves the schema as it was, when a stored hash would not read back as the same text', async () => {
    const schema = await madeBy006([makeTask({ requestHash: 'ABCD' })]);
    await using store = makeStore(schema);
    await expect(store.init()).rejects.toThrow(/column "request_hash" of relation "tasks" contains null values/);
    const after = await withClient(schema, async (client) => ({
      version: (await client.query('SELECT max(version) AS version FROM schema_migrations')).rows,
      hashes: (await client.query('SELECT request_hash FROM tasks')).rows,
    }));
    expect(after).toEqual({ version: [{ version: 6 }], hashes: [{ request_hash: 'ABCD' }] });
  });
});

describe('PostgresStore migration 008 (attempts unchecked)', () => {
  it('drops the attempt log\'s foreign key (the other tests log attempts on schemas migrated through it)', async () => {
    const schema = freshSchema();
    const pool = new pg.Pool({ ...clientConfig({ connectionString: POSTGRES_URL }, schema), max: 1 });
    const foreignKeys = () =>
      pool.query("SELECT conname FROM pg_constraint WHERE conrelid = 'attempts'::regclass AND contype = 'f'").then((r) => r.rows);
    try {
      expect(await migrate(pool, schema, loadMigrations().filter((m) => m.version <= 7))).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect(await foreignKeys()).toEqual([{ conname: 'attempts_tenant_id_task_id_fkey' }]);
      expect(await migrate(pool, schema, loadMigrations())).toEqual([8]);
      expect(await foreignKeys()).toEqual([]);
    } finally {
      await pool.end();
    }
  });
});
