import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { clientConfig } from '../src/backends/postgres/connection.js';
import { loadMigrations, migrate } from '../src/backends/postgres/migrate.js';
import type { AttemptLog, RetryTask } from '../src/domain/task.js';
import type { ApiKeyRecord } from '../src/store/store.js';
import { T0, makeAttempt, makePolicy, makeTask, retryOutcome } from './fixtures/tasks.js';
import { expectMigratedTaskIds, tasksToMigrate } from './fixtures/migrated-task-ids.js';
import { POSTGRES_URL, dropSchemas, freshSchema, makeStore, olderTaskRecords, withClient } from './postgres-harness.js';
import { insertStoredTasks } from './fixtures/stored-tasks.js';

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
      expect(await migrate(pool, schema, loadMigrations().filter((m) => m.version <= 8))).toEqual([8]);
      expect(await foreignKeys()).toEqual([]);
    } finally {
      await pool.end();
    }
  });
});

/**
 * A schema migrated up to `version` (8 or later), holding `tasks` as it stored them: the request hash as its bytes
 * (bytea's hex input, `\x…`), the task id as its text (008) or a uuid, the body as the JSON string its `json` column
 * held (before 010), the headers as jsonb; their target queues, and `attempts` with the ids of `logged`.
 */
async function madeBy(version: number, tasks: readonly RetryTask[], logged: readonly AttemptLog[] = []): Promise<string> {
  const schema = freshSchema();
  const pool = new pg.Pool({ ...clientConfig({ connectionString: POSTGRES_URL }, schema), max: 1 });
  try {
    const steps = loadMigrations().filter((m) => m.version <= version);
    expect(await migrate(pool, schema, steps)).toEqual(steps.map((m) => m.version));
    const records = (JSON.parse(olderTaskRecords(tasks)) as Record<string, unknown>[]).map((r) => ({ ...r, request_hash: `\\x${String(r['request_hash'])}`, body: null }));
    await pool.query('INSERT INTO tasks SELECT * FROM json_populate_recordset(NULL::tasks, $1::json)', [JSON.stringify(records)]);
    // The body as the store wrote it, its JSON text cast to json: json_populate_recordset would read a `\u0000` in it
    // as text, which cannot hold it.
    for (const task of tasks.filter((t) => t.body !== null)) {
      await pool.query('UPDATE tasks SET body = $1::json WHERE task_id::text = $2::text', [JSON.stringify(task.body), task.taskId]);
    }
    await pool.query(
      `INSERT INTO target_queues (tenant_id, target_key, next_due_at)
       SELECT tenant_id, target_key, min(next_attempt_at) FROM tasks GROUP BY tenant_id, target_key`,
    );
    for (const a of logged) {
      await pool.query(
        `INSERT INTO attempts (tenant_id, task_id, attempt_number, started_at, duration_ms, response_status, error_message, outcome,
           response_body_snippet, next_attempt_at, worker_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [a.tenantId, a.taskId, a.attemptNumber, a.startedAt, a.durationMs, a.responseStatus, a.errorMessage, a.outcome, a.responseBodySnippet, a.nextAttemptAt, a.workerId],
      );
    }
  } finally {
    await pool.end();
  }
  return schema;
}

describe('PostgresStore migration 009 (task ids as uuid)', () => {
  it('keeps every task id as a uuid, reads it back as the same text, and keeps listings, claims and attempts', async () => {
    const tasks = tasksToMigrate();
    const schema = await madeBy(8, tasks.all, [tasks.logged]);

    await using store = makeStore(schema);
    await store.init();
    const types = await withClient(schema, async (client) =>
      (await client.query("SELECT table_name, data_type FROM information_schema.columns WHERE column_name = 'task_id' AND table_schema = current_schema() ORDER BY table_name")).rows,
    );
    expect(types).toEqual([
      { table_name: 'attempts', data_type: 'uuid' },
      { table_name: 'callbacks_owed', data_type: 'uuid' },
      { table_name: 'tasks', data_type: 'uuid' },
    ]);
    await expectMigratedTaskIds(store, tasks);
  });

  it('refuses, and leaves the schema as it was, when a stored task id would not read back as the same text', async () => {
    const odd = makeTask({ taskId: 'C0FFEE00-0000-7000-8000-000000000001' });
    const schema = await madeBy(8, [odd]);
    await using store = makeStore(schema);
    await expect(store.init()).rejects.toThrow(/column "task_id" of relation "tasks" contains null values/);
    const after = await withClient(schema, async (client) => ({
      version: (await client.query('SELECT max(version) AS version FROM schema_migrations')).rows,
      ids: (await client.query('SELECT task_id FROM tasks')).rows,
    }));
    expect(after).toEqual({ version: [{ version: 8 }], ids: [{ task_id: odd.taskId }] });
  });
});

describe('PostgresStore migration 010 (the request in less space)', () => {
  it('keeps each URL after its target key when it begins with it, whole otherwise, and reads every one back whole', async () => {
    const key = 'https://b.example.com';
    const urls = [`${key}/x?y=1#z`, `${key}?only=query`, 'https://user@b.example.com/x', 'https://b.example.com.evil.test/x', key];
    const tasks = urls.map((targetUrl, i) => makeTask({ targetUrl, targetKey: key, nextAttemptAt: T0 + i }));
    const schema = await madeBy(9, tasks);

    await using store = makeStore(schema);
    await store.init();
    for (const task of tasks) expect(await store.getTask('default', task.taskId)).toEqual(task);
    const stored = await withClient(schema, async (client) => (await client.query('SELECT target_url FROM tasks ORDER BY next_attempt_at')).rows);
    expect(stored.map((r: { target_url: string }) => r.target_url)).toEqual(['/x?y=1#z', '?only=query', ...urls.slice(2)]);
    const fresh = makeTask({ targetUrl: `${key}/new`, targetKey: key });
    await store.insertTasks([fresh]);
    expect(await store.getTask('default', fresh.taskId)).toEqual(fresh);
  });

  it('keeps every body as its UTF-8 bytes and the headers and an inline policy as JSON text, each read back as it was', async () => {
    const bodies = ['{"note":"é ✓ \\"q\\""}', 'nul\u0000in\u0000', 'pair \u{1F600} x', 'bs \\u0000 \\\u0000 /', '', 'ctl \u0001\t\n', null];
    const headers = { 'content-type': 'application/json', 'x-two': 'é', authorization: { enc: 'v1:k1:c2VhbGVk' } };
    const tasks = bodies.map((body, i) => makeTask({ body, headers, nextAttemptAt: T0 + i }));
    // A lone surrogate had a JSON form (`\ud800`) but has no UTF-8 one: it becomes U+FFFD, as the dispatcher sent it.
    const lone = makeTask({ body: 'lone \ud800 and \udc00 end', policyId: null, policy: makePolicy('inline').policy });
    const schema = await madeBy(9, [...tasks, lone]);

    await using store = makeStore(schema);
    await store.init();
    for (const task of tasks) expect(await store.getTask('default', task.taskId)).toEqual(task);
    expect(await store.getTask('default', lone.taskId)).toEqual({ ...lone, body: 'lone \uFFFD and \uFFFD end' });
    const stored = await withClient(schema, async (client) => ({
      types: (await client.query("SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'tasks' AND column_name IN ('body', 'headers', 'policy') ORDER BY column_name")).rows,
      bytes: (await client.query('SELECT encode(body, \'hex\') AS hex FROM tasks WHERE task_id = $1::uuid', [tasks[1]?.taskId])).rows,
    }));
    expect(stored).toEqual({
      types: [
        { column_name: 'body', data_type: 'bytea' },
        { column_name: 'headers', data_type: 'json' },
        { column_name: 'policy', data_type: 'json' },
      ],
      bytes: [{ hex: Buffer.from('nul\u0000in\u0000').toString('hex') }],
    });
    // The sealed walk and a re-seal read the converted headers and body (a cast to jsonb, a compare of bytes).
    const walked = await store.sealing.walkSealedTasks({ limit: 100 });
    expect(walked.items.map((t) => t.taskId).sort()).toEqual(tasks.map((t) => t.taskId).sort());
    const [first] = tasks;
    if (first === undefined) throw new Error('no task');
    const resealed = await store.sealing.resealTask(first, first, { headers: { 'x-one': 'v' }, body: 'new\u0000' });
    expect(resealed).toMatchObject({ kind: 'applied', task: { headers: { 'x-one': 'v' }, body: 'new\u0000' } });
  });
});

