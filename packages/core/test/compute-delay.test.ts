import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { baseDelay, computeDelay } from '../src/backoff/compute-delay.js';
import type { RetryPolicy } from '../src/policy/retry-policy.js';
import { validatePolicy } from '../src/policy/validate-policy.js';
import { seededRandom, sequenceRandom } from '../src/testing/seeded-random.js';

const policy = (overrides: Partial<RetryPolicy>): RetryPolicy => ({
  maxAttempts: 10,
  backoffType: 'EXPONENTIAL',
  initialDelayMs: 100,
  multiplier: 2,
  maxDelayMs: 1_000,
  jitterType: 'NONE',
  ...overrides,
});

const sequence = (p: RetryPolicy, count: number, random = Math.random) => {
  const out: number[] = [];
  let previous = 0;
  for (let n = 1; n <= count; n++) {
    previous = computeDelay(p, n, previous, random);
    out.push(previous);
  }
  return out;
};

describe('computeDelay without jitter', () => {
  it('EXPONENTIAL multiplies from initialDelayMs and caps at maxDelayMs', () => {
    expect(sequence(policy({}), 6)).toEqual([100, 200, 400, 800, 1000, 1000]);
  });
  it('EXPONENTIAL with a fractional multiplier', () => {
    expect(sequence(policy({ multiplier: 1.5, maxDelayMs: 10_000 }), 4)).toEqual([100, 150, 225, 337.5]);
  });
  it('LINEAR grows by initialDelayMs per retry', () => {
    expect(sequence(policy({ backoffType: 'LINEAR', maxDelayMs: 350 }), 5)).toEqual([100, 200, 300, 350, 350]);
  });
  it('FIXED always waits initialDelayMs', () => {
    expect(sequence(policy({ backoffType: 'FIXED' }), 4)).toEqual([100, 100, 100, 100]);
  });
  it('multiplier 1 keeps EXPONENTIAL flat', () => {
    expect(sequence(policy({ multiplier: 1 }), 3)).toEqual([100, 100, 100]);
  });
});

describe('computeDelay with jitter', () => {
  it('FULL is uniform(0, cap): exact values for given random draws', () => {
    const r = sequenceRandom(0, 0.5, 0.25, 0.999);
    expect(sequence(policy({ jitterType: 'FULL' }), 4, r)).toEqual([0, 100, 100, 799.2]);
  });
  it('EQUAL is cap/2 + uniform(0, cap/2)', () => {
    const r = sequenceRandom(0, 0.5, 1);
    expect(sequence(policy({ jitterType: 'EQUAL' }), 3, r)).toEqual([50, 150, 400]);
  });
  it('DECORRELATED is min(maxDelayMs, uniform(initial, max(initial, previous) × 3))', () => {
    const r = sequenceRandom(0.5, 0.5, 0.5, 0.5);
    // 100 + 0.5×(300−100) = 200; 100 + 0.5×(600−100) = 350; 100 + 0.5×(1050−100) = 575; min(1000, 100 + 0.5×(1725−100)) = 912.5
    expect(sequence(policy({ jitterType: 'DECORRELATED' }), 4, r)).toEqual([200, 350, 575, 912.5]);
  });
  it('DECORRELATED treats a non-finite previous delay as the initial delay', () => {
    expect(computeDelay(policy({ jitterType: 'DECORRELATED' }), 2, Number.NaN, () => 1)).toBe(300);
  });
  it('the same seed gives the same sequence', () => {
    const p = policy({ jitterType: 'FULL' });
    expect(sequence(p, 8, seededRandom(7))).toEqual(sequence(p, 8, seededRandom(7)));
  });
});

describe('computeDelay edge cases', () => {
  it('never overflows: n up to 10^6 with a large multiplier stays at maxDelayMs', () => {
    const p = policy({ multiplier: 1e6, maxDelayMs: 60_000 });
    for (const n of [1_000, 10_000, 1_000_000]) {
      expect(computeDelay(p, n, 0, () => 0.999)).toBe(60_000);
      expect(baseDelay(p, n)).toBe(60_000);
    }
    expect(computeDelay(policy({ backoffType: 'LINEAR', maxDelayMs: 1e12 }), 1_000_000, 0, () => 0)).toBe(1e8);
  });
  it('refuses a retry number that is not an integer >= 1', () => {
    expect(() => computeDelay(policy({}), 0, 0, Math.random)).toThrow('n must be an integer >= 1, got 0');
    expect(() => computeDelay(policy({}), 1.5, 0, Math.random)).toThrow(RangeError);
  });
});

const validPolicy = fc
  .record({
    maxAttempts: fc.integer({ min: 1, max: 10_000 }),
    backoffType: fc.constantFrom('EXPONENTIAL', 'LINEAR', 'FIXED' as const),
    initialDelayMs: fc.double({ min: 0.001, max: 1e9, noNaN: true }),
    multiplier: fc.double({ min: 1, max: 1e6, noNaN: true }),
    extra: fc.double({ min: 0, max: 1e9, noNaN: true }),
    jitterType: fc.constantFrom('NONE', 'FULL', 'EQUAL', 'DECORRELATED' as const),
  })
  .map(({ extra, ...p }): RetryPolicy => ({ ...p, maxDelayMs: p.initialDelayMs + extra }));

describe('computeDelay properties', () => {
  it('every delay is finite and within its formula bounds for any valid policy and n <= 10^6', () => {
    fc.assert(
      fc.property(
        validPolicy,
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.double({ min: 0, max: 1e12, noNaN: true }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (p, n, previous, draw) => {
          expect(validatePolicy(p).ok).toBe(true);
          const cap = baseDelay(p, n);
          const d = computeDelay(p, n, previous, () => draw);
          expect(Number.isFinite(d)).toBe(true);
          expect(cap).toBeLessThanOrEqual(p.maxDelayMs);
          switch (p.jitterType) {
            case 'NONE':
              expect(d).toBe(cap);
              break;
            case 'FULL':
              expect(d).toBeGreaterThanOrEqual(0);
              expect(d).toBeLessThanOrEqual(cap);
              break;
            case 'EQUAL':
              expect(d).toBeGreaterThanOrEqual(cap / 2);
              expect(d).toBeLessThanOrEqual(cap);
              break;
            case 'DECORRELATED':
              expect(d).toBeGreaterThanOrEqual(Math.min(p.initialDelayMs, p.maxDelayMs));
              expect(d).toBeLessThanOrEqual(p.maxDelayMs);
              break;
          }
        },
      ),
      { numRuns: 2_000 },
    );
  });
});

describe('FULL jitter distribution', () => {
  it('is uniform over [0, cap]: chi-square over 20 bins stays below the 0.1% critical value', () => {
    const p = policy({ jitterType: 'FULL', initialDelayMs: 1_000, maxDelayMs: 1_000 });
    const random = seededRandom(20261125);
    const bins = new Array<number>(20).fill(0);
    const samples = 200_000;
    for (let i = 0; i < samples; i++) {
      const d = computeDelay(p, 1, 0, random);
      bins[Math.min(19, Math.floor(d / 50))]! += 1;
    }
    const expected = samples / 20;
    const chiSquare = bins.reduce((sum, observed) => sum + (observed - expected) ** 2 / expected, 0);
    // df = 19; the 99.9th percentile of chi-square(19) is 43.82.
    expect(chiSquare).toBeLessThan(43.82);
    const mean = bins.reduce((s, c, i) => s + c * (i * 50 + 25), 0) / samples;
    expect(Math.abs(mean - 500)).toBeLessThan(5);
  });
});
