import { readFile, readdir } from 'node:fs/promises';
import { TaskStatus } from '@retryd/core';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreUrlError } from '../src/service/open-store.js';
import { clientConfig } from '../src/backends/postgres/connection.js';
import { loadMigrations, migrate } from '../src/backends/postgres/migrate.js';
import { openPostgresStore, parsePostgresStoreUrl } from '../src/backends/postgres/open-postgres-store.js';
import { PostgresStore } from '../src/backends/postgres/postgres-store.js';
import { expandMacros } from '../src/backends/postgres/query-macros.js';
import { TaskVacuum } from '../src/backends/postgres/task-vacuum.js';
import { QUERY_NAMES, loadQueries } from '../src/backends/postgres/queries.js';
import { completionArrays } from '../src/backends/postgres/completion-columns.js';
import { targetKeyOf } from '../src/domain/target-key.js';
import { TASK_FIELD_SPECS } from '../src/domain/task-fields.js';
import type { RetryTask } from '../src/domain/task.js';
import { T0, finalOutcome, makeAttempt, makePolicy, makeTask } from './fixtures/tasks.js';
import { POSTGRES_URL, dropSchemas, freshSchema, makeStore, olderTaskRecords, withClient } from './postgres-harness.js';
import { describeStoreConformance } from './store-conformance.js';
import { waitFor } from './wait-for.js';
import { insertStoredTasks } from './fixtures/stored-tasks.js';

// Registered before the suite's own hooks, so it runs after them: every store of the test is closed by then.
afterEach(dropSchemas);

describeStoreConformance('postgres (fresh schema per test)', async () => makeStore());

describe('parsePostgresStoreUrl', () => {
  it('accepts postgres:// and postgresql://, with the schema from ?schema= (default retryd)', () => {
    expect(parsePostgresStoreUrl('postgres://root@127.0.0.1:5432/test')).toEqual({
      connectionString: 'postgres://root@127.0.0.1:5432/test',
      schema: 'retryd',
    });
    expect(parsePostgresStoreUrl('postgresql://u:p@db/retryd?schema=jobs_2&sslmode=require')).toEqual({
      connectionString: 'postgresql://u:p@db/retryd?sslmode=require',
      schema: 'jobs_2',
    });
    expect(parsePostgresStoreUrl('postgres://db/x?vacuum_interval_ms=0&schema=jobs')).toEqual({
      connectionString: 'postgres://db/x',
      schema: 'jobs',
      vacuumIntervalMs: 0,
    });
  });

  it.each([
    ['postgres://db/x?schema=Jobs', 'lowercase'],
    ['postgres://db/x?schema=', 'lowercase'],
    ['postgres://db/x?schema=1jobs', 'not starting with a digit'],
    ['postgres://db/x?schema=pg_jobs', "'pg_'"],
    ['postgres://db/x?schema=a%22;drop', 'lowercase'],
    [`postgres://db/x?schema=${'a'.repeat(49)}`, '1 to 48'],
    ['postgres://db/x?schema=a&schema=b', 'at most once'],
    ['postgres://db/x?vacuum_interval_ms=soon', 'a whole number of milliseconds'],
    ['postgres://db/x?vacuum_interval_ms=-1', 'a whole number of milliseconds'],
    ['postgres://db/x?vacuum_interval_ms=1&vacuum_interval_ms=2', 'at most once'],
    ['mysql://db/x', 'postgres://'],
    ['not a url', 'postgres://'],
  ])('refuses %s, naming --store and the rule', (url, rule) => {
    const parse = () => parsePostgresStoreUrl(url);
    expect(parse).toThrow(StoreUrlError);
    expect(parse).toThrow('`--store`');
    expect(parse).toThrow(rule);
  });

  it('refuses a bad schema given as an option too', () => {
    expect(() => new PostgresStore({ connectionString: POSTGRES_URL, schema: 'Bad-Name' })).toThrow(
      /Expected the schema of `schema` to be 1 to 48 lowercase letters/,
    );
  });
});

