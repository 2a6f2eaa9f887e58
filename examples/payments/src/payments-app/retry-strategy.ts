import type { RetryPolicy } from '@retryd/core';
import type { ChargeOutcome } from '../gateway/payment-gateway.js';

/**
 * How to retry one gateway: what its answers mean and how hard to push it. Each gateway has its own (which
 * statuses are a decline, how long its outages last, how many retries it tolerates); the payments flow never
 * hard-codes them. Policies are plain data: the durable one is sent to retryd as the task's `policy`.
 */
export interface GatewayRetryStrategy {
  /** The short, bounded in-process retry (`@retryd/core`'s `retry`) before handing the charge to retryd. */
  readonly inProcessPolicy: Partial<RetryPolicy>;
  /** The most one in-process attempt may take before it counts as ambiguous. */
  readonly attemptTimeoutMs: number;
  /** The policy retryd retries the charge with. */
  readonly durablePolicy: RetryPolicy;
  /** Whether an answered outcome is worth another attempt (a thrown error, ambiguous, always is). */
  isRetryable(outcome: ChargeOutcome): boolean;
}

const RETRYABLE = [408, 425, 429, 500, 502, 503, 504];

/**
 * The strategy for the mock gateway: 5xx, 408, 425 and 429 are transient, 402 is a decline. In process: 2 quick
 * attempts within a second. In retryd: 6 attempts, exponential from 50 ms to 1 s with full jitter, within 60 s —
 * short because the demo's gateway recovers in milliseconds; a real one would use minutes.
 */
export const mockGatewayStrategy: GatewayRetryStrategy = {
  inProcessPolicy: { maxAttempts: 2, initialDelayMs: 20, maxDelayMs: 100, jitterType: 'FULL', totalBudgetMs: 1_000 },
  attemptTimeoutMs: 500,
  durablePolicy: {
    maxAttempts: 6,
    backoffType: 'EXPONENTIAL',
    initialDelayMs: 50,
    multiplier: 2,
    maxDelayMs: 1_000,
    jitterType: 'FULL',
    totalBudgetMs: 60_000,
    estimatedCallMs: 1_000,
    retryableStatusCodes: RETRYABLE,
  },
  isRetryable: (outcome: ChargeOutcome) => outcome.kind === 'failed' && RETRYABLE.includes(outcome.status),
};
