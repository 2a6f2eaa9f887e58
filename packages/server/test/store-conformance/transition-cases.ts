import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { TaskStatus } from '@retryd/core';
import type { RetryTask } from '../../src/domain/task.js';
import type { ReplayChange } from '../../src/store/store.js';
import { T0, makeTask } from '../fixtures/tasks.js';
import type { CurrentStore } from './helpers.js';
import { claimed, insertAll, insertAllStored } from './helpers.js';

const ref = (task: RetryTask) => ({ tenantId: task.tenantId, taskId: task.taskId });
const lease = { leaseMs: 1_000, workerId: 'w' };
/** A task ended in `status` (inserted as such: the store takes any status at insert). */
const ended = (status: TaskStatus, overrides: Partial<RetryTask> = {}) =>
  makeTask({ status, nextAttemptAt: null, attemptNumber: 2, updatedAt: T0 + 1, ...overrides });
const replayOf = (task: RetryTask, at = T0 + 100): ReplayChange => ({
  expectedVersion: task.version,
  runAttemptOffset: task.attemptNumber,
  runStartedAt: null,
  nextAttemptAt: at,
  updatedAt: at,
});

export function transitionCases(store: CurrentStore): void {
  it('cancels a PENDING task at once: CANCELLED, no due time, version raised, and no longer claimable', async () => {
    const task = makeTask({ lastError: 'HTTP 503', lastResponseStatus: 503 });
    await insertAll(store(), [task]);
    const result = await store().cancelTask(ref(task), T0 + 5, T0 + 5 + 60_000);
    const expected: RetryTask = { ...task, status: 'CANCELLED', nextAttemptAt: null, updatedAt: T0 + 5, version: task.version + 1, expiresAt: T0 + 5 + 60_000 };
    expect(result).toEqual({ kind: 'applied', task: expected });
    expect(await store().getTask('default', task.taskId)).toEqual(expected);
    expect(await store().claimDue(T0 + 10, { limit: 10, ...lease })).toEqual([]);
    // Cancelling again is refused: the store's guard, not the caller, decides.
    expect(await store().cancelTask(ref(task), T0 + 6, T0 + 6 + 60_000)).toEqual({ kind: 'refused', task: expected });
    expect(await store().cancelTask({ tenantId: 'default', taskId: randomUUID() }, T0, T0 + 60_000)).toEqual({ kind: 'not_found' });
  });

  it('refuses to cancel a task that is not PENDING, whatever the caller believes, and changes nothing', async () => {
    const inFlight = await claimed(store(), makeTask());
    const others = (['SUCCEEDED', 'FAILED', 'EXHAUSTED'] as const).map((s) => ended(s));
    await insertAllStored(store(), others);
    for (const task of [inFlight, ...others]) {
      expect(await store().cancelTask(ref(task), T0 + 50, T0 + 50 + 60_000)).toEqual({ kind: 'refused', task });
      expect(await store().getTask('default', task.taskId)).toEqual(task);
    }
  });

  it('requests the cancel of an IN_FLIGHT task only, keeping its lease', async () => {
    const task = await claimed(store(), makeTask());
    const result = await store().requestCancel(ref(task), T0 + 7);
    const expected: RetryTask = { ...task, cancelRequested: true, updatedAt: T0 + 7, version: task.version + 1 };
    expect(result).toEqual({ kind: 'applied', task: expected });
    // The holder's lease and token are untouched: its completion still applies.
    expect(await store().extendLease('default', task.taskId, task.fencingToken, T0 + 9_000)).toBe(true);

    const pending = makeTask();
    const done = ended('SUCCEEDED');
    await insertAllStored(store(), [pending, done]);
    for (const task of [pending, done]) {
      expect(await store().requestCancel(ref(task), T0 + 8)).toEqual({ kind: 'refused', task });
    }
    expect(await store().requestCancel({ tenantId: 'default', taskId: randomUUID() }, T0)).toEqual({ kind: 'not_found' });
  });

  it('replays a dead letter into a fresh run at its version: same key, history kept, due and claimable again', async () => {
    const dead = ended('FAILED', { attemptNumber: 3, deadLetterReason: 'permanent_status:400', lastDelayMs: 80, lastError: 'HTTP 400' });
    const exhausted = ended('EXHAUSTED', { deadLetterReason: 'max_attempts', runStartedAt: T0 });
    await insertAllStored(store(), [dead, exhausted]);
    const result = await store().replayTask(ref(dead), replayOf(dead, T0 + 100));
    const expected: RetryTask = {
      ...dead,
      status: 'PENDING',
      nextAttemptAt: T0 + 100,
      runAttemptOffset: 3,
      runStartedAt: null,
      lastDelayMs: 0,
      deadLetterReason: null,
      cancelRequested: false,
      updatedAt: T0 + 100,
      version: dead.version + 1,
    };
    expect(result).toEqual({ kind: 'applied', task: expected });
    expect(await store().nextDueAt()).toBe(T0 + 100);
    const [claim] = await store().claimDue(T0 + 100, { limit: 5, ...lease });
    expect(claim).toMatchObject({ taskId: dead.taskId, idempotencyKey: dead.idempotencyKey, attemptNumber: 3, runAttemptOffset: 3 });

    const replayed = await store().replayTask(ref(exhausted), { ...replayOf(exhausted, T0 + 200), runStartedAt: T0 + 200 });
    expect(replayed).toMatchObject({ kind: 'applied', task: { status: 'PENDING', runStartedAt: T0 + 200, deadLetterReason: null } });
  });

  it('refuses a replay at another version, or of a task that is not a dead letter', async () => {
    const dead = ended('EXHAUSTED');
    await insertAllStored(store(), [dead]);
    expect(await store().replayTask(ref(dead), { ...replayOf(dead), expectedVersion: dead.version + 1 })).toEqual({ kind: 'refused', task: dead });
    const notDead = [makeTask(), ended('SUCCEEDED'), ended('CANCELLED')];
    await insertAllStored(store(), notDead);
    const inFlight = await claimed(store(), makeTask({ nextAttemptAt: T0 - 1 }));
    for (const task of [...notDead, inFlight]) {
      // The caller names the right version: only the status guard can refuse it.
      expect(await store().replayTask(ref(task), replayOf(task))).toEqual({ kind: 'refused', task });
      expect(await store().getTask('default', task.taskId)).toEqual(task);
    }
    expect(await store().replayTask({ tenantId: 'default', taskId: randomUUID() }, replayOf(dead))).toEqual({ kind: 'not_found' });
    // Two replays of one version: the first applies, the second is refused (the version moved on).
    expect((await store().replayTask(ref(dead), replayOf(dead))).kind).toBe('applied');
    expect((await store().replayTask(ref(dead), replayOf(dead))).kind).toBe('refused');
  });

  it('keeps every transition inside its tenant', async () => {
    const task = makeTask({ tenantId: 'tenant-a' });
    const dead = ended('FAILED', { tenantId: 'tenant-a' });
    await insertAllStored(store(), [task, dead]);
    const other = (t: RetryTask) => ({ tenantId: 'tenant-b', taskId: t.taskId });
    expect(await store().cancelTask(other(task), T0, T0 + 60_000)).toEqual({ kind: 'not_found' });
    expect(await store().requestCancel(other(task), T0)).toEqual({ kind: 'not_found' });
    expect(await store().replayTask(other(dead), replayOf(dead))).toEqual({ kind: 'not_found' });
    expect(await store().getTask('tenant-a', task.taskId)).toEqual(task);
  });
}
