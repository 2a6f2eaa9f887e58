import { validatePolicy } from '@retryd/core';
import { ManualClock, seededRandom } from '@retryd/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clientOptions } from '../src/backends/redis/connection.js';
import { StoreBackoff } from '../src/engine/store-backoff.js';
import { STORE_RETRY_POLICY, storeRetryDelay } from '../src/store/store-retry-delay.js';

/** The first ten waits of seed 42 (and, below, seed 7): each uniform in [0, min(5 s, 50 ms × 2^(n−1))), whole ms. */
const SEED_42 = [30, 45, 170, 268, 140, 843, 874, 3_124, 4_327, 2_362];
const SEED_7 = [1, 6, 195, 280, 417, 649, 1_492, 1_200, 2_767, 3_649];

/** Runs `backoff.wait()` `n` times on `clock` and returns the clock time at which each wait ended. */
async function wakeTimes(clock: ManualClock, backoffs: StoreBackoff[], n: number): Promise<number[][]> {
  const times = backoffs.map(() => [] as number[]);
  const loops = backoffs.map(async (backoff, i) => {
    for (let k = 0; k < n; k++) {
      await backoff.wait();
      times[i]?.push(clock.now());
    }
  });
  await clock.runAll();
  await Promise.all(loops);
  return times;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('storeRetryDelay: the service retries its own store through computeDelay, with full jitter', () => {
  it('is a valid policy: exponential from 50 ms, doubling, capped at 5 s, full jitter', () => {
    expect(validatePolicy(STORE_RETRY_POLICY)).toMatchObject({ ok: true });
    expect(STORE_RETRY_POLICY).toMatchObject({
      backoffType: 'EXPONENTIAL',
      initialDelayMs: 50,
      multiplier: 2,
      maxDelayMs: 5_000,
      jitterType: 'FULL',
    });
  });

  it('gives exact waits for a seeded random, each within its exponential cap', () => {
    const random = seededRandom(42);
    let previous = 0;
    const waits = SEED_42.map((_, i) => (previous = storeRetryDelay(i + 1, previous, random)));
    expect(waits).toEqual(SEED_42);
    waits.forEach((wait, i) => {
      expect(wait).toBeGreaterThanOrEqual(0);
      expect(wait).toBeLessThanOrEqual(Math.min(5_000, 50 * 2 ** i));
    });
    // Far past the cap, the window stays [0, 5 s].
    expect(storeRetryDelay(10_000, 5_000, () => 0.999_9)).toBe(5_000);
    expect(storeRetryDelay(1, 0, () => 0)).toBe(0);
  });

  it('is what the Redis client waits between reconnects', () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { retryStrategy } = clientOptions({}, 'retryd-test');
    expect([1, 2, 3, 10, 1_000].map((attempt) => retryStrategy?.(attempt))).toEqual([25, 50, 100, 2_500, 2_500]);
  });
});

describe('StoreBackoff', () => {
  it('waits the seeded delays on the injected clock, and starts over after a success', async () => {
    const clock = new ManualClock();
    const backoff = new StoreBackoff(clock, seededRandom(42));
    await wakeTimes(clock, [backoff], 10);
    expect(clock.sleeps).toEqual(SEED_42);
    backoff.reset();
    // The eleventh draw of the same random, on the first window (0 to 50 ms) again.
    const random = seededRandom(42);
    for (let i = 0; i < 10; i++) random();
    expect(backoff.nextDelayMs).toBe(storeRetryDelay(1, 0, random));
    expect(backoff.nextDelayMs).toBeLessThanOrEqual(50);
  });

  it('keeps the wait it announced until it is used (the engine reads it to aim its timer, then counts the failure)', () => {
    const backoff = new StoreBackoff(new ManualClock(), seededRandom(42));
    expect(backoff.nextDelayMs).toBe(SEED_42[0]);
    expect(backoff.nextDelayMs).toBe(SEED_42[0]);
    backoff.failed();
    expect(backoff.nextDelayMs).toBe(SEED_42[1]);
  });

  it('ends a wait at once when interrupted', async () => {
    const clock = new ManualClock();
    const backoff = new StoreBackoff(clock, seededRandom(42));
    const waited = backoff.wait();
    backoff.interrupt();
    await waited;
    expect(clock.now()).toBe(0);
  });

  it('two instances with different randoms do not reconnect in lockstep; with the same random they would', async () => {
    const clock = new ManualClock();
    const [a, b] = await wakeTimes(clock, [new StoreBackoff(clock, seededRandom(42)), new StoreBackoff(clock, seededRandom(7))], 10);
    const cumulative = (waits: number[]) => waits.map((_, i) => waits.slice(0, i + 1).reduce((x, y) => x + y, 0));
    expect(a).toEqual(cumulative(SEED_42));
    expect(b).toEqual(cumulative(SEED_7));
    // Not one reconnect of the one instance lands at the same moment as one of the other's.
    expect(a!.filter((t) => b!.includes(t))).toEqual([]);

    const same = new ManualClock();
    const [c, d] = await wakeTimes(same, [new StoreBackoff(same, seededRandom(42)), new StoreBackoff(same, seededRandom(42))], 10);
    expect(c).toEqual(d);
  });
});
