import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { RetryTask } from '../src/domain/task.js';
import { PURGE_VACUUM_PAGES } from '../src/backends/sqlite/purge-expired.js';
import { T0, finalOutcome, makeAttempt, makeTask, retryOutcome } from './fixtures/tasks.js';
import { freshPath, lease, opened, removeTempDir } from './sqlite-harness.js';
import { insertStoredTasks } from './fixtures/stored-tasks.js';

// The SQLite store's side of retention that the conformance suite cannot see: the file's auto_vacuum mode, the pages
// a purge gives back, and the CHECK that keeps a live task out of the purge's reach. (The purge's query plan is in
// sqlite-query-plans, the migration of a database made by 010 in sqlite-migration.)

afterAll(removeTempDir);

/** A PRAGMA's value as another connection on `path` reads it (what is committed). */
function pragmaOf(path: string, name: string): number {
  const raw = new Database(path, { readonly: true });
  try {
    return Number(raw.pragma(name, { simple: true }));
  } finally {
    raw.close();
  }
}

/** `count` SUCCEEDED tasks with bodies of `bodyBytes`, deleted at `T0 + i`. */
const expiring = (count: number, bodyBytes: number): RetryTask[] =>
  Array.from({ length: count }, (_, i) =>
    makeTask({ status: 'SUCCEEDED', nextAttemptAt: null, attemptNumber: 1, body: 'x'.repeat(bodyBytes), expiresAt: T0 + i }),
  );

describe('SQLite retention', () => {
  it('creates a new database in auto_vacuum = INCREMENTAL mode', async () => {
    const path = freshPath();
    await using store = await opened(path);
    expect(store.describeSettings().autoVacuum).toBe('INCREMENTAL');
    expect(pragmaOf(path, 'auto_vacuum')).toBe(2);
  });

  it('gives freed pages back after each purge batch, at most PURGE_VACUUM_PAGES a batch, until none are left', async () => {
    const path = freshPath();
    await using store = await opened(path);
    // About three pages of body each: far more freed pages than one batch gives back.
    await insertStoredTasks(store, expiring(600, 10_000));
    await store.insertTasks([makeTask()]);
    const before = pragmaOf(path, 'page_count');

    expect(await store.purgeExpired(T0 + 1_000, 1_000)).toHaveLength(600);
    const free = pragmaOf(path, 'freelist_count');
    expect(free).toBeGreaterThan(PURGE_VACUUM_PAGES);
    expect(before - pragmaOf(path, 'page_count')).toBeGreaterThanOrEqual(PURGE_VACUUM_PAGES);
    // Batches that find nothing to delete still give pages back, a bounded number each.
    for (let batch = 0; batch < Math.ceil(free / PURGE_VACUUM_PAGES) + 1; batch++) {
      const left = pragmaOf(path, 'freelist_count');
      expect(await store.purgeExpired(T0 + 1_000, 1_000)).toEqual([]);
      expect(left - pragmaOf(path, 'freelist_count')).toBeLessThanOrEqual(PURGE_VACUUM_PAGES);
    }
    expect(pragmaOf(path, 'freelist_count')).toBe(0);
    // The bodies' pages are gone from the file, and the live task is still there.
    expect(before - pragmaOf(path, 'page_count')).toBeGreaterThan(1_500);
    expect(await store.admin.countByStatus()).toMatchObject({ PENDING: 1, SUCCEEDED: 0 });
  });

  it('leaves an existing database in the mode it has: purges delete, and the freed pages stay for new rows', async () => {
    const path = freshPath();
    const old = new Database(path);
    old.exec('CREATE TABLE made_before (x INTEGER)');
    old.close();
    await using store = await opened(path);
    expect(store.describeSettings().autoVacuum).toBe('NONE');
    await insertStoredTasks(store, expiring(200, 10_000));
    const before = pragmaOf(path, 'page_count');
    expect(await store.purgeExpired(T0 + 1_000, 500)).toHaveLength(200);
    expect(pragmaOf(path, 'page_count')).toBe(before);
    expect(pragmaOf(path, 'freelist_count')).toBeGreaterThan(400);
    expect(pragmaOf(path, 'auto_vacuum')).toBe(0);
    // New rows take the free pages rather than grow the file.
    await insertStoredTasks(store, expiring(100, 10_000).map((t) => ({ ...t, expiresAt: null })));
    expect(pragmaOf(path, 'page_count')).toBe(before);
  });

  it('refuses a live task with an expiresAt, which the purge would delete under its worker', async () => {
    await using store = await opened();
    await expect(store.insertTasks([makeTask({ expiresAt: T0 + 1 })])).rejects.toThrow(/CHECK constraint/);
    const task = makeTask();
    await store.insertTasks([task]);
    const [held] = await store.claimDue(T0, { ...lease, limit: 1 });
    if (held === undefined) throw new Error('expected a claim');
    const completion = { tenantId: 'default', taskId: task.taskId, fencingToken: held.fencingToken, attempt: makeAttempt(held) };
    await expect(store.completeAttempts([{ ...completion, next: retryOutcome(held, T0 + 9, { expiresAt: T0 + 1 }) }], T0 + 5)).rejects.toThrow(
      /CHECK constraint/,
    );
    // Nothing of the refused batch was applied; the same completion with a final outcome is.
    expect((await store.getTask('default', task.taskId))?.status).toBe('IN_FLIGHT');
    const done = { ...finalOutcome(held, 'SUCCEEDED'), expiresAt: T0 + 1 };
    expect((await store.completeAttempts([{ ...completion, next: done }], T0 + 5))[0]).toMatchObject({ kind: 'applied', status: 'SUCCEEDED' });
    expect(await store.purgeExpired(T0 + 1, 10)).toEqual([{ tenantId: 'default', taskId: task.taskId, status: 'SUCCEEDED', bodyRef: null }]);
  });
});
