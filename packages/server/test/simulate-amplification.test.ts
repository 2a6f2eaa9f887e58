import { describe, expect, it } from 'vitest';
import {
  AMPLIFICATION_BUDGET,
  AMPLIFICATION_MECHANISMS,
  simulateAmplification,
  type AmplificationMechanism,
  type AmplificationResult,
} from '../src/simulate/amplification-model.js';

describe('simulateAmplification', () => {
  const results = simulateAmplification();
  const at = (mechanism: AmplificationMechanism, failureRate: number) =>
    results.find((r) => r.mechanism === mechanism && r.failureRate === failureRate) as AmplificationResult;

  it('gives one row per failure rate and mechanism, every mechanism facing the same requests', () => {
    expect(results.map((r) => [r.failureRate, r.mechanism])).toEqual([0.1, 0.3, 0.5, 1].flatMap((f) => AMPLIFICATION_MECHANISMS.map((m) => [f, m])));
    // 100 clients × 10 requests/s × 60 s.
    expect(new Set(results.map((r) => r.requests)).size).toBe(1);
    expect(Math.abs((results[0] as AmplificationResult).requests - 60_000)).toBeLessThan(1_000);
  });

  it('without retries there is one call per request and the success rate is 1 − failure rate', () => {
    for (const f of [0.1, 0.3, 0.5]) {
      expect(at('no-retries', f)).toMatchObject({ amplification: 1, callsPerRequest: 1 });
      expect(Math.abs(at('no-retries', f).successRate - (1 - f))).toBeLessThan(0.01);
    }
  });

  it('3 retries approach 1 + f + f² + f³ calls per request and succeed 1 − f⁴ of the time', () => {
    for (const f of [0.1, 0.3, 0.5]) {
      expect(Math.abs(at('retries', f).amplification - (1 + f + f ** 2 + f ** 3))).toBeLessThan(0.02);
      expect(Math.abs(at('retries', f).successRate - (1 - f ** 4))).toBeLessThan(0.01);
    }
    expect(at('retries', 0.5).amplification).toBeGreaterThan(1.85);
  });

  it('when the server is down, the breaker keeps the load near 1× and the budget within 1 + its ratio, where 3 retries make it 4×', () => {
    const retries = at('retries', 1);
    const budget = at('retry-budget', 1);
    const breaker = at('circuit-breaker', 1);
    expect(retries.amplification).toBe(4);
    // The budget: retries at most `ratio` of first calls plus a floor over the window.
    expect(budget.amplification).toBeLessThan(1 + (AMPLIFICATION_BUDGET.ratio as number) + 0.05);
    expect(budget.amplification).toBeLessThan(retries.amplification - 1.5);
    expect(breaker.amplification).toBeLessThan(1.1);
    expect(breaker.callsPerRequest).toBeLessThan(0.01);
  });

  it('while the server answers part of its calls (10% to 50% failing), neither the budget nor the breaker gets in the way', () => {
    // The defaults leave a target that answers to its retries: at 50% they take 94% of requests to success, from 50%.
    for (const f of [0.1, 0.3, 0.5]) {
      for (const mechanism of ['retry-budget', 'circuit-breaker'] as const) {
        expect(Math.abs(at(mechanism, f).amplification - at('retries', f).amplification)).toBeLessThan(0.01);
        expect(Math.abs(at(mechanism, f).successRate - at('retries', f).successRate)).toBeLessThan(0.005);
      }
    }
  });

  it('is deterministic: the same seed gives the same results, another seed others', () => {
    const options = { failureRates: [0.3], durationMs: 10_000 };
    const a = simulateAmplification({ ...options, seed: 11 });
    expect(simulateAmplification({ ...options, seed: 11 })).toEqual(a);
    expect(simulateAmplification({ ...options, seed: 12 })).not.toEqual(a);
  });
});
