import type { AttemptEvent, CircuitBreakerOptions, Clock, Random, RetryPolicy } from '@retryd/core';
import type { GrpcHandoffOptions } from './grpc-handoff.js';

/** Options of {@link retryInterceptor}: `target` is required. */
export interface GrpcRetryOptions {
  /**
   * The channel's target, as the client was made with (`'localhost:50051'`, `'dns:///orders.internal:443'`): it names
   * the origin whose circuit breaker the calls share, and goes into the idempotency keys derived for them. An
   * interceptor cannot see its channel, so it is told.
   */
  target: string;
  /**
   * The retry policy, as some of its fields over core's `DEFAULT_POLICY` and a deadline of 30 s
   * (`IN_REQUEST_DEADLINE_MS`), as the retrying fetch takes it: 3 attempts, exponential from 100 ms up to 10 s with
   * full jitter. `totalBudgetMs` is the most a call may take; a call's own deadline, when shorter, wins.
   * `retryableStatusCodes` names the gRPC codes to retry, as the retryd service reads it for a gRPC task; default
   * `DEFAULT_RETRYABLE_GRPC_CODES`: `UNAVAILABLE`, `RESOURCE_EXHAUSTED`, `DEADLINE_EXCEEDED`.
   * @example `{ maxAttempts: 4, retryableStatusCodes: [...DEFAULT_RETRYABLE_GRPC_CODES, 'ABORTED'] }`
   */
  policy?: Partial<RetryPolicy>;
  /**
   * The circuit breaker of the target's origin. Default: the one every `retryInterceptor` of the process shares for
   * that origin (core's defaults), so two clients of one server fail fast together. Options of your own give this
   * interceptor breakers of its own (pass the one interceptor to each client that should share them); `false`, none.
   */
  breaker?: CircuitBreakerOptions | false;
  /**
   * Hand a call that still fails in a retryable way (its retries used up, its deadline passed, its circuit open) to
   * the retryd service, which retries it from its store; the call then fails `UNAVAILABLE` with the task's id in its
   * `retryd-task-id` metadata (see `retrydTaskIdOf`). Default: no hand-off.
   */
  handoff?: GrpcHandoffOptions;
  /** Every attempt's outcome (core's `AttemptEvent`), for logs and metrics. */
  onAttempt?: (event: AttemptEvent) => void;
  /** Time source and sleeps (default the system clock). */
  clock?: Clock;
  /** Randomness for jitter (default `Math.random`). */
  random?: Random;
  /** Wall-clock time, which a call's deadline is given in (default `Date.now`). */
  wallClock?: () => number;
}
