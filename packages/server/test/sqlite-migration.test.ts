import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { AttemptLog, RetryTask } from '../src/domain/task.js';
import type { ApiKeyRecord } from '../src/store/store.js';
import { TASK_COLUMN_NAMES, TASK_STORED_COLUMN_NAMES } from '../src/backends/sql/task-columns.js';
import { loadMigrations, migrate } from '../src/backends/sqlite/migrate.js';
import { READY_QUEUES } from '../src/backends/sqlite/queue-statements.js';
import { SELECT_DUE } from '../src/backends/sqlite/statements.js';
import { ATTEMPT_COLUMNS, attemptToParams, taskToParams } from '../src/backends/sqlite/task-row.js';
import { T0, finalOutcome, makeAttempt, makePolicy, makeTask, retryOutcome } from './fixtures/tasks.js';
import { expectMigratedTaskIds, tasksToMigrate } from './fixtures/migrated-task-ids.js';
import { A, B, C, forTarget, freshPath, lease, opened, plan, removeTempDir } from './sqlite-harness.js';
import { insertStoredTasks } from './fixtures/stored-tasks.js';

afterAll(removeTempDir);

/** The task columns 012 added (a task's own timeouts). */
const ADDED_BY_012: readonly string[] = ['attempt_timeout_ms', 'connect_timeout_ms'];
/** The column 013 added (a task's callback). */
const ADDED_BY_013: readonly string[] = ['callback'];

/**
 * The columns of the tables before 011 (every task column and `ended_at`, but `expires_at` and those of 012), each with
 * its place in a task's INSERT parameters (`taskToParams`).
 */
const COLUMNS_BEFORE_011 = [...TASK_COLUMN_NAMES, 'ended_at']
  .map((column, i) => [column, i] as const)
  .filter(([column]) => column !== 'expires_at' && !ADDED_BY_012.includes(column) && !ADDED_BY_013.includes(column));

/**
 * Writes `tasks` into a database of 010 or later as it stored them (queue numbers and statuses by number): every column
 * of today's but those named in `left` (added since).
 */
function insertStoredRows(db: Database.Database, tasks: readonly RetryTask[], left: readonly string[]): void {
  const columns = [...TASK_STORED_COLUMN_NAMES, 'ended_at'].map((column, i) => [column, i] as const).filter(([column]) => !left.includes(column));
  const insert = db.prepare(`INSERT INTO tasks (${columns.map(([c]) => c).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`);
  for (const task of tasks) {
    const row = taskToParams(task, 1);
    insert.run(...columns.map(([, i]) => row[i]));
  }
}

/** The attempt columns 014 added (a retry's delay past its backoff). */
const ADDED_BY_014: readonly string[] = ['delayed_by', 'backoff_at'];

/**
 * Writes attempt log entries into a database's `attempts` as it stored them: every column of today's but those named
 * in `left` (added since); the task id as its text with `idAsText` (the tables before 008).
 */
function insertAttemptRows(db: Database.Database, attempts: readonly AttemptLog[], left: readonly string[], idAsText = false): void {
  const columns = ATTEMPT_COLUMNS.split(',')
    .map((column, i) => [column.trim(), i] as const)
    .filter(([column]) => !left.includes(column));
  const insert = db.prepare(`INSERT INTO attempts (${columns.map(([c]) => c).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`);
  for (const attempt of attempts) {
    // Any id the tables before 008 held, even one 008 refuses: it is put in as text, not through the BLOB's check.
    const params: unknown[] = attemptToParams(idAsText ? { ...attempt, taskId: randomUUID() } : attempt);
    if (idAsText) params[1] = attempt.taskId;
    insert.run(...columns.map(([, i]) => params[i]));
  }
}

/** Writes `tasks` into an older database's `tasks`, every column it has, each row as `params` makes it. */
function insertRows(db: Database.Database, tasks: readonly RetryTask[], params: (task: RetryTask) => unknown[]): void {
  const insert = db.prepare(`INSERT INTO tasks (${COLUMNS_BEFORE_011.map(([c]) => c).join(', ')}) VALUES (${COLUMNS_BEFORE_011.map(() => '?').join(', ')})`);
  for (const task of tasks) {
    const row = params(task);
    insert.run(...COLUMNS_BEFORE_011.map(([, i]) => row[i]));
  }
}

/** A task's INSERT parameters as the tables before 010 took them: its status by name, its target key as text. */
function paramsBefore010(task: RetryTask): unknown[] {
  const params: unknown[] = taskToParams(task, 0);
  params[TASK_COLUMN_NAMES.indexOf('status')] = task.status;
  params[TASK_COLUMN_NAMES.indexOf('target_key')] = task.targetKey;
  return params;
}

/** A task's INSERT parameters as the tables before 009 took them: the URL whole, as before 010 otherwise. */
function paramsBefore009(task: RetryTask): unknown[] {
  const params = paramsBefore010(task);
  params[TASK_COLUMN_NAMES.indexOf('target_url')] = task.targetUrl;
  return params;
}

