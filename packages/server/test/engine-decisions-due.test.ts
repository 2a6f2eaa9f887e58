import { computeDelay, type RetryPolicy } from '@retryd/core';
import { seededRandom } from '@retryd/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { EngineHarness, JITTERED_POLICY } from './engine-harness.js';
import { T0 } from './fixtures/tasks.js';

// Due times on the engine harness: each retry starts at exactly the time the engine computed, with the engine's
// seeded random (seed 1), and not a millisecond before.

let h: EngineHarness;
afterEach(async () => {
  await h.close();
});

const target = 'https://a.example/orders';

/** The delays seed 1 gives (whole ms, as scheduled), as literals: what the computations below must keep giving. */
const REFERENCE = {
  full: [628, 6],
  decorrelated: [2_255, 1_016, 2_080],
};

describe('due times', () => {
  it('schedules a 503 at the end of the attempt plus the computed delay, and starts it exactly then', async () => {
    h = await EngineHarness.open();
    const { task } = await h.enqueue({ targetUrl: target, policy: JITTERED_POLICY });
    const random = seededRandom(1);
    // The attempt takes 120 ms; the decision is made when it ends.
    await h.advance(120);
    h.dispatcher.take(task).respond(503, { body: 'busy' });
    await h.settle();
    const d1 = computeDelay(JITTERED_POLICY, 1, 0, random);
    const second = T0 + 120 + Math.ceil(d1);
    expect(second - T0 - 120).toBe(REFERENCE.full[0]);
    expect(await h.task(task)).toMatchObject({ status: 'PENDING', attemptNumber: 1, nextAttemptAt: second, lastDelayMs: d1 });
    expect(await h.attempts(task)).toMatchObject([
      { attemptNumber: 1, startedAt: T0, durationMs: 120, responseStatus: 503, outcome: 'retry_scheduled', nextAttemptAt: second },
    ]);

    await h.advanceTo(second - 1);
    expect(h.dispatcher.dispatches).toHaveLength(1);
    await h.advanceTo(second);
    h.dispatcher.take(task).respond(503);
    await h.settle();
    const third = second + Math.ceil(computeDelay(JITTERED_POLICY, 2, d1, random));
    expect(third - second).toBe(REFERENCE.full[1]);
    await h.advanceTo(third);
    h.dispatcher.take(task).respond(200);
    await h.settle();

    expect(h.dispatcher.log).toEqual([
      [task.taskId, 1, T0],
      [task.taskId, 2, second],
      [task.taskId, 3, third],
    ]);
    expect(await h.task(task)).toMatchObject({ status: 'SUCCEEDED', attemptNumber: 3, nextAttemptAt: null });
  });

  it('feeds the stored previous delay back into DECORRELATED jitter', async () => {
    const policy: RetryPolicy = { ...JITTERED_POLICY, jitterType: 'DECORRELATED' };
    h = await EngineHarness.open();
    const { task } = await h.enqueue({ targetUrl: target, policy });
    const random = seededRandom(1);
    const due: number[] = [T0];
    let previous = 0;
    for (let n = 1; n <= 3; n++) {
      await h.advanceTo(due.at(-1) as number);
      h.dispatcher.take(task).respond(503);
      await h.settle();
      // Each delay is uniform in [1 s, 3 × the previous one], the previous one read back from the store.
      previous = computeDelay(policy, n, previous, random);
      due.push((due.at(-1) as number) + Math.ceil(previous));
      expect(await h.task(task)).toMatchObject({ nextAttemptAt: due.at(-1), lastDelayMs: previous });
    }
    expect(due.slice(1).map((t, i) => t - (due[i] as number))).toEqual(REFERENCE.decorrelated);
    await h.advanceTo(due.at(-1) as number);
    expect(h.dispatcher.log.map(([, n, at]) => [n, at])).toEqual(due.map((at, i) => [i + 1, at]));
  });

  it('honours Retry-After to the millisecond, without drawing from the random', async () => {
    h = await EngineHarness.open();
    const { task } = await h.enqueue({ targetUrl: target, policy: JITTERED_POLICY });
    h.dispatcher.take(task).respond(503, { headers: { 'retry-after': '120' } });
    await h.settle();
    expect(await h.task(task)).toMatchObject({ nextAttemptAt: T0 + 120_000 });
    await h.advanceTo(T0 + 119_999);
    expect(h.dispatcher.dispatches).toHaveLength(1);
    await h.advanceTo(T0 + 120_000);
    h.dispatcher.take(task).respond(503);
    await h.settle();
    // The second retry's delay is the random's first draw.
    const next = T0 + 120_000 + Math.ceil(computeDelay(JITTERED_POLICY, 2, 0, seededRandom(1)));
    expect(await h.task(task)).toMatchObject({ nextAttemptAt: next });
  });

  it('cuts the last delay to the budget and starts no attempt past it', async () => {
    const policy: RetryPolicy = {
      ...JITTERED_POLICY,
      backoffType: 'FIXED',
      jitterType: 'NONE',
      initialDelayMs: 10_000,
      maxDelayMs: 10_000,
      maxAttempts: 100,
      totalBudgetMs: 25_000,
    };
    h = await EngineHarness.open();
    const { task } = await h.enqueue({ targetUrl: target, policy });
    // Each attempt takes 1 s: they start at 0, 11 and 22 s; the next would be at 33 s, so it is cut to the budget's end.
    for (const start of [T0, T0 + 11_000, T0 + 22_000, T0 + 25_000]) {
      await h.advanceTo(start);
      await h.advance(1_000);
      h.dispatcher.take(task).respond(503);
      await h.settle();
    }
    expect(h.dispatcher.log.map(([, n, at]) => [n, at - T0])).toEqual([
      [1, 0],
      [2, 11_000],
      [3, 22_000],
      [4, 25_000],
    ]);
    expect(await h.task(task)).toMatchObject({ status: 'EXHAUSTED', attemptNumber: 4, deadLetterReason: 'budget', nextAttemptAt: null });
  });

  it('starts a task enqueued for later exactly on time, from the single due timer', async () => {
    h = await EngineHarness.open();
    const { task } = await h.enqueue({ targetUrl: target, policy: JITTERED_POLICY, delayMs: 300_000 });
    expect(task).toMatchObject({ status: 'PENDING', nextAttemptAt: T0 + 300_000 });
    await h.advanceTo(T0 + 299_999);
    expect(h.dispatcher.dispatches).toEqual([]);
    await h.advanceTo(T0 + 300_000);
    expect(h.dispatcher.log).toEqual([[task.taskId, 1, T0 + 300_000]]);
  });
});
