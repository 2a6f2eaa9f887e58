import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { RetryTask } from '../src/domain/task.js';
import { TASK_COLUMN_NAMES } from '../src/backends/sql/task-columns.js';
import { loadMigrations, migrate } from '../src/backends/sqlite/migrate.js';
import { SELECT_DUE } from '../src/backends/sqlite/statements.js';
import { taskToParams } from '../src/backends/sqlite/task-row.js';
import { T0, makeTask, retryOutcome } from './fixtures/tasks.js';
import { A, B, C, forTarget, freshPath, lease, opened, plan, removeTempDir } from './sqlite-harness.js';

afterAll(removeTempDir);

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
