import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { TaskStatus } from '@retryd/core';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_STORE_URL, openStore, parseStoreUrl } from '../src/service/open-store.js';
import type { RetryTask } from '../src/domain/task.js';
import { TASK_FIELD_NAMES } from '../src/domain/task-fields.js';
import { TASK_COLUMN_NAMES } from '../src/backends/sql/task-columns.js';
import { JsonCache } from '../src/backends/sqlite/json-cache.js';
import { TaskListing } from '../src/backends/sqlite/list-tasks.js';
import { loadMigrations, migrate } from '../src/backends/sqlite/migrate.js';
import { QueueLowering } from '../src/backends/sqlite/queue-hints.js';
import { HOLD_TARGET, LOWER_HINT, READY_QUEUES, READY_TIMES, REFRESH_HINT } from '../src/backends/sqlite/queue-statements.js';
import { SqliteStore } from '../src/backends/sqlite/sqlite-store.js';
import {
  CANCEL_TASK,
  CLAIM_ONE,
  COMPLETE_TO_LIVE,
  HAS_DUE,
  COUNT_BY_STATUS,
  COUNT_BY_STATUS_OF_TENANT,
  FIND_EXPIRED_LEASES,
  NEXT_LEASE_EXPIRY_AT,
  RELEASE_LEASE,
  REPLAY_TASK,
  REQUEST_CANCEL,
  SELECT_DUE,
} from '../src/backends/sqlite/statements.js';
import { statusIn } from '../src/backends/sqlite/status-guards.js';
import { markClaimed, taskFromRow, taskToParams } from '../src/backends/sqlite/task-row.js';
import { T0, makeAttempt, makePolicy, makeTask, retryOutcome } from './fixtures/tasks.js';
import { describeStoreConformance } from './store-conformance.js';

const dir = mkdtempSync(join(tmpdir(), 'retryd-sqlite-'));
const freshPath = () => join(dir, `${randomUUID()}.db`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describeStoreConformance('sqlite (temporary file)', async () => new SqliteStore(freshPath()));

async function opened(path = freshPath(), options = {}): Promise<SqliteStore> {
  const store = new SqliteStore(path, options);
  await store.init();
  return store;
}

const lease = { leaseMs: 1_000, workerId: 'w' };
const A = 'https://a.example.com';
const B = 'https://b.example.com';
const C = 'https://c.example.com';
const forTarget = (origin: string, overrides: Partial<RetryTask> = {}) => makeTask({ targetUrl: `${origin}/hook`, ...overrides });

const plan = (db: Database.Database, sql: string, params: Record<string, unknown> | unknown[] = {}) =>
  (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...(Array.isArray(params) ? params : [params])) as { detail: string }[])
    .map((r) => r.detail)
    .join('\n');
const NO_SCAN = /SCAN (tasks|target_queues)(?! USING)|TEMP B-TREE/;

