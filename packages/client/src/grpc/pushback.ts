import type { Metadata } from '@grpc/grpc-js';
import { parseGrpcPushback } from '@retryd/core';

/** The trailer in which a gRPC server tells its clients when to retry (gRFC A6, "Pushback"). */
export const PUSHBACK_METADATA = 'grpc-retry-pushback-ms';

/** What a server's pushback says: wait this many ms before the next attempt, or do not retry at all. */
export type Pushback = { retryInMs: number } | 'stop';

/**
 * The pushback in `trailers`, or undefined when there is none. As gRFC A6 reads it: a non-negative integer is the
 * wait in ms before the next attempt (it replaces the backoff); a negative or unparseable value asks the client not to
 * retry at all. When the trailer appears more than once, the first counts.
 *
 * @example
 * ```ts
 * pushbackOf(trailers); // { retryInMs: 250 } for `grpc-retry-pushback-ms: 250`, 'stop' for `-1`
 * ```
 */
export function pushbackOf(trailers: Metadata): Pushback | undefined {
  const [value] = trailers.get(PUSHBACK_METADATA);
  if (value === undefined) return undefined;
  const pushback = typeof value === 'string' ? parseGrpcPushback(value) : 'stop';
  return pushback === 'stop' ? 'stop' : { retryInMs: pushback };
}
