import { describe, expect, it } from 'vitest';
import {
  DEFAULT_POLICY,
  DEFAULT_RETRYABLE_STATUS_CODES,
  retryableGrpcCodesOf,
  retryableStatusCodesOf,
  retryableStatusKindOf,
} from '../src/policy/retry-policy.js';
import { assertValidPolicy, InvalidPolicyError, validatePolicy } from '../src/policy/validate-policy.js';

const messages = (input: unknown, path?: string) => {
  const r = validatePolicy(input, path);
  return r.ok ? [] : r.violations.map((v) => v.message);
};

describe('validatePolicy', () => {
  it('accepts the default policy and returns a normalised copy', () => {
    const r = validatePolicy({ ...DEFAULT_POLICY, retryableStatusCodes: [503, 503, 429] });
    expect(r).toEqual({ ok: true, policy: { ...DEFAULT_POLICY, retryableStatusCodes: [503, 429] } });
    // A 503 made a success is fine once the policy no longer retries it.
    expect(validatePolicy({ ...DEFAULT_POLICY, retryableStatusCodes: [429], successStatusCodes: [409, 503, 409] })).toEqual({
      ok: true,
      policy: { ...DEFAULT_POLICY, retryableStatusCodes: [429], successStatusCodes: [409, 503] },
    });
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
    [{ retryableStatusCodes: 503 }, 'retryableStatusCodes must be an array of HTTP status codes or of gRPC status code names when present, got 503'],
    [{ retryableStatusCodes: [503, 'ABORTED'] }, 'retryableStatusCodes[1] must be an HTTP status like the first entry (HTTP statuses and gRPC codes are not mixed), got "ABORTED"'],
    [{ retryableStatusCodes: ['ABORTED', 503] }, 'retryableStatusCodes[1] must be a gRPC status code name like the first entry (HTTP statuses and gRPC codes are not mixed), got 503'],
    [{ retryableStatusCodes: ['OK'] }, 'retryableStatusCodes[0] must be a failure code (OK means success and is never retried), got "OK"'],
    [
      { retryableStatusCodes: ['unavailable'] },
      'retryableStatusCodes[0] must be a gRPC status code name (CANCELLED, UNKNOWN, INVALID_ARGUMENT, DEADLINE_EXCEEDED, NOT_FOUND, ALREADY_EXISTS, PERMISSION_DENIED, RESOURCE_EXHAUSTED, FAILED_PRECONDITION, ABORTED, OUT_OF_RANGE, UNIMPLEMENTED, INTERNAL, UNAVAILABLE, DATA_LOSS, UNAUTHENTICATED), got "unavailable"',
    ],
    [
      { retryableStatusCodes: ['ABORTED'], successStatusCodes: [409] },
      'successStatusCodes must be absent when retryableStatusCodes names gRPC codes (successStatusCodes are HTTP statuses, for HTTP targets), got [409]',
    ],
    [{ retryableStatusCodes: [503, 700] }, 'retryableStatusCodes[1] must be an integer HTTP status from 100 to 599, got 700'],
    [{ retryableStatusCodes: [200] }, 'retryableStatusCodes[0] must be a failure status (2xx means success and is never retried), got 200'],
    [{ successStatusCodes: 409 }, 'successStatusCodes must be an array of HTTP status codes when present, got 409'],
    [{ successStatusCodes: [409, 99] }, 'successStatusCodes[1] must be an integer HTTP status from 100 to 599, got 99'],
    [{ successStatusCodes: [204] }, 'successStatusCodes[0] must be a status other than 2xx (2xx always succeeds), got 204'],
    [{ retryableStatusCodes: [409, 503], successStatusCodes: [404, 409] }, 'successStatusCodes[1] must be a status not in retryableStatusCodes, got 409'],
    [
      { successStatusCodes: [503] },
      'successStatusCodes[0] must be a status the policy does not retry (retryableStatusCodes leaves it out; by default 408, 425, 429, 500, 502, 503 and 504 are retried), got 503',
    ],
  ])('refuses %j with a message naming the field and the rule', (override, message) => {
    expect(messages({ ...DEFAULT_POLICY, ...override })).toEqual([message]);
  });

  it('accepts gRPC status code names, deduplicated, and reads each kind with its own default', () => {
    const r = validatePolicy({ ...DEFAULT_POLICY, retryableStatusCodes: ['ABORTED', 'UNAVAILABLE', 'ABORTED'] });
    expect(r).toEqual({ ok: true, policy: { ...DEFAULT_POLICY, retryableStatusCodes: ['ABORTED', 'UNAVAILABLE'] } });
    const grpc = { retryableStatusCodes: ['ABORTED' as const] };
    expect(retryableGrpcCodesOf(grpc)).toEqual(['ABORTED']);
    expect(retryableStatusCodesOf(grpc)).toEqual(DEFAULT_RETRYABLE_STATUS_CODES);
    expect(retryableStatusKindOf(grpc)).toBe('grpc');
    const http = { retryableStatusCodes: [429] };
    expect(retryableGrpcCodesOf(http)).toEqual(['UNAVAILABLE', 'RESOURCE_EXHAUSTED', 'DEADLINE_EXCEEDED']);
    expect(retryableStatusCodesOf(http)).toEqual([429]);
    expect(retryableStatusKindOf(http)).toBe('http');
    // An empty list retries nothing, whatever the target.
    expect(retryableGrpcCodesOf({ retryableStatusCodes: [] })).toEqual([]);
    expect(retryableStatusCodesOf({ retryableStatusCodes: [] })).toEqual([]);
    expect(retryableStatusKindOf({})).toBe('any');
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
