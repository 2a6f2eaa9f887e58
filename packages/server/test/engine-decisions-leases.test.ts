import { computeDelay } from '@retryd/core';
import { seededRandom } from '@retryd/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { CompletionAbandonedError, FencedOutError } from '../src/engine/engine-errors.js';
import { storeRetryDelay } from '../src/store/store-retry-delay.js';
import { EngineHarness, JITTERED_POLICY } from './engine-harness.js';
import { makeTask, T0 } from './fixtures/tasks.js';

// Leases, reaping, store failures and shutdown, on the engine harness: every time below is exact.

let h: EngineHarness;
afterEach(async () => {
  await h.close();
});

/** The first retry's delay an engine seeded with `seed` draws for JITTERED_POLICY, rounded up as the engine does. */
const firstDelay = (seed: number) => Math.ceil(computeDelay(JITTERED_POLICY, 1, 0, seededRandom(seed)));

/** The store back-off waits a random seeded with `seed` draws, `n` of them, as clock times from `start`. */
function backoffTimes(seed: number, n: number, start: number): number[] {
  const random = seededRandom(seed);
  const times = [start];
  let previous = 0;
  for (let i = 1; i < n; i++) {
    previous = storeRetryDelay(i, previous, random);
    times.push((times.at(-1) as number) + previous);
  }
  return times;
}

/** When a failing claim is tried again with the engine's random (seed 1), in ms after the first try (full jitter may wait 0). */
const CLAIM_TRIES_SEED_1 = [0, 31, 31, 136, 528, 1_303];

describe('leases', () => {
  it('reaps the lease of a worker that died the moment it lapses, logs lease_expired and retries at the exact backoff', async () => {
    h = await EngineHarness.open();
    const [task] = await h.insert(makeTask({ targetUrl: 'https://a.example/x', policy: JITTERED_POLICY, policyId: null }));
    const [dead] = await h.store.claimDue(T0, { limit: 1, leaseMs: 20_000, workerId: 'dead-worker' });
    expect(dead).toMatchObject({ taskId: task!.taskId, leaseExpiresAt: T0 + 20_000 });

    await h.advanceTo(T0 + 19_999);
    expect(await h.task(task!)).toMatchObject({ status: 'IN_FLIGHT', leaseOwner: 'dead-worker' });
    await h.advanceTo(T0 + 20_000);
    const retryAt = T0 + 20_000 + firstDelay(1);
    expect(firstDelay(1)).toBe(628);
    expect(await h.task(task!)).toMatchObject({ status: 'PENDING', attemptNumber: 1, nextAttemptAt: retryAt, leaseOwner: null });

    await h.advanceTo(retryAt - 1);
    expect(h.dispatcher.log).toEqual([]);
    await h.advanceTo(retryAt);
    expect(h.dispatcher.log).toEqual([[task!.taskId, 2, retryAt]]);
    h.dispatcher.take(task!).respond(200);
    await h.settle();
    expect(await h.task(task!)).toMatchObject({ status: 'SUCCEEDED', attemptNumber: 2 });
    const log = await h.attempts(task!);
    expect(log.map((a) => [a.attemptNumber, a.outcome, a.workerId, a.startedAt, a.nextAttemptAt])).toEqual([
      [1, 'lease_expired', 'dead-worker', T0, retryAt],
      [2, 'succeeded', 'worker-1', retryAt, null],
    ]);
    expect(log[0]!.errorMessage).toBe(
      `lease expired at ${new Date(T0 + 20_000).toISOString()}: worker dead-worker did not report the attempt's result`,
    );
    expect(h.errors).toEqual([]);
  });

  it('reaps a lease shorter than maxIdleMs that another worker took after its last look the moment it lapses', async () => {
    // Idle, it looks at least once per lease: it sees the lease before it lapses (with maxIdleMs alone, at T0 + 5 000).
    h = await EngineHarness.open({ engine: { attemptTimeoutMs: 1_000, leaseMs: 2_000, maxIdleMs: 5_000 } });
    await h.advanceTo(T0 + 100);
    const [task] = await h.insert(makeTask({ targetUrl: 'https://a.example/x', policy: JITTERED_POLICY, policyId: null }));
    const [dead] = await h.store.claimDue(T0 + 100, { limit: 1, leaseMs: 2_000, workerId: 'dead-worker' });
    expect(dead).toMatchObject({ taskId: task!.taskId, leaseExpiresAt: T0 + 2_100 });

    await h.advanceTo(T0 + 2_099);
    expect(await h.task(task!)).toMatchObject({ status: 'IN_FLIGHT', leaseOwner: 'dead-worker' });
    await h.advanceTo(T0 + 2_100);
    expect(await h.task(task!)).toMatchObject({ status: 'PENDING', attemptNumber: 1, leaseOwner: null });
    expect((await h.attempts(task!)).map((a) => [a.outcome, a.workerId])).toEqual([['lease_expired', 'dead-worker']]);
  });

  it('a dispatch left unanswered past its lease is reaped by another instance and retried; the late answer is fenced out', async () => {
    // worker-1 stalls on its call (and, idle otherwise, does not look at the store for 10 minutes); worker-2 is live.
    h = await EngineHarness.open({ engine: { maxIdleMs: 600_000 } });
    const live = h.addEngine();
    await live.engine.start();
    const { task } = await h.enqueue({ targetUrl: 'https://a.example/x', policy: JITTERED_POLICY });
    expect(task).toMatchObject({ status: 'IN_FLIGHT', leaseOwner: 'worker-1', leaseExpiresAt: T0 + 30_000 });
    expect(h.dispatcher.log).toEqual([[task.taskId, 1, T0]]);

    await h.advanceTo(T0 + 29_999);
    expect(await h.attempts(task)).toEqual([]);
    await h.advanceTo(T0 + 30_000);
    // worker-2's random (seed 2) decides the retry.
    const retryAt = T0 + 30_000 + firstDelay(live.seed);
    expect(await h.task(task)).toMatchObject({ status: 'PENDING', attemptNumber: 1, nextAttemptAt: retryAt });
    await h.advanceTo(retryAt);
    expect(live.dispatcher.log).toEqual([[task.taskId, 2, retryAt]]);

    // The stalled worker's answer comes at last: its fencing token is stale, so it changes nothing.
    h.dispatcher.take(task).respond(200);
    await h.settle();
    expect(h.errors.map((e) => e.error)).toEqual([expect.any(FencedOutError)]);
    expect(await h.task(task)).toMatchObject({ status: 'IN_FLIGHT', leaseOwner: 'worker-2' });

    live.dispatcher.take(task).respond(200);
    await h.settle();
    expect(await h.task(task)).toMatchObject({ status: 'SUCCEEDED', attemptNumber: 2, leaseOwner: null });
    expect((await h.attempts(task)).map((a) => [a.attemptNumber, a.outcome, a.workerId])).toEqual([
      [1, 'lease_expired', 'worker-1'],
      [2, 'succeeded', 'worker-2'],
    ]);
    expect(live.errors).toEqual([]);
  });
});