describe('PostgresStore migrations', () => {
  it('applies each migration once when five instances start on a fresh schema at the same moment', async () => {
    const schema = freshSchema();
    const stores = Array.from({ length: 5 }, () => makeStore(schema, { poolSize: 1 }));
    try {
      await Promise.all(stores.map((store) => store.init()));
      const rows = await withClient(schema, async (client) =>
        (await client.query('SELECT version, name FROM schema_migrations ORDER BY version')).rows,
      );
      const expected = loadMigrations().map(({ version, name }) => ({ version, name }));
      expect(expected.length).toBeGreaterThanOrEqual(2);
      expect(rows).toEqual(expected);
      // Every instance works on the schema the first one made.
      await stores[4]?.insertTasks([makeTask()]);
      expect((await stores[0]?.countByStatus())?.PENDING).toBe(1);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });

  it('opens through openPostgresStore with the URL schema; a second instance opens the migrated schema', async () => {
    const schema = freshSchema();
    const first = await openPostgresStore(`${POSTGRES_URL}?schema=${schema}`, { poolSize: 2 });
    const second = await openPostgresStore(POSTGRES_URL, { schema, poolSize: 2 });
    try {
      expect(first.store.kind).toBe('postgres');
      expect(second.store.schema).toBe(schema);
      await first.store.insertTasks([makeTask()]);
      expect((await second.store.countByStatus()).PENDING).toBe(1);
      const ref = await first.blobs.put('default', 'body-1', 'large');
      expect((await second.blobs.get(ref)).toString()).toBe('large');
    } finally {
      await first.store.close();
      await second.store.close();
    }
  });

  it('leaves nothing open when it cannot reach the server', async () => {
    const closed = 'postgres://root@127.0.0.1:1/test';
    await expect(openPostgresStore(closed, { schema: freshSchema(), connectTimeoutMs: 1_000 })).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
    });
  });
});

/**
 * Tasks stored as a store at migration 002 kept them (no `target_key`): `json_populate_recordset` over the table's
 * row type takes each record's columns by name, and the body as the JSON value its `json` column holds.
 */
async function insertAt002(client: pg.Client, tasks: readonly RetryTask[]): Promise<void> {
  await client.query('INSERT INTO tasks SELECT * FROM json_populate_recordset(NULL::tasks, $1::json)', [olderTaskRecords(tasks)]);
}

