import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { TaskStatus } from '@retryd/core';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_STORE_URL, openStore, parseStoreUrl } from '../src/service/open-store.js';
import { TaskListing } from '../src/backends/sqlite/list-tasks.js';
import { loadMigrations } from '../src/backends/sqlite/migrate.js';
import { SqliteStore } from '../src/backends/sqlite/sqlite-store.js';
import {
  CLAIM_ONE,
  COUNT_BY_STATUS,
  COUNT_BY_STATUS_OF_TENANT,
  FIND_EXPIRED_LEASES,
  NEXT_DUE_AT,
  NEXT_LEASE_EXPIRY_AT,
  SELECT_DUE,
} from '../src/backends/sqlite/statements.js';
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

describe('SqliteStore', () => {
  it('runs durable by default: WAL, synchronous=FULL (2), a busy timeout and foreign keys', async () => {
    const path = freshPath();
    await using store = await opened(path);
    expect(store.describeSettings()).toEqual({
      journalMode: 'wal',
      synchronous: 'FULL',
      busyTimeoutMs: 5000,
      foreignKeys: true,
    });
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
    expect(rows.length).toBeGreaterThan(0);
  });

  it('keeps tasks, attempts, policies and target state across close and reopen', async () => {
    const path = freshPath();
    const task = makeTask();
    const policy = makePolicy('kept');
    const store = await opened(path);
    await store.insertTasks([task]);
    const [held] = await store.claimDue(T0, { limit: 1, leaseMs: 1_000, workerId: 'w' });
    if (held === undefined) throw new Error('expected a claim');
    const attempt = makeAttempt(held);
    const [done] = await store.completeAttempts(
      [{ tenantId: 'default', taskId: task.taskId, fencingToken: held.fencingToken, attempt, next: retryOutcome(held, T0 + 9) }],
      T0 + 5,
    );
    await store.putPolicy(policy, 'create');
    await store.putTargetState('default', 'breaker:x', 0, '{}', T0);
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
    expect(await reopened.getTargetState('default', 'breaker:x')).toEqual({ value: '{}', version: 1, updatedAt: T0 });
  });

  it('refuses a PENDING task without a due time rather than store a task that is never claimed', async () => {
    await using store = await opened();
    await expect(store.insertTasks([makeTask({ nextAttemptAt: null })])).rejects.toThrow(/CHECK constraint/);
  });

  it('never lets two connections on one file claim the same task', async () => {
    const path = freshPath();
    await using a = await opened(path);
    await using b = await opened(path);
    await a.insertTasks(Array.from({ length: 100 }, (_, i) => makeTask({ nextAttemptAt: T0 + i })));
    const claimedIds: string[] = [];
    for (let round = 0; round < 20; round++) {
      for (const store of [a, b]) {
        const claims = await store.claimDue(T0 + 100, { limit: 3, leaseMs: 1_000, workerId: 'w' });
        claimedIds.push(...claims.map((t) => t.taskId));
      }
    }
    expect(claimedIds).toHaveLength(100);
    expect(new Set(claimedIds).size).toBe(100);
  });

  describe('query plans', () => {
    const plan = (db: Database.Database, sql: string, params: Record<string, unknown> | unknown[] = {}) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...(Array.isArray(params) ? params : [params])) as { detail: string }[]).map(
        (r) => r.detail,
      );

    async function planDatabase(populated: boolean): Promise<Database.Database> {
      const path = freshPath();
      const store = await opened(path);
      if (populated) {
        // Mostly finished tasks, as in a long-lived store, then fresh statistics for the planner.
        const tasks = Array.from({ length: 3_000 }, (_, i) =>
          i % 10 === 0 ? makeTask({ nextAttemptAt: T0 + i }) : makeTask({ status: 'SUCCEEDED', nextAttemptAt: null }),
        );
        await store.insertTasks(tasks);
        await store.claimDue(T0 + 500, { limit: 20, leaseMs: 1_000, workerId: 'w' });
      }
      await store.close();
      const db = new Database(path);
      if (populated) db.exec('ANALYZE');
      return db;
    }

    for (const populated of [false, true]) {
      const data = populated ? 'analyzed data' : 'empty';
      it(`claims, due times and leases go through their partial indexes, never a scan (${data})`, async () => {
        const db = await planDatabase(populated);
        const claim = [...plan(db, SELECT_DUE, [T0, 10]), ...plan(db, CLAIM_ONE, ['w', T0, T0, 1])];
        expect(claim.join('\n')).toMatch(/INDEX tasks_due \(next_attempt_at<\?\)/);
        expect(claim.join('\n')).toMatch(/SEARCH tasks USING INTEGER PRIMARY KEY \(rowid=\?\)/);
        for (const [sql, index, params] of [
          [NEXT_DUE_AT, 'tasks_due', {}],
          [FIND_EXPIRED_LEASES, 'tasks_lease', { now: T0, limit: 10 }],
          [NEXT_LEASE_EXPIRY_AT, 'tasks_lease', {}],
        ] as const) {
          const details = plan(db, sql, params);
          expect(details.join('\n')).toContain(`INDEX ${index}`);
          expect(details.join('\n')).not.toMatch(/SCAN tasks(?! USING)|TEMP B-TREE/);
        }
        expect(claim.join('\n')).not.toMatch(/SCAN tasks(?! USING)|TEMP B-TREE/);
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
        const details = plan(db, TaskListing.sql(statuses, byPolicy, withCursor), params).join('\n');
        expect(details, `${statuses.join(',')}`).not.toMatch(/SCAN tasks(?! USING)|TEMP B-TREE/);
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
        expect(details.join('\n')).not.toMatch(/SCAN tasks(?! USING COVERING)|TEMP B-TREE/);
        expect(details.join('\n')).toMatch(/COVERING INDEX tasks_ended/);
      }
      db.close();
    });
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
