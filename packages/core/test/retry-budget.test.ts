import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidSnapshotError } from '../src/validation/invalid-snapshot-error.js';
import { RETRY_BUDGET_DEFAULTS, type RetryBudgetOptions } from '../src/budget/retry-budget-options.js';
import { RetryBudget } from '../src/budget/retry-budget.js';
import { ManualClock } from '../src/testing/manual-clock.js';

function setup(options: RetryBudgetOptions = {}, start = 0) {
  const clock = new ManualClock(start);
  return { clock, budget: new RetryBudget({ clock, ...options }) };
}

/** Asks for up to `max` retries and returns how many were granted. */
function drain(budget: RetryBudget, max = 100_000): number {
  let granted = 0;
  while (granted < max && budget.tryWithdraw()) granted++;
  return granted;
}

function attempts(budget: RetryBudget, n: number) {
  for (let i = 0; i < n; i++) budget.recordAttempt();
}

function errorOf(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}

const roundTrip = (b: RetryBudget, options: RetryBudgetOptions) => RetryBudget.fromJSON(JSON.parse(JSON.stringify(b.toJSON())), options);

describe('RetryBudget', () => {
  it('grants minRetriesPerSecond × ttlMs / 1000 retries per window on the floor alone', () => {
    expect(setup().budget.balance).toBe(100); // defaults: 10/s over 10 s
    const { budget } = setup({ minRetriesPerSecond: 2.5, ttlMs: 2_000 });
    expect(budget.balance).toBe(5);
    expect(drain(budget)).toBe(5);
    expect(budget.balance).toBe(0);
  });

  it('adds ratio of a retry per first attempt, counted exactly', () => {
    const { budget } = setup({ ratio: 0.1, minRetriesPerSecond: 1, ttlMs: 10_000 });
    attempts(budget, 25);
    expect(budget.balance).toBe(12); // 10 + 2.5, whole retries only
    attempts(budget, 5);
    expect(budget.balance).toBe(13);
    const exact = setup({ ratio: 0.29, minRetriesPerSecond: 0 }).budget;
    attempts(exact, 100);
    expect(exact.balance).toBe(29); // 0.29 × 100 is 28.999999999999996 in floating point
    expect(drain(exact)).toBe(29);
  });

  it('denies when exhausted, at no cost, until a deposit completes a whole retry', () => {
    const { budget } = setup({ ratio: 0.5, minRetriesPerSecond: 0.1 }); // floor: 1
    expect(drain(budget)).toBe(1);
    expect([budget.tryWithdraw(), budget.tryWithdraw()]).toEqual([false, false]);
    budget.recordAttempt();
    expect(budget.tryWithdraw()).toBe(false);
    budget.recordAttempt();
    expect(budget.tryWithdraw()).toBe(true);
    expect(budget.tryWithdraw()).toBe(false);
  });

  it('grants nothing with ratio 0 and no floor', () => {
    const { budget } = setup({ ratio: 0, minRetriesPerSecond: 0 });
    attempts(budget, 1_000);
    expect(budget.tryWithdraw()).toBe(false);
  });

  it('restores the balance as withdrawals slide out of the window', () => {
    const { budget, clock } = setup({ minRetriesPerSecond: 1, ttlMs: 10_000 }, 500);
    expect(drain(budget)).toBe(10);
    clock.tick(9_499); // t = 9_999: still in the window (slice 9)
    expect(budget.tryWithdraw()).toBe(false);
    clock.tick(1); // t = 10_000: slice 0 slid out
    expect(budget.balance).toBe(10);
  });

  it('lets deposits expire, and never reports a negative balance', () => {
    const { budget, clock } = setup({ ratio: 1, minRetriesPerSecond: 0, ttlMs: 10_000 });
    attempts(budget, 5);
    clock.tick(5_000);
    expect(drain(budget)).toBe(5);
    clock.tick(5_000); // the deposits are gone, the withdrawals they paid for still count
    expect(budget.balance).toBe(0);
    attempts(budget, 5);
    expect(budget.balance).toBe(0);
    clock.tick(5_000);
    expect(budget.balance).toBe(5);
  });

  it('is shared by every caller holding it', () => {
    const { budget } = setup({ ratio: 0, minRetriesPerSecond: 0.3 }); // floor: 3
    const callers = [budget, budget];
    expect(callers.map((b) => [b.tryWithdraw(), b.tryWithdraw()])).toEqual([[true, true], [true, false]]);
  });

  it('never grants more than floor + ratio × attempts within a window (property)', () => {
    // The window slides in tenths of ttlMs, so the exact guarantee is: at each granted retry at time t,
    // the grants in [t − 0.9 × ttlMs, t] are at most floor + ratio × the attempts in (t − ttlMs, t].
    const op = fc.oneof(fc.constant('attempt' as const), fc.constant('retry' as const), fc.nat(1_500));
    fc.assert(
      fc.property(
        fc.constantFrom(0, 0.1, 0.25, 0.29, 0.5, 1, 2),
        fc.constantFrom(0, 0.5, 1, 10),
        fc.constantFrom(1_000, 2_000, 10_000),
        fc.nat(1_000_000),
        fc.array(op, { maxLength: 400, size: 'large' }),
        (ratio, minRetriesPerSecond, ttlMs, start, ops) => {
          const { budget, clock } = setup({ ratio, minRetriesPerSecond, ttlMs }, start);
          const floor = (minRetriesPerSecond * ttlMs) / 1000;
          const attemptTimes: number[] = [];
          const grantTimes: number[] = [];
          for (const o of ops) {
            const t = clock.now();
            if (o === 'attempt') {
              budget.recordAttempt();
              attemptTimes.push(t);
            } else if (o === 'retry') {
              if (!budget.tryWithdraw()) continue;
              grantTimes.push(t);
              const granted = grantTimes.filter((g) => g >= t - (ttlMs - ttlMs / 10)).length;
              const earned = attemptTimes.filter((a) => a > t - ttlMs).length;
              expect(granted).toBeLessThanOrEqual(floor + ratio * earned + 1e-9);
            } else clock.tick(o);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('RetryBudget options', () => {
  it.each<[unknown, string]>([
    [{ ratio: -0.1 }, 'ratio must be a finite number >= 0, got -0.1'],
    [{ ratio: Infinity }, 'ratio must be a finite number >= 0, got Infinity'],
    [{ minRetriesPerSecond: NaN }, 'minRetriesPerSecond must be a finite number >= 0, got NaN'],
    [{ ttlMs: 0 }, 'ttlMs must be a finite number > 0, got 0'],
    [{ clock: Date }, 'clock must be a Clock (an object with a now() method), got a function'],
    [{ percentCanRetry: 20 }, 'percentCanRetry is not a RetryBudget option (known: ratio, minRetriesPerSecond, ttlMs, clock)'],
    [{ ratio: '0.1', ttlMs: -1 }, 'ratio must be a finite number >= 0, got "0.1"; ttlMs must be a finite number > 0, got -1'],
    [null, 'RetryBudget options must be an object, got null'],
  ])('refuses %j', (options, message) => {
    const error = errorOf(() => new RetryBudget(options as RetryBudgetOptions));
    expect(error).toBeInstanceOf(RangeError);
    expect(error.message).toBe(message);
  });

  it('documents its defaults', () => {
    expect(RETRY_BUDGET_DEFAULTS).toEqual({ ratio: 0.1, minRetriesPerSecond: 10, ttlMs: 10_000 });
  });
});

describe('RetryBudget toJSON() / fromJSON()', () => {
  const EPOCH = 1_700_000_000_123.456;

  it('round-trips mid-window exactly, and the restored budget grants the same retries', () => {
    const options = { ratio: 0.5, minRetriesPerSecond: 0.2, ttlMs: 10_000 };
    const { budget, clock } = setup(options, EPOCH);
    attempts(budget, 4);
    clock.tick(3_000);
    expect(drain(budget, 3)).toBe(3);
    attempts(budget, 1);
    const snapshot = budget.toJSON();
    expect(snapshot).toEqual({
      v: 1,
      window: {
        windowMs: 10_000, bucketCount: 10,
        buckets: [{ index: 1_700_000_000, deposits: 4, withdrawals: 0 }, { index: 1_700_000_003, deposits: 1, withdrawals: 3 }],
      },
    });
    const restored = roundTrip(budget, { clock, ...options });
    expect(restored.toJSON()).toEqual(snapshot);
    expect(restored.balance).toBe(budget.balance);
    for (const step of [0, 6_000, 1_000, 3_000]) {
      clock.tick(step);
      expect(drain(restored)).toBe(drain(budget));
      expect(restored.toJSON()).toEqual(budget.toJSON());
    }
  });

  it('drops a window of another length', () => {
    const { budget, clock } = setup({ minRetriesPerSecond: 1 });
    drain(budget);
    expect(roundTrip(budget, { clock, minRetriesPerSecond: 1, ttlMs: 5_000 }).balance).toBe(5);
  });

  it.each<[string, unknown, string, string]>([
    ['a string', '{}', 'snapshot', 'snapshot must be an object, got "{}"'],
    ['no version', { window: {} }, 'v', 'v must be 1 (the only snapshot version this library reads), got undefined'],
    ['no window', { v: 1 }, 'window', 'window must be an object, got undefined'],
    ['a zero window', { v: 1, window: { windowMs: 0, bucketCount: 10, buckets: [] } }, 'window.windowMs', 'window.windowMs must be a finite number > 0, got 0'],
    ['fractional slices', { v: 1, window: { windowMs: 1, bucketCount: 1.5, buckets: [] } }, 'window.bucketCount', 'window.bucketCount must be an integer >= 1, got 1.5'],
    ['buckets not an array', { v: 1, window: { windowMs: 1, bucketCount: 1, buckets: {} } }, 'window.buckets', 'window.buckets must be an array, got {}'],
    [
      'too many slices',
      { v: 1, window: { windowMs: 1, bucketCount: 1, buckets: [{ index: 1, deposits: 0, withdrawals: 0 }, { index: 2, deposits: 0, withdrawals: 0 }] } },
      'window.buckets.length',
      'window.buckets.length must be <= bucketCount (1), got 2',
    ],
    [
      'a negative counter',
      { v: 1, window: { windowMs: 1, bucketCount: 1, buckets: [{ index: 1, deposits: 1, withdrawals: -1 }] } },
      'window.buckets[0].withdrawals',
      'window.buckets[0].withdrawals must be an integer >= 0, got -1',
    ],
    [
      'a fractional slice number',
      { v: 1, window: { windowMs: 1, bucketCount: 1, buckets: [{ index: 0.5, deposits: 1, withdrawals: 1 }] } },
      'window.buckets[0].index',
      'window.buckets[0].index must be an integer, got 0.5',
    ],
  ])('fromJSON refuses %s', (_name, snapshot, field, message) => {
    const error = errorOf(() => RetryBudget.fromJSON(snapshot));
    expect(error).toBeInstanceOf(InvalidSnapshotError);
    expect(error).toMatchObject({ code: 'INVALID_SNAPSHOT', field, message: `Invalid RetryBudget snapshot: ${message}` });
  });
});
