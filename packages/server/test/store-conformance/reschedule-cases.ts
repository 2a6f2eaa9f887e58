import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { TaskStatus } from '@retryd/core';
import type { RetryTask } from '../../src/domain/task.js';
import type { RescheduleChange } from '../../src/store/store.js';
import { T0, makeTask } from '../fixtures/tasks.js';
import type { CurrentStore } from './helpers.js';
import { claimed, insertAll, insertAllStored } from './helpers.js';

// `rescheduleTask`: a PENDING task due at another time (run now, or later), at the version it was read at.

const HOUR = 3_600_000;
const ref = (task: RetryTask) => ({ tenantId: task.tenantId, taskId: task.taskId });
const lease = { leaseMs: 1_000, workerId: 'w' };
const rescheduleOf = (task: RetryTask, at: number, now = T0 + 10): RescheduleChange => ({ expectedVersion: task.version, nextAttemptAt: at, updatedAt: now });
const ids = (tasks: readonly RetryTask[]) => tasks.map((t) => t.taskId);

export function rescheduleCases(store: CurrentStore): void {
  it('makes a task due in an hour due now at its version: attempts, run and budget kept, claimable at once', async () => {
    const task = makeTask({ nextAttemptAt: T0 + HOUR, attemptNumber: 2, runStartedAt: T0 - 5_000, lastDelayMs: 800, lastError: 'HTTP 503', lastResponseStatus: 503 });
    await insertAll(store(), [task]);
    expect(await store().nextDueAt()).toBe(T0 + HOUR);
    expect(await store().claimDue(T0 + 10, { limit: 10, ...lease })).toEqual([]);

    const result = await store().rescheduleTask(ref(task), rescheduleOf(task, T0 + 10));
    const expected: RetryTask = { ...task, nextAttemptAt: T0 + 10, updatedAt: T0 + 10, version: task.version + 1 };
    expect(result).toEqual({ kind: 'applied', task: expected });
    expect(await store().getTask(task.tenantId, task.taskId)).toEqual(expected);
    // The due index moved with it: the scheduler's timer aims at the new time, and a claim takes it.
    expect(await store().nextDueAt()).toBe(T0 + 10);
    const [claim] = await store().claimDue(T0 + 10, { limit: 10, ...lease });
    expect(claim).toMatchObject({ taskId: task.taskId, status: 'IN_FLIGHT', attemptNumber: 2, runStartedAt: T0 - 5_000, lastDelayMs: 800 });
  });

  it('moves a task later, behind the others of its target: claims before its new time take only them', async () => {
    const first = makeTask({ nextAttemptAt: T0 });
    const second = makeTask({ nextAttemptAt: T0 + 100 });
    await insertAll(store(), [first, second]);
    expect((await store().rescheduleTask(ref(first), rescheduleOf(first, T0 + 5_000, T0 + 1))).kind).toBe('applied');
    expect(ids(await store().claimDue(T0 + 100, { limit: 10, ...lease }))).toEqual([second.taskId]);
    expect(await store().claimDue(T0 + 4_999, { limit: 10, ...lease })).toEqual([]);
    // The timer may aim early (a hint is never late), but not past the new time.
    expect(await store().nextDueAt()).toBeLessThanOrEqual(T0 + 5_000);
    expect(ids(await store().claimDue(T0 + 5_000, { limit: 10, ...lease }))).toEqual([first.taskId]);
  });

  it("leaves the target's gate in force: a task made due on a held target waits for the hold's end", async () => {
    const task = makeTask({ nextAttemptAt: T0 + HOUR });
    await insertAll(store(), [task]);
    await store().holdTarget({ tenantId: task.tenantId, targetKey: task.targetKey }, T0 + 500, T0);
    expect((await store().rescheduleTask(ref(task), rescheduleOf(task, T0 + 10))).kind).toBe('applied');
    expect(await store().claimDue(T0 + 10, { limit: 10, ...lease })).toEqual([]);
    expect(await store().nextDueAt()).toBe(T0 + 500);
    expect(ids(await store().claimDue(T0 + 500, { limit: 10, ...lease }))).toEqual([task.taskId]);
  });

  it('refuses a task that is IN_FLIGHT or finished, whatever the caller believes, and changes nothing', async () => {
    const inFlight = await claimed(store(), makeTask());
    const ended = (['SUCCEEDED', 'FAILED', 'EXHAUSTED', 'CANCELLED'] as const satisfies readonly TaskStatus[]).map((status) =>
      makeTask({ status, nextAttemptAt: null, attemptNumber: 1, updatedAt: T0 + 1 }),
    );
    await insertAllStored(store(), ended);
    for (const task of [inFlight, ...ended]) {
      // The caller names the right version: only the status guard can refuse it.
      expect(await store().rescheduleTask(ref(task), rescheduleOf(task, T0 + 50))).toEqual({ kind: 'refused', task });
      expect(await store().getTask(task.tenantId, task.taskId)).toEqual(task);
    }
    expect(await store().rescheduleTask({ tenantId: 'default', taskId: randomUUID() }, rescheduleOf(inFlight, T0))).toEqual({ kind: 'not_found' });
  });

  it('applies only at the version it was decided on: a second reschedule of one read is refused', async () => {
    const task = makeTask({ nextAttemptAt: T0 + HOUR });
    await insertAll(store(), [task]);
    expect(await store().rescheduleTask(ref(task), { ...rescheduleOf(task, T0 + 10), expectedVersion: task.version + 1 })).toEqual({ kind: 'refused', task });
    const applied = await store().rescheduleTask(ref(task), rescheduleOf(task, T0 + 20));
    expect(applied.kind).toBe('applied');
    const after = await store().getTask(task.tenantId, task.taskId);
    expect(await store().rescheduleTask(ref(task), rescheduleOf(task, T0 + 30))).toEqual({ kind: 'refused', task: after });
    expect(after?.nextAttemptAt).toBe(T0 + 20);
  });

  it("stays inside its tenant: another tenant's reference finds nothing, and its own tasks keep their time", async () => {
    const mine = makeTask({ tenantId: 'tenant-a', nextAttemptAt: T0 + HOUR });
    const theirs = makeTask({ tenantId: 'tenant-b', nextAttemptAt: T0 + HOUR });
    await insertAll(store(), [mine, theirs]);
    expect(await store().rescheduleTask({ tenantId: 'tenant-b', taskId: mine.taskId }, rescheduleOf(mine, T0 + 10))).toEqual({ kind: 'not_found' });
    expect((await store().rescheduleTask(ref(mine), rescheduleOf(mine, T0 + 10))).kind).toBe('applied');
    expect(ids(await store().claimDue(T0 + 10, { limit: 10, ...lease }))).toEqual([mine.taskId]);
    expect(await store().getTask('tenant-b', theirs.taskId)).toEqual(theirs);
  });
}
