import { DEFAULT_RETRYABLE_GRPC_CODES, isGrpcStatusName, type GrpcFailureName } from '../grpc/grpc-status.js';
import type { FailureClass } from '../http/failure-class.js';

/** How the base delay grows with the retry number. */
export const BackoffType = {
  EXPONENTIAL: 'EXPONENTIAL',
  LINEAR: 'LINEAR',
  FIXED: 'FIXED',
} as const;
export type BackoffType = (typeof BackoffType)[keyof typeof BackoffType];

/**
 * How randomness spreads the delay so that many clients failing together do not retry together
 * (see the AWS Architecture Blog, "Exponential Backoff And Jitter").
 */
export const JitterType = {
  NONE: 'NONE',
  FULL: 'FULL',
  EQUAL: 'EQUAL',
  DECORRELATED: 'DECORRELATED',
} as const;
export type JitterType = (typeof JitterType)[keyof typeof JitterType];

/**
 * How long to wait before each retry: the growth, its bounds and the jitter. A {@link RetryPolicy} is one (its
 * main schedule) and may name others for particular failures in `backoffByClass`. `computeDelay` reads nothing else.
 */
export interface BackoffSchedule {
  backoffType: BackoffType;
  /** Delay before the first retry, in ms: `> 0`. */
  initialDelayMs: number;
  /** Growth factor of EXPONENTIAL backoff: `>= 1` (ignored by LINEAR and FIXED). */
  multiplier: number;
  /** No computed delay exceeds this, in ms: `>= initialDelayMs`. */
  maxDelayMs: number;
  jitterType: JitterType;
}

/**
 * Schedules for particular kinds of failure (see {@link FailureClass}), each given as the fields it changes from
 * the policy's main schedule: a class left out, and every field a class leaves out, follow the main schedule.
 * A class's schedule, once merged, obeys the rules of the main one (`maxDelayMs >= initialDelayMs` included).
 *
 * @example
 * ```ts
 * // 429s wait 5 s, 10 s, 20 s … up to 2 min; 5xx keep the main schedule; a refused connection retries after 200 ms.
 * { rateLimited: { initialDelayMs: 5_000, maxDelayMs: 120_000 }, connectionRefused: { backoffType: 'FIXED', initialDelayMs: 200 } }
 * ```
 */
export type BackoffByClass = { [K in FailureClass]?: Partial<BackoffSchedule> };

/**
 * A retry policy: plain, serialisable data, shared by the library, the service's HTTP API and its stores.
 * Validate untrusted input with {@link validatePolicy}.
 *
 * The fields of {@link BackoffSchedule} are its main schedule.
 */
export interface RetryPolicy extends BackoffSchedule {
  /** Attempts in all, the first included: `>= 1`; `1` means no retries. */
  maxAttempts: number;
  /**
   * Wall-clock budget of the whole call, in ms, attempts and waits included. The library counts it from the call of
   * `retry()` and aborts an attempt still running when it ends; the service counts it from the task's creation (or
   * its replay), so time queued, held and waiting on Retry-After counts too. Absent: no budget.
   */
  totalBudgetMs?: number;
  /** Headroom kept in the budget for the next call, in ms: no attempt starts with less than this left. */
  estimatedCallMs?: number;
  /**
   * Statuses worth retrying: HTTP statuses (`[429, 503]`) for HTTP targets, or gRPC status code names
   * (`["UNAVAILABLE", "ABORTED"]`) for gRPC targets of the retryd service; never both in one list. Default
   * {@link DEFAULT_RETRYABLE_STATUS_CODES} for HTTP, `DEFAULT_RETRYABLE_GRPC_CODES` for gRPC: a list of one kind leaves
   * the other kind at its default (see {@link retryableStatusCodesOf} and {@link retryableGrpcCodesOf}).
   */
  retryableStatusCodes?: (number | GrpcFailureName)[];
  /**
   * Statuses besides 2xx that mean the call did what it was for: a `409 Conflict` from a downstream that answers so to
   * a key it already processed, a `404` from a DELETE of what is already gone. Such an answer ends the call as a
   * success, not a failure. None of them may also be retried (`retryableStatusCodes`, or its default). Default none.
   */
  successStatusCodes?: number[];
  /**
   * Own schedules for 429s, 5xx, timeouts and refused connections, over the main schedule (see
   * {@link BackoffByClass}). Absent: every failure follows the main schedule.
   *
   * The retry number `n` a schedule is computed for counts every retry of the run, whatever its class, and DECORRELATED
   * jitter's previous delay is the last backoff delay of the run, whichever schedule chose it: a task that alternates
   * 429s and 503s keeps backing off, each wait bounded by its own class's `initialDelayMs` and `maxDelayMs`.
   */
  backoffByClass?: BackoffByClass;
}

/**
 * Statuses retried when a policy names none: 408 Request Timeout, 425 Too Early, 429 Too Many Requests,
 * 500, 502, 503 and 504. Every other 4xx means the request itself is wrong and will fail again.
 */
export const DEFAULT_RETRYABLE_STATUS_CODES: readonly number[] = Object.freeze([408, 425, 429, 500, 502, 503, 504]);

/**
 * The library's defaults for fields a caller leaves out of `retry()`'s policy:
 * 3 attempts, exponential from 100 ms doubling up to 10 s, full jitter, no budget.
 */
export const DEFAULT_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 3,
  backoffType: BackoffType.EXPONENTIAL,
  initialDelayMs: 100,
  multiplier: 2,
  maxDelayMs: 10_000,
  jitterType: JitterType.FULL,
});

/** The statuses besides 2xx a policy counts as success (none by default). */
export function successStatusCodesOf(policy: Pick<RetryPolicy, 'successStatusCodes'>): readonly number[] {
  return policy.successStatusCodes ?? NO_STATUS_CODES;
}

const NO_STATUS_CODES: readonly number[] = Object.freeze([]);

/**
 * The HTTP statuses a policy retries: its own list, or the defaults when it names none, or names gRPC codes (a list of
 * gRPC codes says nothing of HTTP).
 */
export function retryableStatusCodesOf(policy: Pick<RetryPolicy, 'retryableStatusCodes'>): readonly number[] {
  const own = policy.retryableStatusCodes;
  if (own === undefined || (own.length > 0 && typeof own[0] === 'string')) return DEFAULT_RETRYABLE_STATUS_CODES;
  return own as number[];
}

/**
 * The gRPC status codes a policy retries, by name: its own list when it names gRPC codes (an empty list retries none),
 * else `DEFAULT_RETRYABLE_GRPC_CODES` (UNAVAILABLE, RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED).
 */
export function retryableGrpcCodesOf(policy: Pick<RetryPolicy, 'retryableStatusCodes'>): readonly GrpcFailureName[] {
  const own = policy.retryableStatusCodes;
  if (own === undefined || (own.length > 0 && !isGrpcStatusName(own[0]))) return DEFAULT_RETRYABLE_GRPC_CODES;
  return own as GrpcFailureName[];
}

/**
 * Which kind of status a policy's `retryableStatusCodes` names: `http` (numbers), `grpc` (gRPC code names), or `any`
 * (none given, or an empty list: fits a target of either kind).
 */
export function retryableStatusKindOf(policy: Pick<RetryPolicy, 'retryableStatusCodes'>): 'http' | 'grpc' | 'any' {
  const first = policy.retryableStatusCodes?.[0];
  if (first === undefined) return 'any';
  return typeof first === 'string' ? 'grpc' : 'http';
}
