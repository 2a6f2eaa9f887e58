import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_STORE_URL, openStore, parseStoreUrl } from '../src/service/open-store.js';
import { TASK_FIELD_NAMES } from '../src/domain/task-fields.js';
import { TASK_COLUMN_NAMES } from '../src/backends/sql/task-columns.js';
import { JsonCache } from '../src/store/json-cache.js';
import { loadMigrations } from '../src/backends/sqlite/migrate.js';
import { SqliteStore } from '../src/backends/sqlite/sqlite-store.js';
import { markClaimed, taskFromRow, taskToParams, type SqlValue } from '../src/backends/sqlite/task-row.js';
import { STATUS_CODES } from '../src/backends/sqlite/status-guards.js';
import { T0, makeAttempt, makePolicy, makeTask, retryOutcome } from './fixtures/tasks.js';
import { describeStoreConformance } from './store-conformance.js';
import { A, B, C, forTarget, freshPath, lease, opened, removeTempDir, tempDir } from './sqlite-harness.js';

// The SQLite store: the conformance suite, its settings and files, its task rows, and opening it by URL. Its target
// queues, the migration of older databases and its query plans have files of their own: sqlite-target-queues,
// sqlite-migration, sqlite-query-plans.

afterAll(removeTempDir);

describeStoreConformance('sqlite (temporary file)', async () => new SqliteStore(freshPath()));

describe('SqliteStore', () => {
  it('runs durable by default: WAL, synchronous=FULL (2), a busy timeout and foreign keys', async () => {
    const path = freshPath();
    await using store = await opened(path);
    expect(store.describeSettings()).toEqual({
      journalMode: 'wal',
      synchronous: 'FULL',
      busyTimeoutMs: 5000,
      foreignKeys: true,
      cacheSizeKiB: 16384,
      autoVacuum: 'INCREMENTAL',
      // The checkpointer's worker copies the WAL back; the commits' own checkpoint is its backstop, at 4 × 4,000 pages.
      walAutocheckpointPages: 16_000,
    });
    const raw = new Database(path, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    raw.close();
  });

  it('offers synchronous=NORMAL (1) only when asked, and the page cache it is given', async () => {
    await using store = await opened(freshPath(), { synchronous: 'NORMAL', busyTimeoutMs: 250, cacheSizeKiB: 2048 });
    expect(store.describeSettings()).toMatchObject({ synchronous: 'NORMAL', busyTimeoutMs: 250, cacheSizeKiB: 2048 });
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

  /**
   * INSERT parameters as a read returns them (TASK_READ_COLUMNS): a BLOB (a digest, a task id) as its hex text, and
   * the target key, read through the queue whose number the row keeps.
   */
  const asRead = (params: SqlValue[], targetKey: string): SqlValue[] =>
    params.map((value, i) => (i === TASK_COLUMN_NAMES.indexOf('target_key') ? targetKey : Buffer.isBuffer(value) ? value.toString('hex') : value));

  it('reads the request hash back as the lower-case hex text it was written from', async () => {
    await using store = await opened();
    const hashed = { ...rich, taskId: randomUUID(), idempotencyKey: 'hashed', requestHash: 'c0ffee'.padEnd(64, '9a') };
    await store.insertTasks([hashed]);
    expect((await store.getTask('default', hashed.taskId))?.requestHash).toBe(hashed.requestHash);
    const [claimed] = await store.claimDue(T0, { ...lease, limit: 1 });
    expect(claimed?.requestHash).toBe(hashed.requestHash);
  });

  it('maps a task to INSERT parameters and a row back to the same task, in field order', () => {
    const params = taskToParams(rich, 7);
    expect(params).toHaveLength(TASK_COLUMN_NAMES.length + 1);
    expect(params.at(-1)).toBeNull(); // ended_at of a live task
    expect(taskToParams({ ...rich, status: 'SUCCEEDED' }, 7).at(-1)).toBe(rich.updatedAt);
    expect(params[TASK_COLUMN_NAMES.indexOf('cancel_requested')]).toBe(1);
    // The row keeps its queue's number for the target key, and the status's number for its name.
    expect(params[TASK_COLUMN_NAMES.indexOf('target_key')]).toBe(7);
    expect(params[TASK_COLUMN_NAMES.indexOf('status')]).toBe(STATUS_CODES[rich.status]);
    expect(taskToParams({ ...rich, status: 'SUCCEEDED' }, 7)[TASK_COLUMN_NAMES.indexOf('status')]).toBe(2);
    const task = taskFromRow(asRead(params.slice(0, -1), rich.targetKey), new JsonCache());
    expect(task).toEqual(rich);
    expect(Object.keys(task)).toEqual(TASK_FIELD_NAMES);
    expect(Object.isFrozen(task.policy)).toBe(true);
  });

  it('marks a claimed row as the claim statement left it', async () => {
    await using store = await opened();
    await store.insertTasks([rich]);
    const [claimed] = await store.claimDue(T0, { ...lease, limit: 1 });
    expect(claimed).toEqual(await store.getTask('default', rich.taskId));
    const row = asRead(taskToParams(rich, 1).slice(0, -1), rich.targetKey);
    markClaimed(row, 'IN_FLIGHT', 'w', T0 + 1_000, T0);
    expect(taskFromRow(row, new JsonCache())).toEqual(claimed);
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
    const path = join(tempDir, randomUUID(), 'nested', 'retryd.db');
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
    const blobDir = join(tempDir, randomUUID());
    const { store } = await openStore('sqlite::memory:', { blobDir });
    try {
      expect(await store.insertTasks([makeTask()])).toHaveLength(1);
      expect(existsSync(blobDir)).toBe(true);
    } finally {
      await store.close();
    }
  });
});