describe('PostgresStore migration 003 (targets)', () => {
  it('migrates a store made by 001 and 002 in place: every task gets its target, every target a queue', async () => {
    const schema = freshSchema();
    const pool = new pg.Pool({ ...clientConfig({ connectionString: POSTGRES_URL }, schema), max: 1 });
    const urls = ['https://api.example.com/orders', 'HTTP://Hooks.Example.com:80/a?b=1', 'http://[::1]:8080/x#y', 'https://b.example.com:8443'];
    const [a, hooks, local, b] = urls.map((url) => new URL(url).href) as [string, string, string, string];
    const tasks = {
      dueA: makeTask({ targetUrl: a, nextAttemptAt: T0 - 20 }),
      dueB: makeTask({ targetUrl: b, nextAttemptAt: T0 - 10 }),
      later: makeTask({ targetUrl: hooks, nextAttemptAt: T0 + 60_000 }),
      leased: makeTask({ targetUrl: local, status: 'IN_FLIGHT', leaseOwner: 'w', leaseExpiresAt: T0 - 1, fencingToken: 3 }),
      done: makeTask({ targetUrl: a, status: 'SUCCEEDED', nextAttemptAt: null }),
      dead: makeTask({ targetUrl: b, status: 'FAILED', nextAttemptAt: null, attemptNumber: 2, deadLetterReason: 'permanent_status:400' }),
      cancelled: makeTask({ targetUrl: hooks, status: 'CANCELLED', nextAttemptAt: null }),
    };
    try {
      expect(await migrate(pool, schema, loadMigrations().filter((m) => m.version <= 2))).toEqual([1, 2]);
      const client = await pool.connect();
      try {
        await insertAt002(client as unknown as pg.Client, Object.values(tasks));
      } finally {
        client.release();
      }
    } finally {
      await pool.end();
    }

    await using store = makeStore(schema);
    await store.init();
    for (const task of Object.values(tasks)) {
      expect(task.targetKey).toBe(targetKeyOf(task.targetUrl));
      expect(await store.getTask(task.tenantId, task.taskId)).toEqual(task);
    }
    const queues = await withClient(schema, async (client) =>
      (await client.query('SELECT target_key, next_due_at FROM target_queues ORDER BY target_key')).rows,
    );
    expect(queues).toEqual([
      { target_key: 'http://[::1]:8080', next_due_at: null },
      { target_key: 'http://hooks.example.com', next_due_at: T0 + 60_000 },
      { target_key: 'https://api.example.com', next_due_at: T0 - 20 },
      { target_key: 'https://b.example.com:8443', next_due_at: T0 - 10 },
    ]);
    // The migrated rows are claimed, shared, reaped and replayed like new ones.
    expect(await store.nextDueAt()).toBe(T0 - 20);
    const claimed = await store.claimDue(T0, { limit: 10, leaseMs: 1_000, workerId: 'w' });
    expect(claimed.map((t) => t.taskId)).toEqual([tasks.dueA.taskId, tasks.dueB.taskId]);
    expect(await store.nextDueAt()).toBe(T0 + 60_000);
    expect((await store.findExpiredLeases(T0, 10)).map((t) => t.taskId)).toEqual([tasks.leased.taskId]);
    const change = { expectedVersion: tasks.dead.version, runAttemptOffset: 2, runStartedAt: null, nextAttemptAt: T0 + 5, updatedAt: T0 + 5 };
    expect((await store.replayTask(tasks.dead, change)).kind).toBe('applied');
    expect((await store.claimDue(T0 + 5, { limit: 10, leaseMs: 1_000, workerId: 'w' })).map((t) => t.taskId)).toEqual([tasks.dead.taskId]);
    const indexes = await withClient(schema, async (client) =>
      (await client.query<{ def: string }>("SELECT pg_get_indexdef(indexrelid) AS def FROM pg_index WHERE indexrelid = 'tasks_due'::regclass")).rows,
    );
    // By target queue since 003; by the queue's number since 011-task-queue-number.sql.
    expect(indexes[0]?.def).toContain('(queue_id, next_attempt_at) WHERE (status = \'PENDING\'::text)');
  });
});

