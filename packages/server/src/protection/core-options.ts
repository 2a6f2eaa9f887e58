import type { CircuitBreakerOptions, RetryBudgetOptions } from '@retryd/core';
import type { BreakerSettings, RetryBudgetSettings } from './target-settings.js';

/** What a target's breaker settings say to `@retryd/core`'s `CircuitBreaker` (the caller adds clock, jitter, random). */
export function breakerOptionsOf(s: BreakerSettings): Omit<CircuitBreakerOptions, 'clock' | 'random' | 'openJitter'> {
  return {
    consecutiveFailures: s.consecutiveFailures,
    failureRateThreshold: s.failureRateThreshold,
    minimumCalls: s.minimumCalls,
    windowMs: s.windowMs,
    openDurationMs: s.openDurationMs,
    openBackoffMultiplier: s.openBackoffMultiplier,
    maxOpenDurationMs: s.maxOpenDurationMs,
    halfOpenProbes: s.halfOpenProbes,
  };
}

/** What a target's retry budget settings say to `@retryd/core`'s `RetryBudget` (the caller adds the clock). */
export function retryBudgetOptionsOf(s: RetryBudgetSettings): Omit<RetryBudgetOptions, 'clock'> {
  return { ratio: s.retryRatio, minRetriesPerSecond: s.minRetriesPerSecond, ttlMs: s.windowMs };
}
