import type { RetryPolicy } from '@retryd/core';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_TENANT } from '../src/domain/task.js';
import { EngineHarness } from './engine-harness.js';
import { FAST_POLICY } from './engine-helpers.js';
import { T0 } from './fixtures/tasks.js';

// Run now and reschedule, as the engine sees them on the harness's manual clock: the service moves the task's due time
// and wakes the engine, whose single due timer aims again at once (not at the hour it was aiming at).

let h: EngineHarness;
afterEach(async () => {
  await h.close();
});

const HOUR = 3_600_000;
const target = 'https://a.example/orders';
/** Five attempts 5 ms apart, a one-day budget. */
const POLICY: RetryPolicy = { ...FAST_POLICY, totalBudgetMs: 24 * HOUR };

describe('run now and reschedule on the engine', () => {
  it('runs a task due in an hour at once after run-now; its retries then follow its policy, attempts counted as before', async () => {
    h = await EngineHarness.open();
    const { task } = await h.enqueue({ targetUrl: target, policy: POLICY, delayMs: HOUR });
    await h.advance(1_000);
    expect(h.dispatcher.dispatches).toEqual([]);

    expect((await h.service.reschedule(DEFAULT_TENANT, task.taskId, 'now')).kind).toBe('rescheduled');
    await h.settle();
    expect(h.dispatcher.log).toEqual([[task.taskId, 1, T0 + 1_000]]);
    h.dispatcher.take(task).respond(503);
    await h.settle();
    expect(await h.task(task)).toMatchObject({ status: 'PENDING', attemptNumber: 1, nextAttemptAt: T0 + 1_005, runStartedAt: T0 });
    await h.advanceTo(T0 + 1_005);
    h.dispatcher.take(task).respond(200);
    await h.settle();
    expect(h.dispatcher.log.map(([, n, at]) => [n, at - T0])).toEqual([
      [1, 1_000],
      [2, 1_005],
    ]);
    expect(await h.task(task)).toMatchObject({ status: 'SUCCEEDED', attemptNumber: 2 });
  });

  it('runs a task rescheduled from an hour to ten minutes at exactly ten minutes, and one moved later not before its time', async () => {
    h = await EngineHarness.open();
    const { task: sooner } = await h.enqueue({ targetUrl: target, policy: POLICY, delayMs: HOUR });
    const { task: later } = await h.enqueue({ targetUrl: 'https://b.example/orders', policy: POLICY, delayMs: 60_000 });
    await h.settle();
    await h.service.reschedule(DEFAULT_TENANT, sooner.taskId, T0 + 600_000);
    await h.service.reschedule(DEFAULT_TENANT, later.taskId, T0 + 2 * HOUR);
    await h.advanceTo(T0 + 600_000);
    h.dispatcher.take(sooner).respond(200);
    await h.settle();
    await h.advanceTo(T0 + 2 * HOUR);
    h.dispatcher.take(later).respond(200);
    await h.settle();
    expect(h.dispatcher.log).toEqual([
      [sooner.taskId, 1, T0 + 600_000],
      [later.taskId, 1, T0 + 2 * HOUR],
    ]);
  });
});