describe('store failures', () => {
  it('retries a failing claim after the jittered store back-off, and claims once the store is back', async () => {
    h = await EngineHarness.open({ start: false, handOff: false });
    h.faulty.failing.add('claimDue');
    const [task] = await h.insert(makeTask({ targetUrl: 'https://a.example/x', policy: JITTERED_POLICY, policyId: null }));
    await h.engine.start();
    await h.advanceTo(T0 + 1_000);
    // The engine's random (seed 1) jitters the waits: 0–50 ms, 0–100 ms, 0–200 ms, …
    const tries = backoffTimes(1, 8, T0);
    expect(h.faulty.timesOf('claimDue')).toEqual(tries.filter((t) => t <= T0 + 1_000));
    expect(tries.slice(0, 6).map((t) => t - T0)).toEqual(CLAIM_TRIES_SEED_1);
    expect(h.errors.every((e) => e.operation === 'claim')).toBe(true);

    h.faulty.failing.delete('claimDue');
    const next = tries.find((t) => t > T0 + 1_000) as number;
    await h.advanceTo(next);
    expect(h.dispatcher.log).toEqual([[task!.taskId, 1, next]]);
  });

  it('keeps an attempt result while the store fails and writes it once, when it is back', async () => {
    h = await EngineHarness.open();
    const { task } = await h.enqueue({ targetUrl: 'https://a.example/x', policy: JITTERED_POLICY });
    h.faulty.failing.add('completeAttempts');
    h.dispatcher.take(task).respond(200);
    await h.advanceTo(T0 + 1_000);
    const writes = h.faulty.timesOf('completeAttempts');
    expect(writes).toEqual(backoffTimes(1, 8, T0).filter((t) => t <= T0 + 1_000));
    // Held, not settled: the attempt is over and its result waits for the store.
    expect(h.engine.load).toMatchObject({ inFlight: 0, held: 1 });

    h.faulty.failing.delete('completeAttempts');
    await h.advance(5_000);
    expect(await h.task(task)).toMatchObject({ status: 'SUCCEEDED', attemptNumber: 1 });
    expect(await h.attempts(task)).toHaveLength(1);
    expect(h.dispatcher.dispatches).toHaveLength(1);
    expect(h.errors.every((e) => e.operation === 'complete')).toBe(true);
  });

  it('gives a result up only once its lease has lapsed, and says so; the reaper then logs the attempt', async () => {
    // Idle for a minute: no claim rides with the failing writes (its failure would draw from the same random).
    h = await EngineHarness.open({ engine: { leaseMs: 15_000, maxIdleMs: 60_000 } });
    const { task } = await h.enqueue({ targetUrl: 'https://a.example/x', policy: { ...JITTERED_POLICY, maxAttempts: 1 } });
    h.faulty.failing.add('completeAttempts');
    h.dispatcher.take(task).respond(200);
    await h.advanceTo(T0 + 14_999);
    expect(h.errors.some((e) => e.error instanceof CompletionAbandonedError)).toBe(false);

    // The write that fails first at or after the lease's end gives the result up.
    const givenUpAt = backoffTimes(1, 30, T0).find((t) => t >= T0 + 15_000) as number;
    await h.advanceTo(givenUpAt - 1);
    expect(h.errors.some((e) => e.error instanceof CompletionAbandonedError)).toBe(false);
    await h.advanceTo(givenUpAt);
    expect(h.errors.filter((e) => e.error instanceof CompletionAbandonedError).map((e) => e.taskId)).toEqual([task.taskId]);

    h.faulty.failing.delete('completeAttempts');
    await h.advance(5_000);
    expect(await h.task(task)).toMatchObject({ status: 'EXHAUSTED', deadLetterReason: 'max_attempts', attemptNumber: 1 });
    expect((await h.attempts(task)).map((a) => [a.outcome, a.workerId])).toEqual([['lease_expired', 'worker-1']]);
  });
});