describe('PostgresStore statements', () => {
  it("parses each distinct json text of a claim once: its tasks share one frozen copy of the same headers and inline policy", async () => {
    await using store = makeStore();
    await store.init();
    const policy = makePolicy('inline').policy;
    const headers = { 'content-type': 'application/json' };
    const tasks = [
      makeTask({ policyId: null, policy, headers }),
      makeTask({ policyId: null, policy, headers }),
      makeTask({ policyId: null, policy: { ...policy, maxAttempts: 3 }, headers: { 'x-other': '1' } }),
    ];
    await store.insertTasks(tasks);
    const claimed = await store.claimDue(T0, { limit: 10, leaseMs: 1_000, workerId: 'w' });
    const [a, b, other] = tasks.map((task) => claimed.find((c) => c.taskId === task.taskId));
    expect(a?.policy).toEqual(policy);
    expect(a?.policy).toBe(b?.policy);
    expect(a?.headers).toBe(b?.headers);
    expect(other?.policy).toEqual({ ...policy, maxAttempts: 3 });
    expect(other?.headers).toEqual({ 'x-other': '1' });
    expect(Object.isFrozen(a?.policy)).toBe(true);
    expect(Object.isFrozen(a?.headers)).toBe(true);
    // Shared, so it cannot be changed through one task.
    expect(() => {
      (a?.headers as Record<string, string>)['x-more'] = '1';
    }).toThrow(TypeError);
  });

  it('name the task columns only through macros, so a new field needs no statement edited', async () => {
    const dir = new URL('../src/backends/postgres/queries/', import.meta.url);
    // Columns that no statement reads on their own: they could only appear in a hand-written column list.
    const listedOnly = TASK_FIELD_SPECS.map((f) => f.column).filter((c) => ['request_hash', 'method', 'body_ref', 'trace_context'].includes(c));
    expect(listedOnly).toHaveLength(4);
    for (const file of await readdir(dir)) {
      const text = await readFile(new URL(file, dir), 'utf8');
      for (const column of listedOnly) expect(text, `${file} names ${column}`).not.toMatch(new RegExp(`\\b${column}\\b`));
    }
    const queries = await loadQueries();
    for (const name of ['get-task', 'claim-due', 'insert-tasks', 'cancel-task', 'replay-task', 'reschedule-task'] as const) {
      for (const { column } of TASK_FIELD_SPECS) expect(queries[name].text, `${name} has ${column}`).toMatch(new RegExp(`\\b${column}\\b`));
    }
    expect(QUERY_NAMES).not.toContain('update-task');
  });

  it('refuses an unknown or malformed macro, naming the file', () => {
    expect(() => expandMacros('x.sql', 'SELECT {{task_colums}}')).toThrow('x.sql: unknown macro {{task_colums}}');
    expect(() => expandMacros('x.sql', 'SELECT {{due_status:t}}')).toThrow('x.sql: {{due_status}} takes no argument');
    expect(() => expandMacros('x.sql', 'SELECT {{ task_columns }}')).toThrow('x.sql: a macro is malformed');
    expect(expandMacros('x.sql', 'SELECT {{task_columns:t}}')).toMatch(/^SELECT t\.tenant_id, t\.task_id, /);
    expect(() => expandMacros('x.sql', 'SELECT {{task_names:t:k}}')).toThrow('x.sql: {{task_names}} takes no argument; got {{task_names:t:k}}');
  });

  it('reads the target key through the queue number, which the table stores in its place (011)', () => {
    const read = expandMacros('x.sql', '{{task_columns}}');
    expect(read).toContain('(SELECT key_of.target_key FROM target_queues AS key_of WHERE key_of.queue_id = tasks.queue_id) AS target_key');
    expect(expandMacros('x.sql', '{{task_columns:t}}')).toContain('key_of.queue_id = t.queue_id) AS target_key');
    const claimed = expandMacros('x.sql', '{{task_columns:t:kept}}');
    expect(claimed).toContain('t.tenant_id, ');
    expect(claimed).toContain('kept.target_key AS target_key');
    expect(claimed).not.toContain('key_of');
    const stored = expandMacros('x.sql', '{{task_stored_columns}}').split(', ');
    expect(stored).toContain('queue_id');
    expect(stored).not.toContain('target_key');
    expect(expandMacros('x.sql', '{{task_names}}').split(', ')).toEqual(TASK_FIELD_SPECS.map((f) => f.column));
  });
});

