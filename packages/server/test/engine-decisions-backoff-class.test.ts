import { computeDelay, scheduleFor, type RetryPolicy } from '@retryd/core';
import { seededRandom } from '@retryd/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_TENANT } from '../src/domain/task.js';
import { EngineHarness, JITTERED_POLICY } from './engine-harness.js';
import { T0 } from './fixtures/tasks.js';

// Backoff per failure class on the engine harness: each retry of one task follows the schedule of the failure that
// led to it, drawn from the engine's seeded random (seed 1), and starts at exactly that time.

let h: EngineHarness;
afterEach(async () => {
  await h.close();
});

const target = 'https://a.example/orders';

/** The main schedule is JITTERED_POLICY's (from 1 s, ×2, FULL); 429s wait from 10 s, 5xx a fixed 500 ms. */
const POLICY: RetryPolicy = {
  ...JITTERED_POLICY,
  maxAttempts: 6,
  backoffByClass: {
    rateLimited: { initialDelayMs: 10_000, maxDelayMs: 120_000 },
    serverError: { backoffType: 'FIXED', initialDelayMs: 500, jitterType: 'NONE' },
  },
};

/** The delays seed 1 gives (whole ms, as scheduled), as literals: what the computations below must keep giving. */
const REFERENCE = [6_271, 500, 110, 4_220, 500];

describe('backoff per failure class', () => {
  it('a 429 and a 503 of the same task each get their own schedule; other failures the main one', async () => {
    h = await EngineHarness.open();
    const { task } = await h.enqueue({ targetUrl: target, policy: POLICY });
    const random = seededRandom(1);
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    const answers = [
      { answer: () => h.dispatcher.take(task).respond(429), schedule: scheduleFor(POLICY, 'rateLimited') },
      { answer: () => h.dispatcher.take(task).respond(503), schedule: scheduleFor(POLICY, 'serverError') },
      { answer: () => h.dispatcher.take(task).respond(429), schedule: scheduleFor(POLICY, 'rateLimited') },
      { answer: () => h.dispatcher.take(task).fail(reset), schedule: POLICY },
      { answer: () => h.dispatcher.take(task).respond(502), schedule: scheduleFor(POLICY, 'serverError') },
    ];
    const due = [T0];
    let previous = 0;
    for (const [i, { answer, schedule }] of answers.entries()) {
      await h.advanceTo(due[i] as number);
      answer();
      await h.settle();
      // Retry n of the task, on its class's schedule, with the task's one previous delay.
      previous = computeDelay(schedule, i + 1, previous, random);
      due.push((due[i] as number) + Math.ceil(previous));
      expect(await h.task(task)).toMatchObject({ status: 'PENDING', attemptNumber: i + 1, nextAttemptAt: due[i + 1], lastDelayMs: previous });
    }
    expect(due.slice(1).map((t, i) => t - (due[i] as number))).toEqual(REFERENCE);
    await h.advanceTo(due.at(-1) as number);
    h.dispatcher.take(task).respond(200);
    await h.settle();
    expect(h.dispatcher.log.map(([, n, at]) => [n, at])).toEqual(due.map((at, i) => [i + 1, at]));
    expect(await h.task(task)).toMatchObject({ status: 'SUCCEEDED', attemptNumber: 6 });
  });

  it('a named policy changed to add classes applies them from the next decision', async () => {
    h = await EngineHarness.open({ engine: { policyCacheMs: 0 } });
    const main: RetryPolicy = { ...JITTERED_POLICY, jitterType: 'NONE' };
    await h.service.createPolicy(DEFAULT_TENANT, { policyId: 'orders', ...main });
    const { task } = await h.enqueue({ targetUrl: target, policyId: 'orders' });
    h.dispatcher.take(task).respond(429);
    await h.settle();
    expect(await h.task(task)).toMatchObject({ nextAttemptAt: T0 + 1_000 });

    await h.service.replacePolicy(DEFAULT_TENANT, 'orders', { ...main, backoffByClass: { rateLimited: { initialDelayMs: 30_000, maxDelayMs: 60_000 } } });
    await h.advanceTo(T0 + 1_000);
    h.dispatcher.take(task).respond(429);
    await h.settle();
    // Retry 2 on the 429 schedule: 30 s × 2.
    expect(await h.task(task)).toMatchObject({ nextAttemptAt: T0 + 1_000 + 60_000 });
  });
});