/** A schema migrated up to 010, holding `tasks` (and their queues, as every statement made them) as 010 stored them. */
async function madeBy010(tasks: readonly RetryTask[]): Promise<string> {
  const schema = await madeBy(9, tasks);
  const pool = new pg.Pool({ ...clientConfig({ connectionString: POSTGRES_URL }, schema), max: 1 });
  try {
    expect(await migrate(pool, schema, loadMigrations().filter((m) => m.version <= 10))).toEqual([10]);
  } finally {
    await pool.end();
  }
  return schema;
}

describe('PostgresStore migration 011 (a task names its queue by number)', () => {
  const A = 'https://a.example.com';
  const B = 'https://b.example.com';
  const C = 'https://c.example.com';
  const lease = { leaseMs: 60_000, workerId: 'w' };

  it('numbers every queue, keeps every task, hint, hold and limit, and claims, lists and counts by number', async () => {
    const pendingA = [1, 2, 3].map((i) => makeTask({ targetUrl: `${A}/x`, nextAttemptAt: T0 + i, createdAt: T0 + i }));
    const pendingB = makeTask({ targetUrl: `${B}/y?q=1`, nextAttemptAt: T0 + 5, createdAt: T0 + 5 });
    const leased = makeTask({ targetUrl: `${B}/y`, status: 'IN_FLIGHT', leaseOwner: 'w0', leaseExpiresAt: T0 + 60_000, fencingToken: 3, version: 4 });
    const ended = makeTask({ targetUrl: `${A}/x`, status: 'SUCCEEDED', nextAttemptAt: null, attemptNumber: 2 });
    const dead = makeTask({ targetUrl: `${A}/x`, status: 'FAILED', nextAttemptAt: null, deadLetterReason: 'permanent_status:400' });
    // C's queue row is gone (no statement deletes one; the migration must still keep its task).
    const orphan = makeTask({ targetUrl: `${C}/z`, nextAttemptAt: T0 + 7, createdAt: T0 + 7 });
    const tasks = [...pendingA, pendingB, leased, ended, dead, orphan];
    const schema = await madeBy010(tasks);
    await withClient(schema, async (client) => {
      await client.query('DELETE FROM target_queues WHERE target_key = $1', [C]);
      await client.query('UPDATE target_queues SET held_until = $1 WHERE target_key = $2', [T0 + 3, A]);
      await client.query('UPDATE target_queues SET max_in_flight = 5, rate_per_second = 100, tokens = 7, tokens_at = $1 WHERE target_key = $2', [T0, B]);
    });

    await using store = makeStore(schema);
    await store.init();
    for (const task of tasks) expect(await store.getTask('default', task.taskId)).toEqual(task);
    const stored = await withClient(schema, async (client) => ({
      queues: (await client.query('SELECT target_key, queue_id IS NOT NULL AS numbered, next_due_at, held_until, max_in_flight, rate_per_second, tokens FROM target_queues ORDER BY target_key')).rows,
      numbers: (await client.query('SELECT count(DISTINCT queue_id)::int AS n FROM target_queues')).rows,
      columns: (await client.query("SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'tasks' AND column_name IN ('target_key', 'queue_id')")).rows,
      due: (await client.query("SELECT pg_get_indexdef('tasks_due'::regclass) AS def")).rows,
      byQueue: (await client.query('SELECT q.target_key, count(*)::int AS n FROM tasks AS t JOIN target_queues AS q USING (queue_id) GROUP BY q.target_key ORDER BY q.target_key')).rows,
    }));
    expect(stored).toEqual({
      queues: [
        { target_key: A, numbered: true, next_due_at: T0 + 1, held_until: T0 + 3, max_in_flight: null, rate_per_second: null, tokens: null },
        // Kept as the fixture wrote it (the leased task's due time counted too): early, as a hint may be.
        { target_key: B, numbered: true, next_due_at: T0, held_until: null, max_in_flight: 5, rate_per_second: 100, tokens: 7 },
        // Made for the task that had none, with the exact hint of its PENDING tasks.
        { target_key: C, numbered: true, next_due_at: T0 + 7, held_until: null, max_in_flight: null, rate_per_second: null, tokens: null },
      ],
      numbers: [{ n: 3 }],
      columns: [{ column_name: 'queue_id' }],
      due: [{ def: expect.stringContaining("(queue_id, next_attempt_at) WHERE (status = 'PENDING'::text)") as unknown }],
      byQueue: [
        { target_key: A, n: 5 },
        { target_key: B, n: 2 },
        { target_key: C, n: 1 },
      ],
    });

    expect(await store.countByStatus('default')).toMatchObject({ PENDING: 5, IN_FLIGHT: 1, SUCCEEDED: 1, FAILED: 1 });
    const ofA = await store.listTasks({ tenantId: 'default', targetKey: A, limit: 10 });
    expect(ofA.items.map((t) => t.taskId).sort()).toEqual([...pendingA, ended, dead].map((t) => t.taskId).sort());
    expect((await store.listTasks({ tenantId: 'default', targetKey: 'https://none.example.com', limit: 10 })).items).toEqual([]);
    expect(await store.getTarget({ tenantId: 'default', targetKey: B }, T0 + 10)).toMatchObject({ maxInFlight: 5, inFlight: 1, dueTasks: 1 });

    // A's hold ends at T0 + 3; B's limits leave room; C is due: every queue is claimed by its number.
    const claimed = await store.claimDue(T0 + 10, { limit: 10, ...lease });
    expect(claimed.map((t) => t.taskId).sort()).toEqual([...pendingA, pendingB, orphan].map((t) => t.taskId).sort());
    for (const task of claimed) expect(task).toMatchObject({ status: 'IN_FLIGHT', targetUrl: tasks.find((t) => t.taskId === task.taskId)?.targetUrl });

    // New tasks join their queue by number: an existing target's, and a target seen for the first time.
    const newA = makeTask({ targetUrl: `${A}/new`, nextAttemptAt: T0 + 20 });
    const newD = makeTask({ targetUrl: 'https://d.example.com/new', nextAttemptAt: T0 + 21 });
    expect(await store.insertTasks([newA, newD])).toEqual([
      { kind: 'inserted', task: newA },
      { kind: 'inserted', task: newD },
    ]);
    expect(await store.nextDueAt()).toBe(T0 + 20);
    expect((await store.claimDue(T0 + 30, { limit: 10, ...lease })).map((t) => t.targetKey).sort()).toEqual([A, 'https://d.example.com']);
  });
});