describe('SqliteStore', () => {
  it('runs durable by default: WAL, synchronous=FULL (2), a busy timeout and foreign keys', async () => {
    const path = freshPath();
    await using store = await opened(path);
    expect(store.describeSettings()).toEqual({ journalMode: 'wal', synchronous: 'FULL', busyTimeoutMs: 5000, foreignKeys: true });
    const raw = new Database(path, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    raw.close();
  });

  it('offers synchronous=NORMAL (1) only when asked', async () => {
    await using store = await opened(freshPath(), { synchronous: 'NORMAL', busyTimeoutMs: 250 });
    expect(store.describeSettings()).toMatchObject({ synchronous: 'NORMAL', busyTimeoutMs: 250 });
  });

  it('applies each migration once, however often it starts', async () => {
    const path = freshPath();
    const store = await opened(path);
    await store.init();
    await store.close();
    await (await opened(path)).close();
    const raw = new Database(path, { readonly: true });
    const rows = raw.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all();
    raw.close();
    expect(rows).toEqual(loadMigrations().map(({ version, name }) => ({ version, name })));
    expect(rows.length).toBeGreaterThan(1);
  });

  it('keeps tasks, attempts, policies, holds and target state across close and reopen', async () => {
    const path = freshPath();
    const task = makeTask();
    const policy = makePolicy('kept');
    const store = await opened(path);
    await store.insertTasks([task, forTarget(B)]);
    const [held] = await store.claimDue(T0, { ...lease, limit: 1 });
    if (held === undefined) throw new Error('expected a claim');
    const attempt = makeAttempt(held);
    const [done] = await store.completeAttempts(
      [{ tenantId: 'default', taskId: task.taskId, fencingToken: held.fencingToken, attempt, next: retryOutcome(held, T0 + 9) }],
      T0 + 5,
    );
    await store.putPolicy(policy, 'create');
    await store.targetState.putTargetState('default', 'breaker:x', 0, '{}', T0);
    await store.holdTarget({ tenantId: 'default', targetKey: B }, T0 + 500, T0);
    await store.close();

    await using reopened = await opened(path);
    expect(await reopened.getTask('default', task.taskId)).toMatchObject({
      status: 'PENDING',
      nextAttemptAt: T0 + 9,
      attemptNumber: 1,
      version: done?.kind === 'applied' ? done.version : -1,
    });
    expect((await reopened.listAttempts('default', task.taskId, { limit: 5 })).items).toEqual([attempt]);
    expect(await reopened.getPolicy('default', 'kept')).toEqual(policy);
    expect(await reopened.targetState.getTargetState('default', 'breaker:x')).toEqual({ value: '{}', version: 1, updatedAt: T0 });
    expect((await reopened.claimDue(T0 + 10, { ...lease, limit: 10 })).map((t) => t.taskId)).toEqual([task.taskId]);
    expect(await reopened.nextDueAt()).toBe(T0 + 500);
  });

  it('refuses a PENDING task without a due time rather than store a task that is never claimed', async () => {
    await using store = await opened();
    await expect(store.insertTasks([makeTask({ nextAttemptAt: null })])).rejects.toThrow(/CHECK constraint/);
  });

  it('never lets two connections on one file claim the same task', async () => {
    const path = freshPath();
    await using a = await opened(path);
    await using b = await opened(path);
    await a.insertTasks(Array.from({ length: 100 }, (_, i) => forTarget([A, B, C][i % 3] as string, { nextAttemptAt: T0 + i })));
    const claimedIds: string[] = [];
    for (let round = 0; round < 20; round++) {
      for (const store of [a, b]) {
        const claims = await store.claimDue(T0 + 100, { ...lease, limit: 3 });
        claimedIds.push(...claims.map((t) => t.taskId));
      }
    }
    expect(claimedIds).toHaveLength(100);
    expect(new Set(claimedIds).size).toBe(100);
  });
});

describe('task rows, derived from the field definitions', () => {
  const rich = makeTask({
    headers: { 'x-a': '1' },
    body: 'with \u0000 inside',
    policy: makePolicy('p').policy,
    policyId: null,
    cancelRequested: true,
    runStartedAt: T0 + 0.25,
    lastError: 'HTTP 503',
    lastResponseStatus: 503,
    traceContext: '00-abc-def-01',
  });

  it('maps a task to INSERT parameters and a row back to the same task, in field order', () => {
    const params = taskToParams(rich);
    expect(params).toHaveLength(TASK_COLUMN_NAMES.length + 1);
    expect(params.at(-1)).toBeNull(); // ended_at of a live task
    expect(taskToParams({ ...rich, status: 'SUCCEEDED' }).at(-1)).toBe(rich.updatedAt);
    expect(params[TASK_COLUMN_NAMES.indexOf('cancel_requested')]).toBe(1);
    const task = taskFromRow(params.slice(0, -1), new JsonCache());
    expect(task).toEqual(rich);
    expect(Object.keys(task)).toEqual(TASK_FIELD_NAMES);
    expect(Object.isFrozen(task.policy)).toBe(true);
  });

  it('marks a claimed row as the claim statement left it', async () => {
    await using store = await opened();
    await store.insertTasks([rich]);
    const [claimed] = await store.claimDue(T0, { ...lease, limit: 1 });
    expect(claimed).toEqual(await store.getTask('default', rich.taskId));
    const row = taskToParams(rich).slice(0, -1);
    markClaimed(row, 'IN_FLIGHT', 'w', T0 + 1_000, T0);
    expect(taskFromRow(row, new JsonCache())).toEqual(claimed);
  });
});

describe('migrating a database made by 001', () => {
  /** Rows as 001 stored them: every task column but the ones 002 added. */
  function insertAs001(db: Database.Database, tasks: readonly RetryTask[]): void {
    const columns = [...TASK_COLUMN_NAMES, 'ended_at'];
    const kept = columns.map((column, i) => [column, i] as const).filter(([column]) => column !== 'target_key');
    const insert = db.prepare(`INSERT INTO tasks (${kept.map(([c]) => c).join(', ')}) VALUES (${kept.map(() => '?').join(', ')})`);
    for (const task of tasks) {
      const params = taskToParams(task);
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
    expect(plan(raw, SELECT_DUE, ['default', A, T0, 10])).toMatch(/tasks_due \(tenant_id=\? AND target_key=\? AND next_attempt_at<\?\)/);
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

describe('target queues', () => {
  const hints = (path: string) => {
    const raw = new Database(path, { readonly: true });
    const rows = raw.prepare('SELECT target_key AS key, next_due_at AS due FROM target_queues ORDER BY target_key').all();
    raw.close();
    return rows;
  };

  it('lowers a queue hint once per call and only when earlier; a cancel, or a claim that finds nothing, sets it exact', async () => {
    const path = freshPath();
    await using store = await opened(path);
    const [a30, a10] = [forTarget(A, { nextAttemptAt: T0 + 30 }), forTarget(A, { nextAttemptAt: T0 + 10 })];
    await store.insertTasks([a30, a10, forTarget(B, { nextAttemptAt: T0 + 20 })]);
    expect(hints(path)).toEqual([
      { key: A, due: T0 + 10 },
      { key: B, due: T0 + 20 },
    ]);
    await store.insertTasks([forTarget(A, { nextAttemptAt: T0 + 40 }), forTarget(C, { status: 'SUCCEEDED', nextAttemptAt: null })]);
    expect(hints(path)).toContainEqual({ key: A, due: T0 + 10 });
    expect(hints(path)).toContainEqual({ key: C, due: null });
    // Cancelling a queue's earliest task sets its hint to the next one.
    expect((await store.cancelTask({ tenantId: 'default', taskId: a10.taskId }, T0)).kind).toBe('applied');
    expect(hints(path)).toContainEqual({ key: A, due: T0 + 30 });
    // A claim that drains a queue leaves its hint early (no write); nextDueAt reads the true heads all the same.
    expect((await store.claimDue(T0 + 25, { ...lease, limit: 10 })).map((t) => t.targetKey)).toEqual([B]);
    expect(hints(path)).toContainEqual({ key: B, due: T0 + 20 });
    expect(await store.nextDueAt()).toBe(T0 + 30);
    // A claim that finds a queue with nothing due sets its hint exact (here: none left); the other queue is not read.
    expect(await store.claimDue(T0 + 26, { ...lease, limit: 10 })).toEqual([]);
    expect(hints(path)).toContainEqual({ key: B, due: null });
    expect(hints(path)).toContainEqual({ key: A, due: T0 + 30 });
    // Several candidates are probed for a due task first: a drained one takes no share and gets its exact hint.
    await store.insertTasks([forTarget(B, { nextAttemptAt: T0 + 27 })]);
    expect((await store.claimDue(T0 + 28, { ...lease, limit: 1 })).map((t) => t.targetKey)).toEqual([B]);
    expect((await store.claimDue(T0 + 50, { ...lease, limit: 2 })).map((t) => t.nextAttemptAt)).toEqual([T0 + 30, T0 + 40]);
    expect(hints(path)).toContainEqual({ key: B, due: null });
    expect(await store.nextDueAt()).toBeNull();
  });

  it('gathers the earliest due time per queue', () => {
    const lowering = new QueueLowering();
    lowering.add('t', A, null);
    lowering.add('t', A, T0 + 5);
    lowering.add('t', A, T0 + 9);
    lowering.add('u', A, T0 + 7);
    lowering.add('t', B, null);
    const written: unknown[] = [];
    lowering.flush((...args) => written.push(args));
    expect(written).toEqual([
      ['t', A, T0 + 5],
      ['t', B, null],
      ['u', A, T0 + 7],
    ]);
    lowering.flush((...args) => written.push(args));
    expect(written).toHaveLength(3);
  });

  it('lets a held target with 100,000 due tasks cost the claims of another target nothing: it is never read', async () => {
    const path = freshPath();
    await using store = await opened(path);
    for (let batch = 0; batch < 10; batch++) {
      await store.insertTasks(Array.from({ length: 10_000 }, (_, i) => forTarget(A, { nextAttemptAt: T0 - 100_000 + batch * 10_000 + i })));
    }
    await store.holdTarget({ tenantId: 'default', targetKey: A }, T0 + 60_000, T0);
    const others = Array.from({ length: 5 }, (_, i) => forTarget(B, { nextAttemptAt: T0 + i }));
    await store.insertTasks(others);
    // Targets seen before and idle now: the planner must prefer the index to a walk of every queue.
    await store.insertTasks(Array.from({ length: 200 }, (_, i) => makeTask({ targetUrl: `https://idle-${i}.example.com/`, status: 'SUCCEEDED', nextAttemptAt: null })));

    const raw = new Database(path);
    raw.exec('ANALYZE');
    // The claim's only way in: ready queues by `ready_at`, up to now. A held queue's entry lies past now.
    expect(raw.prepare(READY_QUEUES).raw(true).all(T0 + 10)).toEqual([['default', B]]);
    expect(plan(raw, READY_QUEUES, [T0 + 10])).toMatch(/^SEARCH target_queues USING INDEX target_queues_ready \(ready_at<\?\)$/);
    expect(plan(raw, SELECT_DUE, ['default', B, T0 + 10, 10])).toMatch(
      /^SEARCH tasks USING INDEX tasks_due \(tenant_id=\? AND target_key=\? AND next_attempt_at<\?\)$/,
    );
    raw.close();

    const claims = await store.claimDue(T0 + 10, { ...lease, limit: 10 });
    expect(claims.map((t) => t.taskId)).toEqual(others.map((t) => t.taskId));
    expect(await store.nextDueAt()).toBe(T0 + 60_000);
    expect(await store.admin.countByStatus()).toMatchObject({ PENDING: 100_000, IN_FLIGHT: 5 });
    // The same claim with the backlog released: A's share comes from the head of its queue only.
    await store.releaseTarget({ tenantId: 'default', targetKey: A }, T0 + 11);
    const after = await store.claimDue(T0 + 12, { ...lease, limit: 10 });
    expect(after.map((t) => t.nextAttemptAt)).toEqual(Array.from({ length: 10 }, (_, i) => T0 - 100_000 + i));
  }, 60_000);

  it('builds every status of its SQL from core lifecycle constants', () => {
    expect(statusIn(['PENDING'])).toBe(`status = 'PENDING'`);
    expect(statusIn(['FAILED', 'EXHAUSTED'])).toBe(`status IN ('FAILED', 'EXHAUSTED')`);
    expect(() => statusIn(["PENDING' OR 1=1 --" as TaskStatus])).toThrow(/Unknown task status/);
    expect(CANCEL_TASK).toContain(`status = 'PENDING'`);
    expect(REPLAY_TASK).toContain(`status IN ('FAILED', 'EXHAUSTED') AND version = @expectedVersion`);
  });
});

describe('query plans', () => {
  async function planDatabase(populated: boolean): Promise<Database.Database> {
    const path = freshPath();
    const store = await opened(path);
    if (populated) {
      // Mostly finished tasks over a few targets, as in a long-lived store, then fresh statistics for the planner.
      const tasks = Array.from({ length: 3_000 }, (_, i) =>
        forTarget([A, B, C][i % 3] as string, i % 10 === 0 ? { nextAttemptAt: T0 + i } : { status: 'SUCCEEDED', nextAttemptAt: null }),
      );
      await store.insertTasks(tasks);
      await store.claimDue(T0 + 500, { ...lease, limit: 20 });
      await store.holdTarget({ tenantId: 'default', targetKey: C }, T0 + 1_000, T0);
    }
    await store.close();
    const db = new Database(path);
    if (populated) db.exec('ANALYZE');
    return db;
  }

  for (const populated of [false, true]) {
    const data = populated ? 'analyzed data' : 'empty';
    it(`claims, due times, hints, transitions and leases go through their indexes, never a scan (${data})`, async () => {
      const db = await planDatabase(populated);
      const key = { tenantId: 'default', taskId: 'x', now: T0 };
      const replay = { expectedVersion: 1, runAttemptOffset: 0, runStartedAt: null, nextAttemptAt: T0, updatedAt: T0 };
      const cases: [string, Record<string, unknown> | unknown[], RegExp][] = [
        [READY_QUEUES, [T0], /INDEX target_queues_ready \(ready_at<\?\)/],
        [READY_TIMES, [], /SEARCH q USING INDEX target_queues_ready[\s\S]*INDEX tasks_due \(tenant_id=\? AND target_key=\?\)/],
        [SELECT_DUE, ['default', A, T0, 10], /INDEX tasks_due \(tenant_id=\? AND target_key=\? AND next_attempt_at<\?\)/],
        [HAS_DUE, ['default', A, T0], /COVERING INDEX tasks_due \(tenant_id=\? AND target_key=\? AND next_attempt_at<\?\)/],
        [CLAIM_ONE, ['w', T0, T0, 1], /SEARCH tasks USING INTEGER PRIMARY KEY \(rowid=\?\)/],
        [REFRESH_HINT, ['default', A, 'default', A], /INDEX tasks_due \(tenant_id=\? AND target_key=\?\)/],
        [LOWER_HINT, ['default', A, T0], /^$|PRIMARY KEY/],
        [HOLD_TARGET, ['default', A, T0, T0], /^$|PRIMARY KEY/],
        [CANCEL_TASK, key, /INDEX tasks_pk \(tenant_id=\? AND task_id=\?\)/],
        [REQUEST_CANCEL, key, /INDEX tasks_pk \(tenant_id=\? AND task_id=\?\)/],
        [REPLAY_TASK, { ...replay, tenantId: 'default', taskId: 'x' }, /INDEX tasks_pk \(tenant_id=\? AND task_id=\?\)/],
        [RELEASE_LEASE, { ...key, fencingToken: 1 }, /INDEX tasks_pk \(tenant_id=\? AND task_id=\?\)/],
        [COMPLETE_TO_LIVE, ['PENDING', 1, T0, T0, 1, null, null, null, T0, 'default', 'x', 1, null, null, null, null], /INDEX tasks_pk/],
        [FIND_EXPIRED_LEASES, { now: T0, limit: 10 }, /INDEX tasks_lease/],
        [NEXT_LEASE_EXPIRY_AT, {}, /INDEX tasks_lease/],
      ];
      for (const [sql, params, index] of cases) {
        const details = plan(db, sql, params);
        expect(details, sql).toMatch(index);
        expect(details, sql).not.toMatch(NO_SCAN);
      }
      expect(plan(db, REFRESH_HINT, ['default', A, 'default', A])).toMatch(/SEARCH target_queues USING PRIMARY KEY/);
      db.close();
    });
  }

  it('lists pages from the listing indexes without sorting the table', async () => {
    const db = await planDatabase(true);
    const shapes: [TaskStatus[], boolean, boolean, RegExp[]][] = [
      [[], false, false, [/tasks_live/, /tasks_ended/]],
      [['PENDING'], false, true, [/tasks_live/]],
      [['IN_FLIGHT'], false, true, [/tasks_in_flight/]],
      [['FAILED', 'EXHAUSTED'], false, true, [/tasks_ended \(tenant_id=\? AND status=\?/]],
      [['PENDING', 'IN_FLIGHT', 'CANCELLED'], false, false, [/tasks_live/, /tasks_ended/]],
      [['SUCCEEDED'], true, true, []],
      [[], true, false, [/tasks_by_policy/]],
    ];
    for (const [statuses, byPolicy, withCursor, indexes] of shapes) {
      const params: Record<string, unknown> = { tenantId: 'default', limit: 10 };
      if (byPolicy) params['policyId'] = 'default';
      if (withCursor) Object.assign(params, { afterCreatedAt: T0, afterTaskId: 'x' });
      const details = plan(db, TaskListing.sql(statuses, byPolicy, withCursor), params);
      expect(details, `${statuses.join(',')}`).not.toMatch(NO_SCAN);
      for (const index of indexes) expect(details, `${statuses.join(',')}`).toMatch(index);
    }
    expect(() => TaskListing.sql(['DONE' as TaskStatus], false, false)).toThrow(/Unknown task status "DONE"/);
    db.close();
  });

  it('counts by status from the listing indexes alone', async () => {
    const db = await planDatabase(true);
    for (const [sql, params] of [
      [COUNT_BY_STATUS_OF_TENANT, { tenantId: 'default' }],
      [COUNT_BY_STATUS, {}],
    ] as const) {
      const details = plan(db, sql, params);
      expect(details).not.toMatch(/SCAN tasks(?! USING COVERING)|TEMP B-TREE/);
      expect(details).toMatch(/COVERING INDEX tasks_ended/);
    }
    db.close();
  });
});

describe('openStore', () => {
  it('parses the accepted --store forms', () => {
    expect(parseStoreUrl('sqlite::memory:')).toEqual({ kind: 'sqlite', path: ':memory:' });
    expect(parseStoreUrl('sqlite:/var/lib/retryd/retryd.db')).toEqual({ kind: 'sqlite', path: '/var/lib/retryd/retryd.db' });
    expect(parseStoreUrl(DEFAULT_STORE_URL)).toEqual({ kind: 'sqlite', path: join(process.cwd(), 'retryd.db') });
  });

  it('names --store and the accepted forms when it cannot open a URL', () => {
    for (const url of ['', 'retryd.db', 'sqlite:', 'sqlite://x.db', 'mysql://localhost/db', 'sqlite:./dir/']) {
      expect(() => parseStoreUrl(url)).toThrow(/`--store`.*sqlite:\.\/retryd\.db.*sqlite::memory:/);
    }
    expect(parseStoreUrl('postgres://localhost/retryd')).toEqual({ kind: 'postgres', url: 'postgres://localhost/retryd' });
    expect(parseStoreUrl('postgresql://h/db')).toEqual({ kind: 'postgres', url: 'postgresql://h/db' });
    expect(parseStoreUrl('redis://localhost:6379')).toEqual({ kind: 'redis', url: 'redis://localhost:6379' });
  });

  it('creates the database directory and puts blobs beside the file', async () => {
    const path = join(dir, randomUUID(), 'nested', 'retryd.db');
    const { store, blobs } = await openStore(`sqlite:${path}`);
    try {
      expect(existsSync(path)).toBe(true);
      expect(store.kind).toBe('sqlite');
      await store.ping();
      const ref = await blobs.put('default', 'body-1', 'large');
      expect(existsSync(join(`${path}.blobs`, 'default', 'body-1'))).toBe(true);
      expect((await blobs.get(ref)).toString()).toBe('large');
    } finally {
      await store.close();
    }
  });

  it('opens an in-memory store for tests', async () => {
    const blobDir = join(dir, randomUUID());
    const { store } = await openStore('sqlite::memory:', { blobDir });
    try {
      expect(await store.insertTasks([makeTask()])).toHaveLength(1);
      expect(existsSync(blobDir)).toBe(true);
    } finally {
      await store.close();
    }
  });
});