/** A task's INSERT parameters as the tables before 008 took them: the task id as its text, the URL whole. */
function paramsBefore008(task: RetryTask): unknown[] {
  // Any id the tables before 008 held, even one 008 refuses: it is put in as text, not through the BLOB's check.
  const params = paramsBefore009({ ...task, taskId: randomUUID() });
  params[TASK_COLUMN_NAMES.indexOf('task_id')] = task.taskId;
  return params;
}

/** A task's INSERT parameters as the tables before 006 took them: the request hash and the task id as their text. */
function paramsBefore006(task: RetryTask): unknown[] {
  // Any hash the tables before 006 held, even one 006 refuses: it is put in as text, not through the BLOB's check.
  const params = paramsBefore008({ ...task, requestHash: '00' });
  params[TASK_COLUMN_NAMES.indexOf('request_hash')] = task.requestHash;
  return params;
}

describe('migrating a database made by 001', () => {
  /** Rows as 001 stored them: every task column but the ones 002 added. */
  function insertAs001(db: Database.Database, tasks: readonly RetryTask[]): void {
    // target_key came with 002, sensitive_body with 004.
    const kept = COLUMNS_BEFORE_011.filter(([column]) => column !== 'target_key' && column !== 'sensitive_body');
    const insert = db.prepare(`INSERT INTO tasks (${kept.map(([c]) => c).join(', ')}) VALUES (${kept.map(() => '?').join(', ')})`);
    for (const task of tasks) {
      const params = paramsBefore006(task);
      insert.run(...kept.map(([, i]) => params[i]));
    }
  }

  it('gives every task its target key and every target its queue, then claims and reads them as a new store would', async () => {
    const path = freshPath();
    const old = new Database(path);
    migrate(old, loadMigrations().filter((m) => m.version === 1));
    const pendingA = [forTarget(A, { nextAttemptAt: T0 + 5 }), forTarget(A, { nextAttemptAt: T0 + 1 })];
    const pendingB = makeTask({ targetUrl: 'https://b.example.com/x?y=1', nextAttemptAt: T0 + 2 });
    const inFlight = forTarget(C, { status: 'IN_FLIGHT', leaseOwner: 'w0', leaseExpiresAt: T0 + 100, fencingToken: 3, nextAttemptAt: T0 });
    const dead = forTarget('http://[::1]:8080', { status: 'FAILED', nextAttemptAt: null, deadLetterReason: 'permanent_status:400' });
    const done = forTarget(A, { status: 'SUCCEEDED', nextAttemptAt: null });
    const all = [...pendingA, pendingB, inFlight, dead, done];
    insertAs001(old, all);
    old.close();

    await using store = await opened(path);
    for (const task of all) expect(await store.getTask('default', task.taskId)).toEqual(task);
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare('SELECT tenant_id, target_key, next_due_at, held_until FROM target_queues ORDER BY target_key').all()).toEqual([
      { tenant_id: 'default', target_key: 'http://[::1]:8080', next_due_at: null, held_until: null },
      { tenant_id: 'default', target_key: A, next_due_at: T0 + 1, held_until: null },
      { tenant_id: 'default', target_key: B, next_due_at: T0 + 2, held_until: null },
      { tenant_id: 'default', target_key: C, next_due_at: null, held_until: null },
    ]);
    expect(plan(raw, SELECT_DUE, [A, 1, T0, 10])).toMatch(/tasks_due \(queue_id=\? AND next_attempt_at<\?\)/);
    raw.close();

    expect(await store.nextDueAt()).toBe(T0 + 1);
    const claims = await store.claimDue(T0 + 10, { ...lease, limit: 10 });
    expect(claims.map((t) => t.taskId)).toEqual([pendingA[1], pendingB, pendingA[0]].map((t) => t?.taskId));
    expect(await store.nextDueAt()).toBeNull();
    // A task that was in flight before the migration retries into its queue, and a dead letter replays into its own.
    const retried = await store.completeAttempts(
      [{ tenantId: 'default', taskId: inFlight.taskId, fencingToken: 3, next: retryOutcome(inFlight, T0 + 50) }],
      T0 + 20,
    );
    expect(retried[0]).toMatchObject({ kind: 'applied', status: 'PENDING' });
    const replayed = await store.replayTask(
      { tenantId: 'default', taskId: dead.taskId },
      { expectedVersion: dead.version, runAttemptOffset: 0, runStartedAt: null, nextAttemptAt: T0 + 40, updatedAt: T0 + 40 },
    );
    expect(replayed.kind).toBe('applied');
    expect(await store.nextDueAt()).toBe(T0 + 40);
    expect((await store.claimDue(T0 + 50, { ...lease, limit: 10 })).map((t) => t.targetKey)).toEqual(['http://[::1]:8080', C]);
    expect(await store.admin.countByStatus()).toMatchObject({ PENDING: 0, IN_FLIGHT: 5, SUCCEEDED: 1, FAILED: 0 });
  });
});

