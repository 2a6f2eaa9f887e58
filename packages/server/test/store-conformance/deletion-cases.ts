import { expect, it } from 'vitest';
import type { TaskStatus } from '@retryd/core';
import type { RetryTask } from '../../src/domain/task.js';
import type { ListedTask, PurgedTask } from '../../src/store/store.js';
import { T0, finalOutcome, makeAttempt, makeTask } from '../fixtures/tasks.js';
import type { CurrentStore } from './helpers.js';
import { claimed, insertAllStored } from './helpers.js';

/** A task that ended in `status` (inserted as such: the store takes any status at insert). */
const ended = (status: TaskStatus, overrides: Partial<RetryTask> = {}) =>
  makeTask({ status, nextAttemptAt: null, attemptNumber: 1, updatedAt: T0 + 1, expiresAt: null, ...overrides });
const listed = (task: RetryTask): ListedTask => ({ taskId: task.taskId, version: task.version });
const purgedOf = (task: RetryTask): PurgedTask => ({ tenantId: task.tenantId, taskId: task.taskId, status: task.status, bodyRef: task.bodyRef });
const byId = (a: { taskId: string }, b: { taskId: string }) => (a.taskId < b.taskId ? -1 : 1);

export function deletionCases(store: CurrentStore): void {
  it('deletes finished tasks of every finished status at the version listed, and returns them', async () => {
    const tasks = [
      ended('SUCCEEDED'),
      ended('FAILED', { deadLetterReason: 'permanent_status:400' }),
      ended('EXHAUSTED', { deadLetterReason: 'max_attempts', bodyRef: 'default/big-body', body: null }),
      ended('CANCELLED', { expiresAt: T0 + 60_000 }),
    ];
    const kept = ended('SUCCEEDED');
    await insertAllStored(store(), [...tasks, kept]);

    const deleted = await store().deleteFinishedTasks('default', tasks.map(listed));
    expect([...deleted].sort(byId)).toEqual(tasks.map(purgedOf).sort(byId));
    for (const task of tasks) expect(await store().getTask('default', task.taskId)).toBeUndefined();
    expect(await store().getTask('default', kept.taskId)).toEqual(kept);
    expect((await store().listTasks({ tenantId: 'default', limit: 100 })).items.map((t) => t.taskId)).toEqual([kept.taskId]);
    expect(await store().admin.countByStatus('default')).toMatchObject({ SUCCEEDED: 1, FAILED: 0, EXHAUSTED: 0, CANCELLED: 0 });
    // The one that had a retention leaves its index too: the purge finds nothing of it later.
    expect(await store().purgeExpired(T0 + 120_000, 10)).toEqual([]);
  });

  it('never deletes a live task, another tenant\'s task, a task at another version, or an id of no task', async () => {
    const pending = makeTask();
    const other = ended('SUCCEEDED', { tenantId: 'tenant-b' });
    const newer = ended('FAILED', { version: 4 });
    await insertAllStored(store(), [pending, other, newer]);
    const running = await claimed(store(), makeTask({ nextAttemptAt: T0 - 1 }), T0 - 1);

    const refs = [listed(pending), listed(running), listed(other), { taskId: newer.taskId, version: 3 }, { taskId: '019abd2e-5f3a-7c41-9e2b-4f0a1c2d3e4f', version: 1 }, { taskId: 'not-a-task-id', version: 1 }];
    expect(await store().deleteFinishedTasks('default', refs)).toEqual([]);
    expect((await store().getTask('default', pending.taskId))?.status).toBe('PENDING');
    expect((await store().getTask('default', running.taskId))?.status).toBe('IN_FLIGHT');
    expect(await store().getTask('tenant-b', other.taskId)).toEqual(other);
    expect(await store().getTask('default', newer.taskId)).toEqual(newer);
    expect(await store().admin.countByStatus()).toMatchObject({ PENDING: 1, IN_FLIGHT: 1, SUCCEEDED: 1, FAILED: 1 });
    expect(await store().deleteFinishedTasks('default', [])).toEqual([]);
  });

  it('leaves a dead letter replayed after it was listed, even once it ended again', async () => {
    const dead = ended('EXHAUSTED', { deadLetterReason: 'max_attempts' });
    await insertAllStored(store(), [dead]);
    const replay = { expectedVersion: dead.version, runAttemptOffset: 1, runStartedAt: T0 + 100, nextAttemptAt: T0 + 100, updatedAt: T0 + 100 };
    expect(await store().replayTask({ tenantId: 'default', taskId: dead.taskId }, replay)).toMatchObject({ kind: 'applied' });
    expect(await store().deleteFinishedTasks('default', [listed(dead)])).toEqual([]);

    // Ended again: finished, but not at the version it was listed at.
    const again = await store().claimDue(T0 + 100, { limit: 1, leaseMs: 1_000, workerId: 'worker-1' });
    const task = again[0] as RetryTask;
    const next = { ...finalOutcome(task, 'SUCCEEDED'), expiresAt: null };
    await store().completeAttempts([{ tenantId: 'default', taskId: task.taskId, fencingToken: task.fencingToken, attempt: makeAttempt(task), next }], T0 + 150);
    expect(await store().deleteFinishedTasks('default', [listed(dead)])).toEqual([]);
    const current = (await store().getTask('default', dead.taskId)) as RetryTask;
    expect(current.status).toBe('SUCCEEDED');
    expect(await store().deleteFinishedTasks('default', [listed(current), listed(current)])).toEqual([purgedOf(current)]);
  });

  it("deletes a task's attempt log with it, and frees its idempotency key for a new task", async () => {
    const task = await claimed(store(), makeTask({ idempotencyKey: 'order-7' }));
    await store().completeAttempts([{ tenantId: 'default', taskId: task.taskId, fencingToken: task.fencingToken, attempt: makeAttempt(task), next: { ...finalOutcome(task, 'FAILED'), expiresAt: null } }], T0 + 50);
    const done = (await store().getTask('default', task.taskId)) as RetryTask;

    expect(await store().deleteFinishedTasks('default', [listed(done)])).toHaveLength(1);
    expect((await store().listAttempts('default', task.taskId, { limit: 10 })).items).toEqual([]);
    expect(await store().admin.getTaskByIdempotencyKey('default', 'order-7')).toBeUndefined();
    const again = makeTask({ idempotencyKey: 'order-7', createdAt: T0 + 2_000, updatedAt: T0 + 2_000, nextAttemptAt: T0 + 2_000 });
    expect((await store().insertTasks([again]))[0]).toEqual({ kind: 'inserted', task: again });
    expect((await store().admin.getTaskByIdempotencyKey('default', 'order-7'))?.taskId).toBe(again.taskId);
  });
}
