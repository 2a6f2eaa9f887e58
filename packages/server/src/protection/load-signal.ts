import { GrpcStatus, headerValue, parseGrpcPushback, parseRetryAfter } from '@retryd/core';
import type { AttemptResult } from '../engine/attempt-result.js';

/** What an answer says of its target's load, for the Retry-After hold and adaptive throttling. */
export interface LoadSignal {
  /** The HTTP status that says it: 429 (too many), 503 (unavailable), or undefined for any other answer. */
  status: 429 | 503 | undefined;
  /** The wait the target asked for, in ms from `now`, or undefined. */
  retryAfterMs: number | undefined;
}

const NONE: LoadSignal = { status: undefined, retryAfterMs: undefined };

/**
 * Reads an ended attempt as a statement of load, whatever its protocol: an HTTP `429` or `503` with its `Retry-After`;
 * a gRPC `RESOURCE_EXHAUSTED` as a `429`, `UNAVAILABLE` as a `503`, with its `grpc-retry-pushback-ms` as the wait (a
 * negative pushback asks for no retry of that call, not for a pause of the target). So a gRPC target is held and
 * throttled by the same rules as an HTTP one. Pure.
 */
export function loadSignalOf(result: AttemptResult, now: number): LoadSignal {
  if (result.kind === 'response') {
    if (result.status !== 429 && result.status !== 503) return NONE;
    return { status: result.status, retryAfterMs: parseRetryAfter(headerValue(result.headers, 'retry-after'), now) };
  }
  if (result.kind !== 'grpc') return NONE;
  const status = result.code === GrpcStatus.RESOURCE_EXHAUSTED ? 429 : result.code === GrpcStatus.UNAVAILABLE ? 503 : undefined;
  if (status === undefined) return NONE;
  const pushback = result.pushback === undefined ? 'stop' : parseGrpcPushback(result.pushback);
  return { status, retryAfterMs: pushback === 'stop' ? undefined : pushback };
}