describe('migrating a database made by 002', () => {
  it('keeps every queue its hint and hold, adds the limits, and claims and reads them as a new store would', async () => {
    const path = freshPath();
    const old = new Database(path);
    migrate(old, loadMigrations().filter((m) => m.version <= 2));
    // Every task column 002 had: all but sensitive_body (004) and expires_at (011).
    const kept = COLUMNS_BEFORE_011.filter(([column]) => column !== 'sensitive_body');
    const insert = old.prepare(`INSERT INTO tasks (${kept.map(([c]) => c).join(', ')}) VALUES (${kept.map(() => '?').join(', ')})`);
    const insertTask = { run: (...params: unknown[]) => insert.run(...kept.map(([, i]) => params[i])) };
    const insertQueue = old.prepare('INSERT INTO target_queues (tenant_id, target_key, next_due_at, held_until, hold_changed_at) VALUES (?, ?, ?, ?, ?)');
    const dueA = [forTarget(A, { nextAttemptAt: T0 + 1 }), forTarget(A, { nextAttemptAt: T0 + 2 }), forTarget(A, { nextAttemptAt: T0 + 3 })];
    const heldB = forTarget(B, { nextAttemptAt: T0 });
    const inFlightA = forTarget(A, { status: 'IN_FLIGHT', leaseOwner: 'w0', leaseExpiresAt: T0 + 5_000, fencingToken: 2 });
    for (const task of [...dueA, heldB, inFlightA]) insertTask.run(...paramsBefore006(task));
    insertQueue.run('default', A, T0 + 1, null, null);
    insertQueue.run('default', B, T0, T0 + 1_000, T0 - 1);
    insertQueue.run('default', C, null, null, null);
    old.close();

    await using store = await opened(path);
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare('SELECT target_key, next_due_at, held_until, hold_changed_at, ready_at, rate_per_second, max_in_flight, tokens FROM target_queues ORDER BY target_key').all()).toEqual([
      { target_key: A, next_due_at: T0 + 1, held_until: null, hold_changed_at: null, ready_at: T0 + 1, rate_per_second: null, max_in_flight: null, tokens: null },
      { target_key: B, next_due_at: T0, held_until: T0 + 1_000, hold_changed_at: T0 - 1, ready_at: T0 + 1_000, rate_per_second: null, max_in_flight: null, tokens: null },
      { target_key: C, next_due_at: null, held_until: null, hold_changed_at: null, ready_at: null, rate_per_second: null, max_in_flight: null, tokens: null },
    ]);
    expect(raw.prepare("SELECT name FROM sqlite_master WHERE tbl_name = 'target_queues' AND type = 'index' AND name NOT LIKE 'sqlite_%'").all()).toEqual([
      { name: 'target_queues_key' },
      { name: 'target_queues_ready' },
    ]);
    expect(plan(raw, READY_QUEUES, [T0])).toMatch(/^SEARCH target_queues USING INDEX target_queues_ready \(ready_at<\?\)$/);
    raw.close();

    // The old hold still holds B; a limit on A counts the task that was in flight before the migration.
    expect(await store.nextDueAt()).toBe(T0 + 1);
    await store.limitTarget({ tenantId: 'default', targetKey: A }, { ratePerSecond: null, burst: null, maxInFlight: 2 }, T0);
    expect((await store.claimDue(T0 + 10, { ...lease, limit: 10 })).map((t) => t.taskId)).toEqual([dueA[0]?.taskId]);
    expect(await store.admin.getTarget({ tenantId: 'default', targetKey: A }, T0 + 10)).toMatchObject({ inFlight: 2, dueTasks: 2, maxInFlight: 2 });
    expect((await store.admin.listTargets('default', { limit: 10 }, T0 + 10)).items.map((t) => [t.targetKey, t.heldUntil])).toEqual([
      [A, null],
      [B, T0 + 1_000],
      [C, null],
    ]);
    expect((await store.claimDue(T0 + 1_000, { ...lease, limit: 10 })).map((t) => t.taskId)).toEqual([heldB.taskId]);
  });
});

