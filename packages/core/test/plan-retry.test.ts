import { describe, expect, it } from 'vitest';
import type { RetryPolicy } from '../src/policy/retry-policy.js';
import { budgetAllowsAttempt, planRetry } from '../src/retry/plan-retry.js';

const policy: RetryPolicy = { maxAttempts: 5, backoffType: 'FIXED', initialDelayMs: 100, multiplier: 1, maxDelayMs: 100, jitterType: 'NONE' };
const plan = (over: Partial<Parameters<typeof planRetry>[0]>) =>
  planRetry({ policy, attemptsMade: 1, elapsedMs: 0, previousDelayMs: 0, random: () => 0.5, ...over });

describe('planRetry', () => {
  it('retries with the computed delay and remembers it', () => {
    expect(plan({})).toEqual({ retry: true, delayMs: 100, previousDelayMs: 100, hinted: false });
  });
  it('gives up at maxAttempts', () => {
    expect(plan({ attemptsMade: 5 })).toEqual({ retry: false, reason: 'max_attempts' });
  });
  it('a hint replaces the delay and leaves previousDelayMs alone', () => {
    expect(plan({ retryAfterMs: 0, previousDelayMs: 42 })).toEqual({ retry: true, delayMs: 0, previousDelayMs: 42, hinted: true });
  });
  it('clips to the latest start and gives up once it has passed', () => {
    const budget = { ...policy, totalBudgetMs: 1_000, estimatedCallMs: 200 };
    expect(plan({ policy: budget, elapsedMs: 750 })).toMatchObject({ retry: true, delayMs: 50 });
    expect(plan({ policy: budget, elapsedMs: 800 })).toMatchObject({ retry: true, delayMs: 0 });
    expect(plan({ policy: budget, elapsedMs: 801 })).toEqual({ retry: false, reason: 'budget' });
    expect(plan({ policy: budget, elapsedMs: 700, retryAfterMs: 101 })).toEqual({ retry: false, reason: 'retry_after_beyond_budget' });
    expect(plan({ policy: budget, elapsedMs: 700, retryAfterMs: 100 })).toMatchObject({ retry: true, delayMs: 100, hinted: true });
  });
  it('with capRetryAfterAtMaxDelay, gives up on a hint longer than the maxDelayMs of the failure class schedule', () => {
    const capped = { capRetryAfterAtMaxDelay: true };
    expect(plan({ ...capped, retryAfterMs: 101 })).toEqual({ retry: false, reason: 'retry_after_beyond_budget' });
    expect(plan({ ...capped, retryAfterMs: 100 })).toMatchObject({ retry: true, delayMs: 100, hinted: true });
    expect(plan({ retryAfterMs: 3_600_000 })).toMatchObject({ retry: true, delayMs: 3_600_000, hinted: true }); // the service's way
    const rateLimited: RetryPolicy = { ...policy, backoffByClass: { rateLimited: { maxDelayMs: 120_000 } } };
    expect(plan({ ...capped, policy: rateLimited, failureClass: 'rateLimited', retryAfterMs: 120_000 })).toMatchObject({ retry: true, delayMs: 120_000 });
    expect(plan({ ...capped, policy: rateLimited, failureClass: 'serverError', retryAfterMs: 120_000 })).toEqual({ retry: false, reason: 'retry_after_beyond_budget' });
    // A budget already spent says so, whatever the hint.
    expect(plan({ ...capped, policy: { ...policy, totalBudgetMs: 1_000 }, elapsedMs: 1_001, retryAfterMs: 101 })).toEqual({ retry: false, reason: 'budget' });
  });
  it('budgetAllowsAttempt keeps estimatedCallMs of headroom', () => {
    expect(budgetAllowsAttempt(policy, 1e12)).toBe(true);
    const budget = { ...policy, totalBudgetMs: 1_000, estimatedCallMs: 200 };
    expect(budgetAllowsAttempt(budget, 800)).toBe(true);
    expect(budgetAllowsAttempt(budget, 801)).toBe(false);
  });
});