describe('PostgresStore migration 013 (a task\'s own timeouts)', () => {
  it('adds the columns in place: null for every task stored before, kept for the tasks stored after, bounded by CHECKs', async () => {
    const before = [makeTask({ nextAttemptAt: T0 + 1 }), makeTask({ status: 'SUCCEEDED', nextAttemptAt: null, attemptNumber: 1 })];
    const schema = freshSchema();
    {
      await using store = makeStore(schema);
      await store.init();
      await insertStoredTasks(store, before);
    }
    // The schema as 012 left it: the columns gone, the migration not applied.
    await withClient(schema, async (client) => {
      await client.query('ALTER TABLE tasks DROP COLUMN attempt_timeout_ms, DROP COLUMN connect_timeout_ms');
      await client.query('DELETE FROM schema_migrations WHERE version = 13');
    });

    await using store = makeStore(schema);
    await store.init();
    for (const task of before) expect(await store.getTask('default', task.taskId)).toEqual(task);
    const after = makeTask({ attemptTimeoutMs: 1_800_000, connectTimeoutMs: 1 });
    await store.insertTasks([after]);
    expect(await store.getTask('default', after.taskId)).toEqual(after);
    await withClient(schema, async (client) => {
      // This schema's own: other tests' schemas have the same constraints at the same time.
      const checks = await client.query(
        "SELECT conname, convalidated FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = $1 AND conname LIKE 'tasks_%_timeout_ms' ORDER BY conname",
        [schema],
      );
      expect(checks.rows).toEqual([
        { conname: 'tasks_attempt_timeout_ms', convalidated: false },
        { conname: 'tasks_connect_timeout_ms', convalidated: false },
      ]);
      await expect(client.query('UPDATE tasks SET attempt_timeout_ms = 0')).rejects.toThrow(/tasks_attempt_timeout_ms/);
      await expect(client.query('UPDATE tasks SET connect_timeout_ms = 1800001')).rejects.toThrow(/tasks_connect_timeout_ms/);
    });
  });
});