describe('migrating a database made by 005', () => {
  function made005(tasks: readonly RetryTask[]): string {
    const path = freshPath();
    const old = new Database(path);
    migrate(old, loadMigrations().filter((m) => m.version <= 5));
    insertRows(old, tasks, paramsBefore006);
    old.prepare('INSERT INTO target_queues (tenant_id, target_key, next_due_at) VALUES (?, ?, ?)').run('default', A, T0);
    old.close();
    return path;
  }

  it('keeps every request hash as its bytes, reads it back as the same text, and lists by policy without tasks_by_policy', async () => {
    const onPolicy = forTarget(A, { requestHash: `00${'0f'.repeat(30)}a0`, nextAttemptAt: T0 + 1 });
    const inline = forTarget(A, { policyId: null, policy: makePolicy('inline').policy, nextAttemptAt: T0 + 2 });
    const ended = forTarget(A, { status: 'FAILED', nextAttemptAt: null, deadLetterReason: 'permanent_status:400' });
    const path = made005([onPolicy, inline, ended]);

    await using store = await opened(path);
    for (const task of [onPolicy, inline, ended]) expect(await store.getTask('default', task.taskId)).toEqual(task);
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare('SELECT DISTINCT typeof(request_hash) AS type, length(request_hash) AS bytes FROM tasks').all()).toEqual([
      { type: 'blob', bytes: 32 },
    ]);
    expect(raw.prepare("SELECT name FROM sqlite_master WHERE name = 'tasks_by_policy'").all()).toEqual([]);
    raw.close();
    const byPolicy = await store.listTasks({ tenantId: 'default', policyId: 'default', limit: 10 });
    expect(byPolicy.items.map((t) => t.taskId).sort()).toEqual([onPolicy.taskId, ended.taskId].sort());
    // The same request again is a duplicate of the migrated task, its hash compared exactly.
    expect(await store.insertTasks([{ ...onPolicy, taskId: forTarget(A).taskId }])).toEqual([{ kind: 'duplicate', task: onPolicy }]);
  });

  it('refuses, and leaves the database as it was, when a stored hash would not read back as the same text', async () => {
    const path = made005([forTarget(A, { requestHash: 'ABCD' })]);
    await expect(opened(path)).rejects.toThrow(/NOT NULL constraint failed: tasks.request_hash_bytes/);
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare('SELECT max(version) AS version FROM schema_migrations').get()).toEqual({ version: 5 });
    expect(raw.prepare('SELECT request_hash FROM tasks').all()).toEqual([{ request_hash: 'ABCD' }]);
    raw.close();
  });
});

describe('migrating a database made by 006', () => {
  it('keeps one index of the leased tasks: they are listed, counted, limited and reaped as before', async () => {
    const path = freshPath();
    const old = new Database(path);
    migrate(old, loadMigrations().filter((m) => m.version <= 6));
    // Rows as 006 stored them: two tasks in flight for the default tenant (A's lease lapses at T0 + 1,000, B's
    // later), one in flight for another tenant, and B's next task pending.
    const leased = { status: 'IN_FLIGHT', leaseOwner: 'w', fencingToken: 1 } as const;
    const tasks = [
      forTarget(A, { ...leased, createdAt: T0, leaseExpiresAt: T0 + 1_000 }),
      forTarget(B, { ...leased, createdAt: T0 + 1, leaseExpiresAt: T0 + 5_000 }),
      forTarget(A, { ...leased, tenantId: 'other', createdAt: T0, leaseExpiresAt: T0 + 500 }),
      forTarget(B, { createdAt: T0 + 2, nextAttemptAt: T0 + 5 }),
    ];
    insertRows(old, tasks, paramsBefore008);
    const queue = old.prepare('INSERT INTO target_queues (tenant_id, target_key, next_due_at) VALUES (?, ?, ?)');
    queue.run('default', A, null);
    queue.run('default', B, T0 + 5);
    queue.run('other', A, null);
    old.close();

    await using store = await opened(path);
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name IN ('tasks_lease', 'tasks_in_flight')").all()).toEqual([
      { name: 'tasks_in_flight' },
    ]);
    expect(raw.prepare("SELECT name FROM pragma_index_info('tasks_in_flight')").all().map((r) => (r as { name: string }).name)).toEqual([
      // 010 keeps the queue's number for the target key.
      'tenant_id', 'created_at', 'task_id', 'queue_id', 'lease_expires_at',
    ]);
    raw.close();

    const inFlight = await store.listTasks({ tenantId: 'default', status: 'IN_FLIGHT', limit: 10 });
    expect(inFlight.items.map((t) => t.targetKey)).toEqual([B, A]);
    expect((await store.countByStatus('default'))['IN_FLIGHT']).toBe(2);
    expect(await store.nextLeaseExpiryAt()).toBe(T0 + 500);
    expect((await store.findExpiredLeases(T0 + 1_000, 10)).map((t) => [t.tenantId, t.targetKey])).toEqual([
      ['other', A],
      ['default', A],
    ]);
    // B has one task in flight: at a limit of one, its pending task waits; at two, it is claimed.
    await store.limitTarget({ tenantId: 'default', targetKey: B }, { ratePerSecond: null, burst: null, maxInFlight: 1 }, T0 + 10);
    expect(await store.claimDue(T0 + 10, { ...lease, limit: 10 })).toEqual([]);
    await store.limitTarget({ tenantId: 'default', targetKey: B }, { ratePerSecond: null, burst: null, maxInFlight: 2 }, T0 + 11);
    expect((await store.claimDue(T0 + 11, { ...lease, limit: 10 })).map((t) => t.targetKey)).toEqual([B]);
  });
});

