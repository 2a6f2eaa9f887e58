import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY } from '../src/policy/retry-policy.js';
import { assertValidPolicy, InvalidPolicyError, validatePolicy } from '../src/policy/validate-policy.js';

const messages = (input: unknown, path?: string) => {
  const r = validatePolicy(input, path);
  return r.ok ? [] : r.violations.map((v) => v.message);
};

describe('validatePolicy', () => {
  it('accepts the default policy and returns a normalised copy', () => {
    const r = validatePolicy({ ...DEFAULT_POLICY, retryableStatusCodes: [503, 503, 429] });
    expect(r).toEqual({ ok: true, policy: { ...DEFAULT_POLICY, retryableStatusCodes: [503, 429] } });
  });

  it.each([
    [{ maxAttempts: 0 }, 'maxAttempts must be an integer >= 1, got 0'],
    [{ maxAttempts: 1.5 }, 'maxAttempts must be an integer >= 1, got 1.5'],
    [{ maxAttempts: '3' }, 'maxAttempts must be an integer >= 1, got "3"'],
    [{ maxAttempts: 20_000 }, 'maxAttempts must be <= 10000, got 20000'],
    [{ maxDelayMs: 1e15 }, 'maxDelayMs must be <= 315360000000, got 1000000000000000'],
    [{ backoffType: 'exponential' }, 'backoffType must be one of EXPONENTIAL, LINEAR, FIXED, got "exponential"'],
    [{ initialDelayMs: 0 }, 'initialDelayMs must be a number > 0, got 0'],
    [{ initialDelayMs: Number.NaN }, 'initialDelayMs must be a number > 0, got NaN'],
    [{ multiplier: 0.5 }, 'multiplier must be a finite number >= 1, got 0.5'],
    [{ multiplier: Infinity }, 'multiplier must be a finite number >= 1, got Infinity'],
    [{ maxDelayMs: 50 }, 'maxDelayMs must be >= initialDelayMs (100), got 50'],
    [{ jitterType: 'RANDOM' }, 'jitterType must be one of NONE, FULL, EQUAL, DECORRELATED, got "RANDOM"'],
    [{ totalBudgetMs: -1 }, 'totalBudgetMs must be a number > 0 when present, got -1'],
    [{ estimatedCallMs: -5 }, 'estimatedCallMs must be a number >= 0 when present, got -5'],
    [{ totalBudgetMs: 1000, estimatedCallMs: 1000 }, 'estimatedCallMs must be < totalBudgetMs (1000), got 1000'],
    [{ retryableStatusCodes: 503 }, 'retryableStatusCodes must be an array of HTTP status codes when present, got 503'],
    [{ retryableStatusCodes: [503, 700] }, 'retryableStatusCodes[1] must be an integer HTTP status from 100 to 599, got 700'],
    [{ retryableStatusCodes: [200] }, 'retryableStatusCodes[0] must be a failure status (2xx means success and is never retried), got 200'],
  ])('refuses %j with a message naming the field and the rule', (override, message) => {
    expect(messages({ ...DEFAULT_POLICY, ...override })).toEqual([message]);
  });

  it('refuses unknown fields so a typo is not silently ignored', () => {
    expect(messages({ ...DEFAULT_POLICY, maxAttempt: 3 })[0]).toMatch(/^maxAttempt is not a policy field \(known: maxAttempts,/);
  });

  it('reports every violation at once, prefixed with the path', () => {
    expect(messages({ ...DEFAULT_POLICY, maxAttempts: 0, multiplier: 0 }, 'policy')).toEqual([
      'policy.maxAttempts must be an integer >= 1, got 0',
      'policy.multiplier must be a finite number >= 1, got 0',
    ]);
  });

  it('refuses what is not an object', () => {
    expect(messages(null)).toEqual(['policy must be an object, got null']);
    expect(messages([1], 'policy')).toEqual(['policy must be an object, got [1]']);
  });

  it('assertValidPolicy throws InvalidPolicyError carrying the violations', () => {
    let caught: unknown;
    try {
      assertValidPolicy({ ...DEFAULT_POLICY, maxAttempts: 0 });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(InvalidPolicyError);
    expect((caught as InvalidPolicyError).code).toBe('INVALID_POLICY');
    expect((caught as InvalidPolicyError).violations[0]?.field).toBe('maxAttempts');
  });
});