describe('PostgresStore migration 014 (callbacks)', () => {
  it('adds the column in place, null for every task stored before, and owes a callback from any session that ends the task', async () => {
    const before = makeTask({ nextAttemptAt: T0 + 1 });
    const schema = freshSchema();
    {
      await using store = makeStore(schema);
      await store.init();
      await store.insertTasks([before]);
    }
    // The schema as 013 left it: the columns, table and trigger gone, the migration not applied.
    await withClient(schema, async (client) => {
      await client.query('DROP TRIGGER tasks_owe_callback ON tasks; DROP FUNCTION owe_callback(); DROP TABLE callbacks_owed');
      await client.query('ALTER TABLE tasks DROP COLUMN callback; ALTER TABLE policies DROP COLUMN callback');
      await client.query('DELETE FROM schema_migrations WHERE version = 14');
    });

    await using store = makeStore(schema);
    await store.init();
    expect(await store.getTask('default', before.taskId)).toEqual(before);
    const after = makeTask({ nextAttemptAt: T0 + 1, callback: { url: 'https://caller.example.com/ended', on: ['cancelled'], policyId: 'slow' } });
    await store.insertTasks([after]);
    expect(await store.getTask('default', after.taskId)).toEqual(after);
    // Ended by a session on another search path (an application's): the trigger's function runs in retryd's schema.
    const app = new pg.Client({ connectionString: POSTGRES_URL });
    await app.connect();
    try {
      await app.query('SET search_path = public');
      await app.query(`UPDATE ${schema}.tasks SET status = 'CANCELLED', next_attempt_at = NULL, updated_at = $1 WHERE task_id IN ($2, $3)`, [
        T0 + 9,
        before.taskId,
        after.taskId,
      ]);
    } finally {
      await app.end();
    }
    expect(await store.callbacks.owed(10)).toEqual([{ tenantId: 'default', taskId: after.taskId, owedAt: T0 + 9 }]);
  });
});