describe('migrating a database made by 007', () => {
  function made007(tasks: readonly RetryTask[], attempts: readonly AttemptLog[] = []): string {
    const path = freshPath();
    const old = new Database(path);
    migrate(old, loadMigrations().filter((m) => m.version <= 7));
    insertRows(old, tasks, paramsBefore008);
    insertAttemptRows(old, attempts, ADDED_BY_014, true);
    old.prepare('INSERT INTO target_queues (tenant_id, target_key, next_due_at) VALUES (?, ?, ?)').run('default', A, T0);
    old.close();
    return path;
  }

  it('keeps every task id as its 16 bytes, reads it back as the same text, and keeps listings, claims and attempts', async () => {
    const tasks = tasksToMigrate((overrides) => forTarget(A, overrides));
    const path = made007(tasks.all, [tasks.logged]);

    await using store = await opened(path);
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare('SELECT DISTINCT typeof(task_id) AS type, length(task_id) AS bytes FROM tasks').all()).toEqual([{ type: 'blob', bytes: 16 }]);
    expect(raw.prepare('SELECT DISTINCT typeof(task_id) AS type, length(task_id) AS bytes FROM attempts').all()).toEqual([{ type: 'blob', bytes: 16 }]);
    expect(raw.prepare("SELECT * FROM pragma_foreign_key_list('attempts')").all()).toEqual([]);
    expect(
      raw.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'tasks' AND name NOT LIKE 'sqlite_%' ORDER BY name").all(),
    ).toEqual(['tasks_due', 'tasks_ended', 'tasks_expiry', 'tasks_idempotency_key', 'tasks_in_flight', 'tasks_live', 'tasks_pk'].map((name) => ({ name })));
    raw.close();
    await expectMigratedTaskIds(store, tasks);
    // The same request again is a duplicate of the migrated task, found by its key.
    expect(await insertStoredTasks(store, [{ ...tasks.ended, taskId: forTarget(A).taskId }])).toEqual([{ kind: 'duplicate', task: tasks.ended }]);
  });

  it('refuses, and leaves the database as it was, when a stored task id would not read back as the same text', async () => {
    const odd = forTarget(A, { taskId: 'C0FFEE00-0000-7000-8000-000000000001' });
    const path = made007([odd]);
    await expect(opened(path)).rejects.toThrow(/NOT NULL constraint failed: tasks.task_id_bytes/);
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare('SELECT max(version) AS version FROM schema_migrations').get()).toEqual({ version: 7 });
    expect(raw.prepare('SELECT task_id FROM tasks').all()).toEqual([{ task_id: odd.taskId }]);
    expect(raw.prepare("SELECT count(*) AS n FROM pragma_foreign_key_list('attempts')").get()).toEqual({ n: 2 });
    raw.close();
  });
});

describe('migrating a database made by 008', () => {
  it('keeps each URL after its target key when it begins with it, whole otherwise, and reads every one back whole', async () => {
    const path = freshPath();
    const old = new Database(path);
    migrate(old, loadMigrations().filter((m) => m.version <= 8));
    const tasks = [
      forTarget(A, {}),
      makeTask({ targetUrl: 'https://b.example.com/x?y=1#z', targetKey: 'https://b.example.com' }),
      makeTask({ targetUrl: 'https://b.example.com?only=query', targetKey: 'https://b.example.com' }),
      // Not after its key: the origin with user info, another host that begins with the key, the origin alone.
      makeTask({ targetUrl: 'https://user@b.example.com/x', targetKey: 'https://b.example.com' }),
      makeTask({ targetUrl: 'https://b.example.com.evil.test/x', targetKey: 'https://b.example.com' }),
      makeTask({ targetUrl: 'https://b.example.com', targetKey: 'https://b.example.com' }),
    ];
    insertRows(old, tasks, paramsBefore009);
    old.close();

    await using store = await opened(path);
    for (const task of tasks) expect(await store.getTask('default', task.taskId)).toEqual(task);
    const raw = new Database(path, { readonly: true });
    const stored = raw.prepare('SELECT target_url FROM tasks ORDER BY rowid').all().map((r) => (r as { target_url: string }).target_url);
    raw.close();
    expect(stored).toEqual([
      tasks[0]?.targetUrl.slice(A.length),
      '/x?y=1#z',
      '?only=query',
      'https://user@b.example.com/x',
      'https://b.example.com.evil.test/x',
      'https://b.example.com',
    ]);
    // A task written now is kept the same way.
    const fresh = forTarget(A, {});
    await store.insertTasks([fresh]);
    expect(await store.getTask('default', fresh.taskId)).toEqual(fresh);
  });
});

