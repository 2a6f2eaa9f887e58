import Database from 'better-sqlite3';
import { TaskStatus } from '@retryd/core';
import { afterAll, describe, expect, it } from 'vitest';
import { QueueLowering } from '../src/backends/sqlite/queue-hints.js';
import { READY_QUEUES } from '../src/backends/sqlite/queue-statements.js';
import { CANCEL_TASK, REPLAY_TASK, SELECT_DUE } from '../src/backends/sqlite/statements.js';
import { STATUS_OF_CODE, statusCode, statusIn, statusOfCode } from '../src/backends/sqlite/status-guards.js';
import { T0, makeTask } from './fixtures/tasks.js';
import { A, B, C, forTarget, freshPath, lease, opened, plan, removeTempDir } from './sqlite-harness.js';
import { insertStoredTasks } from './fixtures/stored-tasks.js';

afterAll(removeTempDir);

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
    await insertStoredTasks(store, [forTarget(A, { nextAttemptAt: T0 + 40 }), forTarget(C, { status: 'SUCCEEDED', nextAttemptAt: null })]);
    expect(hints(path)).toContainEqual({ key: A, due: T0 + 10 });
    expect(hints(path)).toContainEqual({ key: C, due: null });
    // Cancelling a queue's earliest task sets its hint to the next one.
    expect((await store.cancelTask({ tenantId: 'default', taskId: a10.taskId }, T0, T0 + 60_000)).kind).toBe('applied');
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
    lowering.add(1, null);
    lowering.add(1, T0 + 5);
    lowering.add(1, T0 + 9);
    lowering.add(3, T0 + 7);
    lowering.add(2, null);
    const written: unknown[] = [];
    lowering.flush((...args) => written.push(args));
    expect(written).toEqual([
      [1, T0 + 5],
      [3, T0 + 7],
      [2, null],
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
    await insertStoredTasks(store, Array.from({ length: 200 }, (_, i) => makeTask({ targetUrl: `https://idle-${i}.example.com/`, status: 'SUCCEEDED', nextAttemptAt: null })));

    const raw = new Database(path);
    raw.exec('ANALYZE');
    // The claim's only way in: ready queues by `ready_at`, up to now. A held queue's entry lies past now.
    // B's queue is the second one seen (A's is the first): its number is 2.
    expect(raw.prepare(READY_QUEUES).raw(true).all(T0 + 10)).toEqual([['default', B, null, null, null, null, null, 2]]);
    expect(plan(raw, READY_QUEUES, [T0 + 10])).toMatch(/^SEARCH target_queues USING INDEX target_queues_ready \(ready_at<\?\)$/);
    expect(plan(raw, SELECT_DUE, [B, 2, T0 + 10, 10])).toMatch(/^SEARCH tasks USING INDEX tasks_due \(queue_id=\? AND next_attempt_at<\?\)$/);
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
    // Each status by its number (see 010-task-keys-as-numbers.sql).
    expect(statusIn(['PENDING'])).toBe(`status = 0`);
    expect(statusIn(['FAILED', 'EXHAUSTED'])).toBe(`status IN (3, 4)`);
    expect(() => statusIn(["PENDING' OR 1=1 --" as TaskStatus])).toThrow(/Unknown task status/);
    expect(CANCEL_TASK).toContain(`status = 0`);
    expect(REPLAY_TASK).toContain(`status IN (3, 4) AND version = @expectedVersion`);
    expect(STATUS_OF_CODE.map(statusCode)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(new Set(STATUS_OF_CODE)).toEqual(new Set(Object.values(TaskStatus)));
    expect(statusOfCode(5)).toBe('CANCELLED');
    expect(() => statusOfCode(6)).toThrow('tasks.status: expected a status number 0 to 5, got 6.');
  });
});