describe('PostgresStore query plans', () => {
  it('claims and lists through indexes, not scans, on a table large enough for the planner', async () => {
    await using store = makeStore();
    await store.init();
    const { schema } = store;
    const queries = await loadQueries();
    // The store's own connection settings; no planner switch is turned off for the test.
    const plan = await withClient(schema, async (client) => {
      // The tasks' target and 200 more, of which a few are ready.
      await client.query(`
        INSERT INTO target_queues (tenant_id, target_key, next_due_at)
        SELECT 'default', 'https://api.example.com', ${T0 + 11}
        UNION ALL
        SELECT 'default', 'https://t' || n || '.example.com', CASE WHEN n % 50 = 0 THEN ${T0} WHEN n % 2 = 0 THEN ${T0 + 3_600_000} END
        FROM generate_series(1, 200) AS n`);
      // 20,000 finished tasks (the n-th kept until T0 + n) and 2,000 pending ones with headers of a realistic size,
      // then fresh statistics.
      await client.query(`
        INSERT INTO tasks (tenant_id, task_id, idempotency_key, request_hash, target_url, queue_id, method, headers,
          status, attempt_number, run_attempt_offset, last_delay_ms, next_attempt_at, created_at, updated_at,
          fencing_token, version, cancel_requested, expires_at)
        SELECT 'default', ('00000000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid, 'key-' || n, 'h', '/', q.queue_id, 'POST',
          jsonb_build_object('content-type', 'application/json', 'authorization', repeat('x', 200)),
          CASE WHEN n % 11 = 0 THEN 'PENDING' ELSE 'SUCCEEDED' END, 1, 0, 0,
          CASE WHEN n % 11 = 0 THEN ${T0} + n ELSE NULL END, ${T0}, ${T0}, 1, 1, false,
          CASE WHEN n % 11 = 0 THEN NULL ELSE ${T0} + n END
        FROM generate_series(1, 22000) AS n, (SELECT queue_id FROM target_queues WHERE target_key = 'https://api.example.com') AS q`);
      await client.query('ANALYZE tasks, target_queues');
      const explain = async (sql: string, values: unknown[]) =>
        JSON.stringify((await client.query(`EXPLAIN (FORMAT JSON) ${sql}`, values)).rows[0]);
      // The plan a prepared statement may keep once it stops planning for each call's values: the purge's batch size
      // is then an unknown LIMIT, which the planner takes for a tenth of the expired tasks.
      await client.query('SET plan_cache_mode = force_generic_plan');
      await client.query(`PREPARE purge AS ${queries['purge-expired'].text}`);
      const purgeGeneric = JSON.stringify((await client.query(`EXPLAIN (FORMAT JSON) EXECUTE purge(${T0 + 100}, 500)`)).rows[0]);
      await client.query('RESET plan_cache_mode');
      return {
        purgeGeneric,
        claim: await explain(queries['claim-due'].text, [T0 + 100, 128, 'w', T0 + 30_100, null, null, null, null, null, null, null, null]),
        // With the engine's rooms (ClaimRooms): a few queues and tenants listed, defaults for the rest.
        claimRooms: await explain(queries['claim-due'].text, [
          T0 + 100, 128, 'w', T0 + 30_100, null, null,
          ['default\nhttps://api.example.com', 'default\nhttps://t50.example.com'], [40, 0], ['other'], [0], 200, 220,
        ]),
        nextDue: await explain(queries['next-due-at'].text, []),
        lease: await explain(queries['find-expired-leases'].text, [T0, 100]),
        deadLetters: await explain(queries['list-tasks-by-status'].text, ['default', ['FAILED', 'EXHAUSTED'], null, Infinity, 'ffffffff-ffff-ffff-ffff-ffffffffffff', 51, null]),
        everything: await explain(queries['list-tasks-by-status'].text, ['default', Object.values(TaskStatus), null, T0, '00000000-0000-4000-8000-000000000100', 51, null]),
        // A policy is a filter on the status walks: no index leads by policy (007-task-space.sql).
        byPolicy: await explain(queries['list-tasks-by-status'].text, ['default', Object.values(TaskStatus), 'default', Infinity, 'ffffffff-ffff-ffff-ffff-ffffffffffff', 51, null]),
        deadLettersOfTarget: await explain(queries['list-tasks-by-status'].text, [
          'default', ['FAILED', 'EXHAUSTED'], null, Infinity, 'ffffffff-ffff-ffff-ffff-ffffffffffff', 51, 'https://api.example.com',
        ]),
        // About 90 of the 20,000 finished tasks expired by then.
        purge: await explain(queries['purge-expired'].text, [T0 + 100, 500]),
      };
    }, 'store');
    const expected = [
      ['claim', 'tasks_due'],
      ['claim', 'target_queues_ready'],
      ['claimRooms', 'tasks_due'],
      ['claimRooms', 'target_queues_ready'],
      ['nextDue', 'target_queues_ready'],
      ['nextDue', 'tasks_due'],
      ['lease', 'tasks_lease'],
      ['deadLetters', 'tasks_by_status'],
      ['everything', 'tasks_by_status'],
      ['byPolicy', 'tasks_by_status'],
      ['deadLettersOfTarget', 'tasks_by_status'],
      ['purge', 'tasks_expiry'],
      ['purge', 'attempts_pkey'],
      ['purgeGeneric', 'tasks_expiry'],
      ['purgeGeneric', 'attempts_pkey'],
    ] as const;
    for (const [name, index] of expected) {
      expect(plan[name], name).toContain(`"Index Name":"${index}"`);
      expect(plan[name], name).not.toContain('Seq Scan');
    }
    expect(plan.claim).toContain('LockRows');
    // The purge locks what it finds in tasks_expiry (SKIP LOCKED), deletes each row by its ctid, and looks each task's
    // attempts up by key, never merging the batch with a walk of attempts_pkey, whatever it estimates of the batch.
    for (const name of ['purge', 'purgeGeneric'] as const) {
      expect(plan[name], name).toContain('LockRows');
      expect(plan[name], name).toContain('"Node Type":"Tid Scan"');
      expect(plan[name], name).not.toMatch(/"Node Type":"(Merge|Hash) Join"/);
    }
    // Each status's walk goes newest first and stops after one page (a Limit of its own under the outer one):
    // only those few rows are merged and sorted, never a whole status.
    for (const name of ['deadLetters', 'everything', 'byPolicy'] as const) {
      expect(plan[name], name).toContain('"Scan Direction":"Backward"');
      expect(plan[name].split('"Node Type":"Limit"').length - 1, name).toBe(2);
    }
  });
});

