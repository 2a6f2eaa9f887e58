import { validatePolicy } from '@retryd/core';
import { sequenceRandom } from '@retryd/core/testing';
import { describe, expect, it } from 'vitest';
import { simulateContention, type ContentionResult } from '../src/simulate/contention-model.js';
import { CONTENTION_POLICIES, CONTENTION_STRATEGIES, contentionSleep, type ContentionStrategy } from '../src/simulate/contention-strategies.js';

// The post's formulas, written out independently of computeDelay: base 5 ms, cap 2,000 ms, n = 1 after the first conflict.
const BASE = 5;
const CAP = 2_000;
const expo = (n: number) => Math.min(CAP, BASE * 2 ** n);
const RANDOMS = [0, 0.25, 0.5, 0.999_999];

describe('contention strategies: computeDelay with the mapped policy gives the post\'s formulas', () => {
  it('every mapped policy is a valid retryd policy, and none has none', () => {
    for (const strategy of CONTENTION_STRATEGIES) {
      const policy = CONTENTION_POLICIES[strategy];
      if (strategy === 'none') expect(policy).toBeNull();
      else expect(validatePolicy(policy)).toMatchObject({ ok: true });
    }
  });

  it.each(Array.from({ length: 14 }, (_, i) => i + 1))('after conflict n = %i', (n) => {
    for (const r of RANDOMS) {
      const random = () => r;
      expect(contentionSleep('none', n, 0, random)).toBe(0);
      expect(contentionSleep('exponential', n, 0, random)).toBe(expo(n));
      expect(contentionSleep('full', n, 0, random)).toBe(r * expo(n));
      expect(contentionSleep('equal', n, 0, random)).toBe(expo(n) / 2 + r * (expo(n) / 2));
    }
  });

  it('exponential doubles from 10 ms and stays at the 2 s cap from the 9th conflict', () => {
    const sleeps = Array.from({ length: 11 }, (_, i) => contentionSleep('exponential', i + 1, 0, () => 0.5));
    expect(sleeps).toEqual([10, 20, 40, 80, 160, 320, 640, 1280, 2000, 2000, 2000]);
  });

  it('decorrelated is min(cap, uniform(base, prev·3)) with prev starting at base, chained over the conflicts', () => {
    for (const values of [[0.5], [0.999_999], [0, 1 - 2 ** -32, 0.3, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.1, 0.6]]) {
      const random = sequenceRandom(...values);
      const expected = sequenceRandom(...values);
      let prevFormula = BASE;
      let prevSleep = 0;
      for (let n = 1; n <= 12; n++) {
        const r = expected();
        const formula = Math.min(CAP, BASE + r * (prevFormula * 3 - BASE));
        const sleep = contentionSleep('decorrelated', n, prevSleep, random);
        expect(sleep).toBe(formula);
        prevFormula = formula;
        prevSleep = sleep;
      }
    }
  });

  it('decorrelated reaches the cap and stays there when the draws are high', () => {
    let prev = 0;
    for (let n = 1; n <= 10; n++) prev = contentionSleep('decorrelated', n, prev, () => 0.999_999);
    expect(prev).toBe(CAP);
  });
});

describe('simulateContention', () => {
  it('one client writes once, in four network delays (read, its answer, the write, its answer)', () => {
    for (const r of simulateContention({ clients: [1], runs: 200 })) {
      expect(r.meanCalls).toBe(1);
      expect(r.meanTimeMs).toBeGreaterThan(39);
      expect(r.meanTimeMs).toBeLessThan(41);
    }
  });

  it('is deterministic: the same seed gives the same results, another seed others; a row does not depend on the other rows', () => {
    const run = (seed: number, clients: number[]) => simulateContention({ clients, runs: 10, seed });
    const a = run(5, [20, 60]);
    expect(run(5, [20, 60])).toEqual(a);
    expect(run(6, [20, 60])).not.toEqual(a);
    expect(run(5, [60])).toEqual(a.filter((r) => r.clients === 60));
    expect(a.map((r) => [r.clients, r.strategy])).toEqual([20, 60].flatMap((n) => CONTENTION_STRATEGIES.map((s) => [n, s])));
  });

  it('reproduces the post: at high contention no backoff and plain exponential make far more calls than jitter, full jitter among the fewest', () => {
    const results = simulateContention({ clients: [150, 190], runs: 30 });
    for (const clients of [150, 190]) {
      const at = (strategy: ContentionStrategy): ContentionResult => results.find((r) => r.clients === clients && r.strategy === strategy) as ContentionResult;
      const jittered = (['full', 'equal', 'decorrelated'] as const).map((s) => at(s).meanCalls);
      expect(at('none').meanCalls).toBeGreaterThan(2.5 * Math.max(...jittered));
      expect(at('exponential').meanCalls).toBeGreaterThan(1.8 * Math.max(...jittered));
      const fewest = Math.min(...CONTENTION_STRATEGIES.map((s) => at(s).meanCalls));
      expect(at('full').meanCalls).toBeLessThanOrEqual(1.03 * fewest);
      // Plain exponential keeps the clients in step: every round ends in one success and costs the whole sleep.
      expect(at('exponential').meanTimeMs).toBeGreaterThan(5 * Math.max(at('full').meanTimeMs, at('equal').meanTimeMs, at('decorrelated').meanTimeMs));
      // Equal jitter does full jitter's work but always waits at least half its step.
      expect(at('equal').meanTimeMs).toBeGreaterThan(1.15 * at('full').meanTimeMs);
    }
  });
});