describe('migrating a database made by 009', () => {
  it('numbers every queue, keeps each task its queue by number and its status by number, and reads, lists and claims as before', async () => {
    const path = freshPath();
    const old = new Database(path);
    migrate(old, loadMigrations().filter((m) => m.version <= 9));
    const tasks = [
      forTarget(A, { nextAttemptAt: T0 + 2 }),
      forTarget(A, { nextAttemptAt: T0 + 1, createdAt: T0 + 1 }),
      forTarget(B, { status: 'IN_FLIGHT', leaseOwner: 'w0', leaseExpiresAt: T0 + 5_000, fencingToken: 2, nextAttemptAt: T0 }),
      forTarget(B, { tenantId: 'other', nextAttemptAt: T0 + 3 }),
      forTarget(C, { status: 'SUCCEEDED', nextAttemptAt: null }),
      forTarget(C, { status: 'FAILED', nextAttemptAt: null, deadLetterReason: 'permanent_status:400' }),
      forTarget(C, { status: 'EXHAUSTED', nextAttemptAt: null }),
      forTarget(C, { status: 'CANCELLED', nextAttemptAt: null }),
      // A target no queue row names (a row stored by hand): its task keeps it, and the queue is made.
      forTarget('https://d.example.com', { nextAttemptAt: T0 + 4 }),
    ];
    insertRows(old, tasks, paramsBefore010);
    const insertQueue = old.prepare(
      `INSERT INTO target_queues (tenant_id, target_key, next_due_at, held_until, hold_changed_at, rate_per_second, burst,
         tokens, tokens_at, max_in_flight, limits_changed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    insertQueue.run('other', B, T0 + 3, null, null, null, null, null, null, null, null);
    insertQueue.run('default', B, null, T0 + 60_000, T0 - 1, 10, 2, 1.5, T0 - 5, 4, T0 - 5);
    insertQueue.run('default', A, T0 + 1, null, null, null, null, null, null, null, null);
    insertQueue.run('default', C, null, null, null, null, null, null, null, null, null);
    old.close();

    await using store = await opened(path);
    for (const task of tasks) expect(await store.getTask(task.tenantId, task.taskId)).toEqual(task);
    const raw = new Database(path, { readonly: true });
    // Numbered in key order, then the queue made for the task without one; gates and limits as they were.
    expect(raw.prepare('SELECT queue_id, tenant_id, target_key, next_due_at, held_until, rate_per_second, tokens, max_in_flight, ready_at FROM target_queues ORDER BY queue_id').all()).toEqual([
      { queue_id: 1, tenant_id: 'default', target_key: A, next_due_at: T0 + 1, held_until: null, rate_per_second: null, tokens: null, max_in_flight: null, ready_at: T0 + 1 },
      { queue_id: 2, tenant_id: 'default', target_key: B, next_due_at: null, held_until: T0 + 60_000, rate_per_second: 10, tokens: 1.5, max_in_flight: 4, ready_at: null },
      { queue_id: 3, tenant_id: 'default', target_key: C, next_due_at: null, held_until: null, rate_per_second: null, tokens: null, max_in_flight: null, ready_at: null },
      { queue_id: 4, tenant_id: 'other', target_key: B, next_due_at: T0 + 3, held_until: null, rate_per_second: null, tokens: null, max_in_flight: null, ready_at: T0 + 3 },
      { queue_id: 5, tenant_id: 'default', target_key: 'https://d.example.com', next_due_at: T0 + 4, held_until: null, rate_per_second: null, tokens: null, max_in_flight: null, ready_at: T0 + 4 },
    ]);
    expect(raw.prepare('SELECT queue_id, status FROM tasks ORDER BY rowid').raw(true).all()).toEqual([
      [1, 0],
      [1, 0],
      [2, 1],
      [4, 0],
      [3, 2],
      [3, 3],
      [3, 4],
      [3, 5],
      [5, 0],
    ]);
    expect(raw.prepare("SELECT name FROM pragma_index_info('tasks_due')").all()).toEqual([{ name: 'queue_id' }, { name: 'next_attempt_at' }]);
    expect(raw.prepare("SELECT sql FROM sqlite_master WHERE name = 'tasks_due'").get()).toEqual({
      sql: 'CREATE INDEX tasks_due ON tasks (queue_id, next_attempt_at) WHERE status = 0',
    });
    expect(raw.prepare("SELECT count(*) AS n FROM pragma_table_info('tasks') WHERE name = 'target_key'").get()).toEqual({ n: 0 });
    raw.close();

    // Counts, listings by status and by target, the views of a target, and claims, as a new store's.
    expect(await store.admin.countByStatus('default')).toEqual({ PENDING: 3, IN_FLIGHT: 1, SUCCEEDED: 1, FAILED: 1, EXHAUSTED: 1, CANCELLED: 1 });
    expect((await store.listTasks({ tenantId: 'default', targetKey: C, limit: 10 })).items.map((t) => t.status).sort()).toEqual([
      'CANCELLED',
      'EXHAUSTED',
      'FAILED',
      'SUCCEEDED',
    ]);
    expect((await store.listTasks({ tenantId: 'default', status: 'IN_FLIGHT', limit: 10 })).items.map((t) => t.taskId)).toEqual([tasks[2]?.taskId]);
    expect(await store.admin.getTarget({ tenantId: 'default', targetKey: B }, T0)).toMatchObject({ inFlight: 1, maxInFlight: 4, heldUntil: T0 + 60_000 });
    const claimed = (await store.claimDue(T0 + 10, { ...lease, limit: 10 })).map((t) => t.taskId);
    expect(claimed.sort()).toEqual([tasks[0], tasks[1], tasks[3], tasks[8]].map((t) => t?.taskId).sort());
    // A task written now joins its queue by number: D's queue keeps 5, a new target gets 6.
    const fresh = [forTarget('https://d.example.com', { nextAttemptAt: T0 + 20 }), forTarget('https://e.example.com', { nextAttemptAt: T0 + 20 })];
    await store.insertTasks(fresh);
    for (const task of fresh) expect(await store.getTask('default', task.taskId)).toEqual(task);
    const after = new Database(path, { readonly: true });
    expect(after.prepare('SELECT queue_id FROM tasks ORDER BY rowid DESC LIMIT 2').raw(true).all()).toEqual([[6], [5]]);
    after.close();
  });
});

describe('migrating a database made by 010', () => {
  it('adds expires_at and its index, keeps the tasks that ended before for good, and leaves the file its auto_vacuum mode', async () => {
    const path = freshPath();
    const old = new Database(path);
    migrate(old, loadMigrations().filter((m) => m.version <= 10));
    old.prepare('INSERT INTO target_queues (tenant_id, target_key, next_due_at) VALUES (?, ?, ?)').run('default', A, T0);
    const pending = forTarget(A, { nextAttemptAt: T0 });
    const ended = forTarget(A, { status: 'SUCCEEDED', nextAttemptAt: null, attemptNumber: 1 });
    // Rows as 010 stored them: every column of today's but expires_at (and those of 012).
    insertStoredRows(old, [pending, ended], ['expires_at', ...ADDED_BY_012, ...ADDED_BY_013]);
    old.close();

    await using store = await opened(path);
    expect(store.describeSettings().autoVacuum).toBe('NONE');
    for (const task of [pending, ended]) expect(await store.getTask('default', task.taskId)).toEqual(task);
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare("SELECT sql FROM sqlite_master WHERE name = 'tasks_expiry'").get()).toEqual({
      sql: 'CREATE INDEX tasks_expiry ON tasks (expires_at) WHERE expires_at IS NOT NULL',
    });
    raw.close();

    // The task that ended before has no time: it is kept until deleted by hand. One that ends now gets its time.
    expect(await store.purgeExpired(T0 + 10 * 365 * 86_400_000, 10)).toEqual([]);
    const [held] = await store.claimDue(T0, { ...lease, limit: 1 });
    if (held === undefined) throw new Error('expected a claim');
    const next = { ...finalOutcome(held, 'SUCCEEDED'), expiresAt: T0 + 100 };
    await store.completeAttempts([{ tenantId: 'default', taskId: held.taskId, fencingToken: held.fencingToken, next }], T0 + 1);
    expect((await store.purgeExpired(T0 + 100, 10)).map((t) => t.taskId)).toEqual([pending.taskId]);
    expect(await store.getTask('default', ended.taskId)).toEqual(ended);
  });
});

describe('migrating a database made by 011', () => {
  it("adds a task's own timeouts: null for every task stored before, kept for the tasks stored after, bounded by CHECKs", async () => {
    const path = freshPath();
    const old = new Database(path);
    migrate(old, loadMigrations().filter((m) => m.version <= 11));
    old.prepare('INSERT INTO target_queues (tenant_id, target_key, next_due_at) VALUES (?, ?, ?)').run('default', A, T0);
    const before = forTarget(A, { nextAttemptAt: T0 });
    // A row as 011 stored it: every column of today's but the timeouts.
    insertStoredRows(old, [before], [...ADDED_BY_012, ...ADDED_BY_013]);
    old.close();

    await using store = await opened(path);
    expect(await store.getTask('default', before.taskId)).toEqual({ ...before, attemptTimeoutMs: null, connectTimeoutMs: null });
    const after = forTarget(A, { nextAttemptAt: T0, attemptTimeoutMs: 1_800_000, connectTimeoutMs: 1 });
    await store.insertTasks([after]);
    expect(await store.getTask('default', after.taskId)).toEqual(after);
    const raw = new Database(path);
    for (const [column, value] of [['attempt_timeout_ms', 0], ['connect_timeout_ms', 1_800_001]] as const) {
      expect(() => raw.prepare(`UPDATE tasks SET ${column} = ? WHERE rowid = 1`).run(value), column).toThrow(/CHECK constraint failed/);
    }
    raw.close();
  });
});

describe('migrating a database made by 012', () => {
  it('adds a task callback, null for every task stored before, and owes the callback of a task that ends with one', async () => {
    const path = freshPath();
    const old = new Database(path);
    migrate(old, loadMigrations().filter((m) => m.version <= 12));
    old.prepare('INSERT INTO target_queues (tenant_id, target_key, next_due_at) VALUES (?, ?, ?)').run('default', A, T0);
    const before = forTarget(A, { nextAttemptAt: T0 });
    // A row as 012 stored it: every column of today's but the callback.
    insertStoredRows(old, [before], ADDED_BY_013);
    old.close();

    await using store = await opened(path);
    expect(await store.getTask('default', before.taskId)).toEqual({ ...before, callback: null });
    const callback = { url: 'https://caller.example.com/ended', on: ['succeeded' as const], policyId: null };
    const after = forTarget(A, { nextAttemptAt: T0, callback });
    await store.insertTasks([after]);
    expect(await store.getTask('default', after.taskId)).toEqual(after);
    for (const task of [before, after]) await store.cancelTask({ tenantId: 'default', taskId: task.taskId }, T0 + 5, T0 + 10);
    expect(await store.callbacks.owed(10)).toEqual([{ tenantId: 'default', taskId: after.taskId, owedAt: T0 + 5 }]);
  });
});

describe('migrating a database made by 013', () => {
  it("adds a retry's delay to the attempt log: null in every entry stored before, kept in the entries logged after", async () => {
    const path = freshPath();
    const old = new Database(path);
    migrate(old, loadMigrations().filter((m) => m.version <= 13));
    old.prepare('INSERT INTO target_queues (tenant_id, target_key, next_due_at) VALUES (?, ?, ?)').run('default', A, T0);
    const task = forTarget(A, { nextAttemptAt: T0, attemptNumber: 1 });
    insertStoredRows(old, [task], []);
    // Its first attempt, as 013 stored it: every column of today's but the delay's.
    const logged = makeAttempt(task, { attemptNumber: 1 });
    insertAttemptRows(old, [logged], ADDED_BY_014);
    old.close();

    await using store = await opened(path);
    expect((await store.listAttempts('default', task.taskId, { limit: 10 })).items).toEqual([logged]);
    const [claimed] = await store.claimDue(T0, { ...lease, limit: 1 });
    if (claimed === undefined) throw new Error('expected the task to be claimed');
    const delayed = makeAttempt(claimed, { delayedBy: 'retry_budget', backoffAt: T0 + 1_000, nextAttemptAt: T0 + 2_500 });
    const ref = { tenantId: 'default', taskId: task.taskId, fencingToken: claimed.fencingToken };
    await store.completeAttempts([{ ...ref, attempt: delayed, next: retryOutcome(claimed, T0 + 2_500) }], T0 + 10);
    expect((await store.listAttempts('default', task.taskId, { limit: 10 })).items).toEqual([logged, delayed]);
  });
});

describe('migrating a database made by 014', () => {
  it('copies every API key into a table whose CHECK takes metrics keys, and still refuses an unknown scope', async () => {
    const key = (keyId: string, scope: string, revokedAt: number | null = null) => ({ keyId, tenantId: 'acme', scope, name: `${scope} key`, secretHash: 'cd'.repeat(32), createdAt: T0 + 0.5, revokedAt }) as ApiKeyRecord;
    const path = freshPath();
    const old = new Database(path);
    migrate(old, loadMigrations().filter((m) => m.version <= 14));
    const before = [key('0000000000000001', 'admin'), key('0000000000000002', 'read', T0 + 9)];
    const insert = old.prepare('INSERT INTO api_keys (key_id, tenant_id, scope, name, secret_hash, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
    for (const k of before) insert.run(k.keyId, k.tenantId, k.scope, k.name, k.secretHash, k.createdAt, k.revokedAt);
    expect(() => insert.run('0000000000000009', 'default', 'metrics', 'm', 'cd'.repeat(32), T0, null)).toThrow(/CHECK constraint failed/);
    old.close();

    await using store = await opened(path);
    for (const k of before) expect(await store.access.getApiKey(k.keyId)).toEqual(k);
    expect((await store.access.listApiKeys({ tenantId: 'acme', limit: 10 })).items).toEqual(before);
    expect(await store.access.hasActiveApiKey()).toBe(true);
    const metrics = { ...key('0000000000000003', 'metrics'), tenantId: 'default' };
    expect(await store.access.createApiKey(metrics)).toBe(true);
    expect(await store.access.getApiKey(metrics.keyId)).toEqual(metrics);
    await expect(store.access.createApiKey(key('0000000000000004', 'root'))).rejects.toThrow(/CHECK constraint failed/);
  });
});
