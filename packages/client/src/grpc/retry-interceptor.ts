import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import { assertValidPolicy, DEFAULT_POLICY, type RetryOptions } from '@retryd/core';
import { withCallerHooks } from '../shared/caller-hooks.js';
import { IN_REQUEST_DEADLINE_MS, withDefaultDeadline } from '../shared/default-deadline.js';
import { OriginBreakers } from '../shared/origin-breakers.js';
import { grpcHandoff } from './grpc-handoff.js';
import { grpcOrigin } from './grpc-origin.js';
import type { GrpcRetryOptions } from './retry-interceptor-options.js';
import { RetryingUnaryCall, type GrpcCallPlan } from './retrying-unary-call.js';
import { failureClassOfCode, retryableCodesOf } from './status-codes.js';
import { GrpcAttemptFailure, type AttemptAnswer } from './unary-attempt.js';

/** The breakers every interceptor without breaker options of its own shares: one per origin, core's defaults. */
const sharedBreakers = new OriginBreakers(undefined);

/**
 * A grpc-js client interceptor that retries unary calls in process (streaming calls pass through untouched):
 *
 * - retried: the gRPC codes the policy's `retryableStatusCodes` names, else `UNAVAILABLE`, `RESOURCE_EXHAUSTED` and
 *   `DEADLINE_EXCEEDED`, with the policy's backoff and jitter; every other status is final and reaches the caller at once;
 * - a server's `grpc-retry-pushback-ms` trailer replaces the computed delay, up to the policy's `maxDelayMs` and the
 *   deadline (a longer one gives up at once, `retry_after_beyond_budget`); a negative one ends the retries;
 * - every attempt carries the same `idempotency-key` metadata: the caller's, else one derived from the target, the
 *   method and the serialized request (a random one where it cannot be);
 * - the call's deadline bounds the whole call: no attempt starts past it, each attempt is sent with what is left of
 *   it; without one, the policy's `totalBudgetMs` (30 s by default) does the same. `call.cancel()` ends the attempt in
 *   flight and the waits;
 * - a circuit breaker per origin fails calls fast (`UNAVAILABLE`) while the server is down;
 * - with `handoff`, a call that still fails in a retryable way is enqueued to the retryd service and fails
 *   `UNAVAILABLE` with the task's id in its `retryd-task-id` metadata (`retrydTaskIdOf`).
 *
 * The caller sees one call: the last attempt's headers, message and status. Put it first in the client's
 * `interceptors`: those after it run once per attempt (authentication, per-attempt logging), those before it once per call.
 *
 * @throws InvalidPolicyError naming the field and the rule when `options.policy` breaks one; TypeError naming
 *   `target`, `handoff.client` or `handoff.target` when one does
 * @example
 * ```ts
 * const target = 'orders.internal:50051';
 * const orders = new OrdersClient(target, credentials.createInsecure(), {
 *   interceptors: [retryInterceptor({ target, policy: { maxAttempts: 4, retryableStatusCodes: [...DEFAULT_RETRYABLE_GRPC_CODES, 'ABORTED'] } })],
 * });
 * ```
 */
export function retryInterceptor(options: GrpcRetryOptions): Interceptor {
  const plan = callPlan(options);
  return (callOptions, nextCall) => {
    const method = callOptions.method_definition;
    if (method.requestStream || method.responseStream) return new InterceptingCall(nextCall(callOptions));
    return new InterceptingCall(new RetryingUnaryCall(callOptions, nextCall, plan));
  };
}

function callPlan(options: GrpcRetryOptions): GrpcCallPlan {
  const origin = grpcOrigin(options.target);
  const policy = withDefaultDeadline(options.policy, IN_REQUEST_DEADLINE_MS) as GrpcCallPlan['policy'];
  // A wrong policy fails here, at set-up, naming the field, rather than at the first call.
  assertValidPolicy({ ...DEFAULT_POLICY, ...policy });
  const codes = retryableCodesOf(policy);
  const retryOptions: RetryOptions<AttemptAnswer> = withCallerHooks<AttemptAnswer>(
    {
      retryOnError: (error) => error instanceof GrpcAttemptFailure && codes.has(error.code) && error.pushback !== 'stop',
      failureClass: (failure) => (failure instanceof GrpcAttemptFailure ? failureClassOfCode(failure.code) : undefined),
    },
    options,
  );
  const breakers = options.breaker === false ? undefined : options.breaker === undefined ? sharedBreakers : new OriginBreakers(options.breaker);
  if (breakers !== undefined) retryOptions.breaker = breakers.forOrigin(origin);
  return {
    target: options.target,
    origin,
    policy,
    retryOptions,
    wallClock: options.wallClock ?? Date.now,
    handoff: options.handoff === undefined ? undefined : grpcHandoff(options.handoff),
  };
}
