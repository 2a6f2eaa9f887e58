/** A parsed W3C `traceparent`: the caller's trace, its span, and whether it was sampled. */
export interface Traceparent {
  traceId: string;
  spanId: string;
  sampled: boolean;
}

const TRACEPARENT = /^([\da-f]{2})-([\da-f]{32})-([\da-f]{16})-([\da-f]{2})$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/**
 * A W3C Trace Context `traceparent` (version 00 form, lower-case hex), or undefined when it is not one: version `ff`,
 * an all-zero trace or span id. Written here rather than taken from the OpenTelemetry SDK's propagator: the enqueue and
 * the engine must not load the SDK when tracing is off, and the format is fixed by the W3C recommendation.
 *
 * @example
 * ```ts
 * parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
 * // { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', sampled: true }
 * ```
 */
export function parseTraceparent(value: string | null | undefined): Traceparent | undefined {
  if (value === null || value === undefined) return undefined;
  const match = TRACEPARENT.exec(value);
  if (match === null) return undefined;
  const [, version, traceId = '', spanId = '', flags = '00'] = match;
  if (version === 'ff' || traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  return { traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 };
}

/** The `traceparent` that makes the receiver a child of span `spanId` of trace `traceId`. */
export function formatTraceparent({ traceId, spanId, sampled }: Traceparent): string {
  return `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;
}