describe('PostgresStore on a young table', () => {
  it('completes attempts by primary key while the table has no statistics yet, not by scanning it', async () => {
    await using store = makeStore();
    await store.init();
    const queries = await loadQueries();
    // 20,000 tasks, one in ten IN_FLIGHT, never analyzed: a new schema in its first seconds of load, before
    // autovacuum's first ANALYZE. Under the planner's defaults the completions were joined by a sequential scan.
    const plan = await withClient(store.schema, async (client) => {
      await client.query("INSERT INTO target_queues (tenant_id, target_key) VALUES ('default', 'https://api.example.com')");
      await client.query(`
        INSERT INTO tasks (tenant_id, task_id, idempotency_key, request_hash, target_url, queue_id, method, headers,
          status, attempt_number, run_attempt_offset, last_delay_ms, next_attempt_at, created_at, updated_at,
          lease_owner, lease_expires_at, fencing_token, version, cancel_requested)
        SELECT 'default', ('00000000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid, 'key-' || n, 'h', '/', q.queue_id, 'POST', '{}',
          CASE WHEN n % 10 = 0 THEN 'IN_FLIGHT' ELSE 'SUCCEEDED' END, 0, 0, 0, NULL, ${T0}, ${T0},
          CASE WHEN n % 10 = 0 THEN 'w' END, CASE WHEN n % 10 = 0 THEN ${T0 + 30_000} END, 1, 1, false
        FROM generate_series(1, 20000) AS n, (SELECT queue_id FROM target_queues) AS q`);
      const stats = await client.query<{ analyzed: Date | null }>(
        "SELECT last_analyze AS analyzed FROM pg_stat_user_tables WHERE relname = 'tasks' AND schemaname = current_schema()",
      );
      expect(stats.rows[0]?.analyzed ?? null).toBeNull();
      const completions = Array.from({ length: 200 }, (_, i) => {
        const task = makeTask({ taskId: `00000000-0000-4000-8000-${String((i + 1) * 10).padStart(12, '0')}`, status: 'IN_FLIGHT', fencingToken: 1, leaseOwner: 'w' });
        return { taskId: task.taskId, tenantId: task.tenantId, fencingToken: 1, attempt: makeAttempt(task), next: finalOutcome(task, 'SUCCEEDED') };
      });
      const { rows } = await client.query(`EXPLAIN (FORMAT JSON) ${queries['complete-attempts'].text}`, [T0 + 100, ...completionArrays(completions)]);
      return JSON.stringify(rows[0]);
    }, 'store');
    expect(plan).toContain('"Index Name":"tasks_pkey"');
    expect(plan).not.toContain('Seq Scan');
  });
});