describe('stop()', () => {
  it('hands back the lease of a slow call when the grace period runs out, without counting an attempt', async () => {
    h = await EngineHarness.open();
    const { task } = await h.enqueue({ targetUrl: 'https://a.example/x', policy: JITTERED_POLICY });
    await h.drive(h.engine.stop({ graceMs: 100 }));
    expect(h.clock.now()).toBe(T0 + 100);
    expect(h.dispatcher.open).toEqual([]);
    expect(await h.task(task)).toMatchObject({
      status: 'PENDING',
      attemptNumber: 0,
      leaseOwner: null,
      leaseExpiresAt: null,
      nextAttemptAt: T0 + 100,
    });
    expect(await h.attempts(task)).toEqual([]);
    expect(h.engine.load).toEqual({ inFlight: 0, held: 0, unwrittenResults: 0 });
  });

  it('lets calls in flight finish within the grace period and records them', async () => {
    h = await EngineHarness.open();
    const { task } = await h.enqueue({ targetUrl: 'https://a.example/x', policy: JITTERED_POLICY });
    const stopped = h.engine.stop({ graceMs: 5_000 });
    await h.advance(100);
    h.dispatcher.take(task).respond(200);
    await h.drive(stopped);
    // Idle as soon as the call ended: the grace period is a limit, not a wait.
    expect(h.clock.now()).toBe(T0 + 100);
    expect(await h.task(task)).toMatchObject({ status: 'SUCCEEDED', attemptNumber: 1 });
  });

  it('claims nothing after stop, and leaves no timer armed', async () => {
    h = await EngineHarness.open();
    await h.drive(h.engine.stop());
    const [task] = await h.insert(makeTask({ targetUrl: 'https://a.example/x', policy: JITTERED_POLICY, policyId: null }));
    h.engine.wake();
    expect(h.clock.pendingCount).toBe(0);
    await h.advance(60_000);
    expect(await h.task(task!)).toMatchObject({ status: 'PENDING' });
    expect(h.dispatcher.dispatches).toEqual([]);
  });
});
