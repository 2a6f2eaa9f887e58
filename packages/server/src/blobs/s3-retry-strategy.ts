import type { S3ClientConfig } from '@aws-sdk/client-s3';
import { BackoffType, computeDelay, JitterType, type Random, type RetryPolicy } from '@retryd/core';

/** The SDK's retry port (`RetryStrategyV2`), named through the client's own config type. */
type RetryStrategyV2 = Extract<NonNullable<S3ClientConfig['retryStrategy']>, { acquireInitialRetryToken: unknown }>;
type RetryToken = Awaited<ReturnType<RetryStrategyV2['acquireInitialRetryToken']>>;
type RetryErrorInfo = Parameters<RetryStrategyV2['refreshRetryTokenForRetry']>[1];

/**
 * How the S3 blob store retries its own requests: 3 attempts in all, 50 ms doubling to 1 s, full jitter. Short,
 * because an enqueue waits on it: an S3 outage should turn into a 503 after two short waits (at most 50 ms, then
 * 100 ms, fully jittered), not a hung request.
 */
export const S3_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 3,
  backoffType: BackoffType.EXPONENTIAL,
  initialDelayMs: 50,
  multiplier: 2,
  maxDelayMs: 1_000,
  jitterType: JitterType.FULL,
});

/**
 * The S3 client's retries, through core's `computeDelay` like every retry retryd makes, so that many instances
 * retrying a failing S3 endpoint do not do it in lockstep. Retries what the SDK classes as transient, throttling
 * or a server error; never a client error (a 404, a 403, a bad request). The returned token carries the delay and
 * the SDK's retry middleware waits it out.
 *
 * @example
 * ```ts
 * new S3Client({ retryStrategy: new S3RetryStrategy() });
 * ```
 */
export class S3RetryStrategy implements RetryStrategyV2 {
  constructor(
    private readonly policy: Readonly<RetryPolicy> = S3_RETRY_POLICY,
    private readonly random: Random = Math.random,
  ) {}

  acquireInitialRetryToken(): Promise<RetryToken> {
    return Promise.resolve(tokenOf(0, 0));
  }

  refreshRetryTokenForRetry(token: RetryToken, errorInfo: RetryErrorInfo): Promise<RetryToken> {
    const retry = token.getRetryCount() + 1;
    if (errorInfo.errorType === 'CLIENT_ERROR' || retry >= this.policy.maxAttempts) {
      // The middleware rethrows the request's own error when the refresh is refused.
      return Promise.reject(new Error('no retry left'));
    }
    return Promise.resolve(tokenOf(retry, computeDelay(this.policy, retry, token.getRetryDelay(), this.random)));
  }

  recordSuccess(): void {
    // No retry quota to refill: the attempt count bounds the retries of each request.
  }
}

function tokenOf(retryCount: number, delayMs: number): RetryToken {
  return { getRetryCount: () => retryCount, getRetryDelay: () => delayMs };
}