describe('PostgresStore migration 015 (a retry\'s delay in the attempt log)', () => {
  it('adds the columns in place: null in every entry stored before, kept in the entries logged after', async () => {
    const task = makeTask({ nextAttemptAt: T0 });
    const schema = freshSchema();
    const lease = { limit: 1, leaseMs: 60_000, workerId: 'w' };
    let logged: AttemptLog;
    {
      await using store = makeStore(schema);
      await store.init();
      await store.insertTasks([task]);
      const [claimed] = await store.claimDue(T0, lease);
      if (claimed === undefined) throw new Error('expected the task to be claimed');
      logged = makeAttempt(claimed);
      await store.completeAttempts([{ tenantId: 'default', taskId: task.taskId, fencingToken: claimed.fencingToken, attempt: logged, next: retryOutcome(claimed, T0 + 1_000) }], T0 + 10);
    }
    // The schema as 014 left it: the columns gone, the migration not applied.
    await withClient(schema, async (client) => {
      await client.query('ALTER TABLE attempts DROP COLUMN delayed_by, DROP COLUMN backoff_at');
      await client.query('DELETE FROM schema_migrations WHERE version = 15');
    });

    await using store = makeStore(schema);
    await store.init();
    expect((await store.listAttempts('default', task.taskId, { limit: 10 })).items).toEqual([logged]);
    const [claimed] = await store.claimDue(T0 + 1_000, lease);
    if (claimed === undefined) throw new Error('expected the task to be claimed again');
    const delayed = makeAttempt(claimed, { delayedBy: 'retry_budget', backoffAt: T0 + 2_000, nextAttemptAt: T0 + 3_500 });
    await store.completeAttempts(
      [{ tenantId: 'default', taskId: task.taskId, fencingToken: claimed.fencingToken, attempt: delayed, next: retryOutcome(claimed, T0 + 3_500) }],
      T0 + 1_010,
    );
    expect((await store.listAttempts('default', task.taskId, { limit: 10 })).items).toEqual([logged, delayed]);
  });
});

describe('PostgresStore migration 016 (metrics keys)', () => {
  it('widens the scope CHECK in place: the keys stored before are kept, a metrics key is taken, an unknown scope still refused', async () => {
    const key = (keyId: string, scope: string) => ({ keyId, tenantId: 'default', scope, name: keyId, secretHash: 'ab'.repeat(32), createdAt: T0, revokedAt: null }) as ApiKeyRecord;
    const schema = freshSchema();
    const admin = key('0000000000000001', 'admin');
    {
      await using store = makeStore(schema);
      await store.init();
      expect(await store.access.createApiKey(admin)).toBe(true);
    }
    // The schema as 015 left it: the narrower CHECK, the migration not applied.
    await withClient(schema, async (client) => {
      await client.query("ALTER TABLE api_keys DROP CONSTRAINT api_keys_scope_check, ADD CONSTRAINT api_keys_scope_check CHECK (scope IN ('admin', 'write', 'read'))");
      await client.query('DELETE FROM schema_migrations WHERE version = 16');
      await expect(client.query(`INSERT INTO api_keys SELECT '0000000000000009', tenant_id, 'metrics', name, secret_hash, created_at, revoked_at FROM api_keys`)).rejects.toThrow(/api_keys_scope_check/);
    });

    await using store = makeStore(schema);
    await store.init();
    expect(await store.access.getApiKey(admin.keyId)).toEqual(admin);
    const metrics = key('0000000000000002', 'metrics');
    expect(await store.access.createApiKey(metrics)).toBe(true);
    expect(await store.access.getApiKey(metrics.keyId)).toEqual(metrics);
    await expect(store.access.createApiKey(key('0000000000000003', 'root'))).rejects.toThrow();
  });
});