describe('PostgresStore vacuum', () => {
  const lastVacuum = (schema: string, table = 'tasks') =>
    withClient(schema, async (client) => {
      const { rows } = await client.query<{ at: Date | null }>(
        'SELECT last_vacuum AS at FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = $2',
        [schema, table],
      );
      return rows[0]?.at ?? null;
    });

  it('vacuums attempts too once a thousand tasks were deleted, and not for rewrites alone', async () => {
    const schema = freshSchema();
    const store = makeStore(schema, { vacuumIntervalMs: 20 });
    try {
      await store.init();
      await store.insertTasks(Array.from({ length: 1_000 }, () => makeTask()));
      await store.claimDue(T0, { limit: 1_000, leaseMs: 60_000, workerId: 'w' });
      await waitFor('a vacuum of tasks', async () => (await lastVacuum(schema)) !== null);
      expect(await lastVacuum(schema, 'attempts')).toBeNull();
      // Ended tasks past their retention, purged: their attempts' rows are dead as well as theirs.
      const ended = Array.from({ length: 1_000 }, () => makeTask({ status: TaskStatus.SUCCEEDED, nextAttemptAt: null, attemptNumber: 1, expiresAt: T0 }));
      await insertStoredTasks(store, ended);
      expect(await store.purgeExpired(T0 + 1, 1_000)).toHaveLength(1_000);
      await waitFor('a vacuum of attempts', async () => (await lastVacuum(schema, 'attempts')) !== null);
    } finally {
      await store.close();
    }
  });

  it('vacuums its tasks table once a thousand rows changed, and not before', async () => {
    const schema = freshSchema();
    const store = makeStore(schema, { vacuumIntervalMs: 20 });
    try {
      await store.init();
      await store.insertTasks(Array.from({ length: 1_000 }, () => makeTask()));
      await store.claimDue(T0, { limit: 999, leaseMs: 60_000, workerId: 'w' });
      // 999 rows changed: below the threshold, the looks of the next 100 ms do nothing.
      const quiet = Date.now() + 100;
      await waitFor('the quiet period', () => Date.now() > quiet);
      expect(await lastVacuum(schema)).toBeNull();
      await store.claimDue(T0, { limit: 1, leaseMs: 60_000, workerId: 'w' });
      await waitFor('a vacuum of tasks', async () => (await lastVacuum(schema)) !== null);
    } finally {
      await store.close();
    }
  });

  it('skips its turn while another instance of the schema vacuums, instead of waiting', async () => {
    const schema = freshSchema();
    const store = makeStore(schema, { vacuumIntervalMs: 0 });
    await store.init();
    await store.close();
    const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
    const vacuum = new TaskVacuum(pool, schema, { intervalMs: 0, minChanges: 0, onError: (error) => expect.fail(error.message) });
    try {
      const lock = [`retryd.vacuum.${schema}`];
      await withClient(schema, async (client) => {
        await client.query('SELECT pg_advisory_lock(hashtextextended($1::text, 0))', lock);
        expect(await vacuum.vacuum()).toBe(false);
        await client.query('SELECT pg_advisory_unlock(hashtextextended($1::text, 0))', lock);
      });
      expect(await vacuum.vacuum()).toBe(true);
      expect(await lastVacuum(schema)).not.toBeNull();
    } finally {
      await vacuum.close();
      await pool.end();
    }
  });
});
