import type { RetryPolicy } from '@retryd/core';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_TENANT } from '../src/domain/task.js';
import { EngineHarness } from './engine-harness.js';
import { makeTask, T0 } from './fixtures/tasks.js';

// Deadlines that count everything: a task's totalBudgetMs counts from its creation (or its replay), so time spent
// waiting for the first attempt, between attempts and on Retry-After all counts, on the engine harness's manual clock.

let h: EngineHarness;
afterEach(async () => {
  await h.close();
});

const target = 'https://a.example/orders';

/** Three attempts 100 ms apart, a 300 ms budget. */
const THREE_IN_300: RetryPolicy = {
  maxAttempts: 3,
  backoffType: 'FIXED',
  initialDelayMs: 100,
  multiplier: 1,
  maxDelayMs: 100,
  jitterType: 'NONE',
  totalBudgetMs: 300,
};

describe('deadlines that count everything', () => {
  it('a task delayed 600 ms with a 300 ms budget makes no attempt: EXHAUSTED (budget) when it falls due', async () => {
    h = await EngineHarness.open();
    const { task } = await h.enqueue({ targetUrl: target, policy: THREE_IN_300, delayMs: 600 });
    expect(task).toMatchObject({ status: 'PENDING', createdAt: T0, runStartedAt: T0, nextAttemptAt: T0 + 600 });
    await h.advanceTo(T0 + 600);
    await h.advance(1_000);
    // Before the budget counted from creation, this made three attempts, at 600, 700 and 800 ms.
    expect(h.dispatcher.dispatches).toEqual([]);
    expect(await h.task(task)).toMatchObject({ status: 'EXHAUSTED', deadLetterReason: 'budget', attemptNumber: 0, nextAttemptAt: null });
    expect(await h.attempts(task)).toEqual([]);
  });

  it('cuts retries to creation + budget, whatever the first attempt waited', async () => {
    const policy: RetryPolicy = { ...THREE_IN_300, maxAttempts: 10, initialDelayMs: 500, maxDelayMs: 500, totalBudgetMs: 1_000 };
    h = await EngineHarness.open();
    const { task } = await h.enqueue({ targetUrl: target, policy, delayMs: 200 });
    // Each attempt takes 50 ms.
    for (const start of [T0 + 200, T0 + 750, T0 + 1_000]) {
      await h.advanceTo(start);
      await h.advance(50);
      h.dispatcher.take(task).respond(503);
      await h.settle();
    }
    await h.advance(5_000);
    // Counted from the first attempt, the budget would have ended at 1,200 ms: a third attempt at 1,300 cut to 1,200.
    // Counted from creation, the third is cut to 1,000 ms, and it ends past the budget: none follows.
    expect(h.dispatcher.log.map(([, n, at]) => [n, at - T0])).toEqual([
      [1, 200],
      [2, 750],
      [3, 1_000],
    ]);
    expect(await h.task(task)).toMatchObject({ status: 'EXHAUSTED', deadLetterReason: 'budget', attemptNumber: 3, runStartedAt: T0 });
  });

  it('counts a Retry-After wait: one that ends past the budget counted from creation ends the task now', async () => {
    const policy: RetryPolicy = { ...THREE_IN_300, totalBudgetMs: 10_000 };
    h = await EngineHarness.open();
    const { task } = await h.enqueue({ targetUrl: target, policy, delayMs: 4_000 });
    await h.advanceTo(T0 + 4_000);
    // 4 s queued + 7 s asked = 11 s > 10 s: counted from the first attempt it would have fitted (7 s of 10).
    h.dispatcher.take(task).respond(503, { headers: { 'retry-after': '7' } });
    await h.settle();
    expect(await h.task(task)).toMatchObject({ status: 'EXHAUSTED', deadLetterReason: 'retry_after_beyond_budget', attemptNumber: 1 });
  });

  it('a replayed task gets a fresh budget, counted from the replay', async () => {
    h = await EngineHarness.open();
    const { task } = await h.enqueue({ targetUrl: target, policy: THREE_IN_300, delayMs: 600 });
    await h.advanceTo(T0 + 600);
    expect(await h.task(task)).toMatchObject({ status: 'EXHAUSTED', deadLetterReason: 'budget' });

    await h.advanceTo(T0 + 60_000);
    const replayed = await h.service.replay(DEFAULT_TENANT, task.taskId);
    expect(replayed.kind).toBe('replayed');
    await h.settle();
    expect((await h.task(task)).runStartedAt).toBe(T0 + 60_000);
    for (const start of [T0 + 60_000, T0 + 60_100, T0 + 60_200]) {
      await h.advanceTo(start);
      h.dispatcher.take(task).respond(503);
      await h.settle();
    }
    expect(h.dispatcher.log.map(([, n, at]) => [n, at - T0])).toEqual([
      [1, 60_000],
      [2, 60_100],
      [3, 60_200],
    ]);
    expect(await h.task(task)).toMatchObject({ status: 'EXHAUSTED', deadLetterReason: 'max_attempts', attemptNumber: 3 });
  });

  it('a task an older version enqueued (no runStartedAt) still counts from its first attempt', async () => {
    h = await EngineHarness.open();
    const [legacy] = await h.insert(makeTask({ policyId: null, policy: THREE_IN_300, targetUrl: target, nextAttemptAt: T0 + 600 }));
    if (legacy === undefined) throw new Error('not inserted');
    expect(legacy.runStartedAt).toBeNull();
    h.engine.wake();
    for (const start of [T0 + 600, T0 + 700, T0 + 800]) {
      await h.advanceTo(start);
      h.dispatcher.take(legacy).respond(503);
      await h.settle();
    }
    expect(await h.task(legacy)).toMatchObject({ status: 'EXHAUSTED', deadLetterReason: 'max_attempts', runStartedAt: T0 + 600 });
  });
});
