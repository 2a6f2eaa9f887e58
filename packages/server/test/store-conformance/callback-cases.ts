import { expect, it } from 'vitest';
import type { RetryTask } from '../../src/domain/task.js';
import type { TaskCallback } from '../../src/domain/task-callback.js';
import type { AttemptCompletion, OwedCallback } from '../../src/store/store.js';
import { T0, finalOutcome, makeAttempt, makeTask, retryOutcome } from '../fixtures/tasks.js';
import type { CurrentStore } from './helpers.js';
import { claimed, insertAll } from './helpers.js';

const CALLBACK: TaskCallback = { url: 'https://caller.example.com/ended?token=t', on: ['succeeded', 'failed', 'cancelled'], policyId: null };
const ref = (task: RetryTask) => ({ tenantId: task.tenantId, taskId: task.taskId });
const withCallback = (overrides: Partial<RetryTask> = {}) => makeTask({ callback: CALLBACK, ...overrides });

function completion(task: RetryTask, next: AttemptCompletion['next']): AttemptCompletion {
  return { tenantId: task.tenantId, taskId: task.taskId, fencingToken: task.fencingToken, attempt: makeAttempt(task), next };
}

const owedIds = (owed: readonly OwedCallback[]) => owed.map((o) => o.taskId).sort();

export function callbackCases(store: CurrentStore): void {
  it('keeps a task callback as given, and null without one', async () => {
    const task = withCallback({ callback: { url: 'https://caller.example.com/x', on: ['failed'], policyId: 'slow' } });
    const plain = makeTask();
    await insertAll(store(), [task, plain]);
    expect(await store().getTask('default', task.taskId)).toEqual(task);
    expect((await store().getTask('default', plain.taskId))?.callback).toBeNull();
  });

  it('owes a callback in the completion that ends a task with one, and nothing for a retry or a task without one', async () => {
    const done = await claimed(store(), withCallback());
    const dead = await claimed(store(), withCallback());
    const retried = await claimed(store(), withCallback());
    const plain = await claimed(store(), makeTask());
    expect(await store().callbacks.owed(10)).toEqual([]);
    await store().completeAttempts(
      [
        completion(done, finalOutcome(done, 'SUCCEEDED')),
        completion(dead, { ...finalOutcome(dead, 'EXHAUSTED'), deadLetterReason: 'max_attempts' }),
        completion(retried, retryOutcome(retried, T0 + 2_000)),
        completion(plain, finalOutcome(plain, 'SUCCEEDED')),
      ],
      T0 + 50,
    );
    const owed = await store().callbacks.owed(10);
    expect(owedIds(owed)).toEqual([done.taskId, dead.taskId].sort());
    for (const o of owed) expect(o).toEqual({ tenantId: 'default', taskId: o.taskId, owedAt: T0 + 50 });
  });

  it('owes a callback for a cancel, at once or at the end of the attempt it was requested during', async () => {
    const pending = withCallback();
    await insertAll(store(), [pending]);
    await store().cancelTask(ref(pending), T0 + 7, T0 + 9_000);
    const running = await claimed(store(), withCallback());
    await store().requestCancel(ref(running), T0 + 8);
    expect(owedIds(await store().callbacks.owed(10))).toEqual([pending.taskId]);
    const cancelled = finalOutcome(running, 'CANCELLED');
    await store().completeAttempts([{ ...completion(running, retryOutcome(running, T0 + 2_000)), ifCancelRequested: cancelled }], T0 + 60);
    const owed = await store().callbacks.owed(10);
    expect(owed.map((o) => [o.taskId, o.owedAt])).toEqual([
      [pending.taskId, T0 + 7],
      [running.taskId, T0 + 60],
    ]);
  });

  it('answers the earliest ends first, at most limit, and settles each only at the owedAt read', async () => {
    const tasks = [withCallback(), withCallback(), withCallback({ tenantId: 'tenant-b' })];
    await insertAll(store(), tasks);
    for (const [i, task] of tasks.entries()) await store().cancelTask(ref(task), T0 + 10 - i, T0 + 9_000);
    const first = await store().callbacks.owed(2);
    expect(first.map((o) => o.taskId)).toEqual([tasks[2]?.taskId, tasks[1]?.taskId]);
    expect(first[0]?.tenantId).toBe('tenant-b');
    // A stale read settles nothing; the right one settles once.
    expect(await store().callbacks.settle([{ ...(first[0] as OwedCallback), owedAt: T0 + 1 }])).toBe(0);
    expect(await store().callbacks.settle(first)).toBe(2);
    expect(await store().callbacks.settle(first)).toBe(0);
    expect(owedIds(await store().callbacks.owed(10))).toEqual([tasks[0]?.taskId]);
  });

  it('owes a task ended again after a replay once, for its latest end, which a settle of the earlier end leaves', async () => {
    const task = await claimed(store(), withCallback());
    await store().completeAttempts([completion(task, { ...finalOutcome(task, 'FAILED'), deadLetterReason: 'non_retryable_status' })], T0 + 50);
    const [earlier] = await store().callbacks.owed(10);
    const dead = await store().getTask('default', task.taskId);
    await store().replayTask(ref(task), { expectedVersion: dead?.version ?? 0, runAttemptOffset: 1, runStartedAt: T0 + 100, nextAttemptAt: T0 + 100, updatedAt: T0 + 100 });
    const again = (await store().claimDue(T0 + 100, { limit: 1, leaseMs: 1_000, workerId: 'w' }))[0] as RetryTask;
    await store().completeAttempts([completion(again, finalOutcome(again, 'SUCCEEDED'))], T0 + 200);
    expect(await store().callbacks.settle([earlier as OwedCallback])).toBe(0);
    expect(await store().callbacks.owed(10)).toEqual([{ tenantId: 'default', taskId: task.taskId, owedAt: T0 + 200 }]);
  });

  it('keeps a task whose callback is owed from the purge and from deletes by hand, until it is settled', async () => {
    const task = withCallback();
    const plain = makeTask();
    await insertAll(store(), [task, plain]);
    await store().cancelTask(ref(task), T0 + 5, T0 + 1_000);
    await store().cancelTask(ref(plain), T0 + 5, T0 + 1_000);
    expect((await store().purgeExpired(T0 + 5_000, 10)).map((p) => p.taskId)).toEqual([plain.taskId]);
    const cancelled = (await store().getTask('default', task.taskId)) as RetryTask;
    expect(await store().deleteFinishedTasks('default', [{ taskId: task.taskId, version: cancelled.version }])).toEqual([]);
    expect(await store().getTask('default', task.taskId)).toBeDefined();
    await store().callbacks.settle(await store().callbacks.owed(10));
    expect((await store().purgeExpired(T0 + 5_000, 10)).map((p) => p.taskId)).toEqual([task.taskId]);
  });
}
