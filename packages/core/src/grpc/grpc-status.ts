import { FailureClass } from '../http/failure-class.js';

/**
 * The gRPC status codes by name, as the gRPC protocol numbers them (`grpc-status` trailer). A policy names them in
 * `retryableStatusCodes` for gRPC targets (`["UNAVAILABLE", "ABORTED"]`), as it names HTTP statuses for HTTP ones.
 */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;
/** A gRPC status code's name, e.g. `UNAVAILABLE`. */
export type GrpcStatusName = keyof typeof GrpcStatus;
/** The name of a gRPC status other than OK: what a policy's `retryableStatusCodes` may name. */
export type GrpcFailureName = Exclude<GrpcStatusName, 'OK'>;

const NAMES: readonly GrpcStatusName[] = Object.keys(GrpcStatus) as GrpcStatusName[];

/**
 * gRPC codes retried when a policy names none: UNAVAILABLE (the server or the connection is down, the request was not
 * processed), RESOURCE_EXHAUSTED (a quota or rate limit) and DEADLINE_EXCEEDED (no answer in time). Every other
 * non-OK code is final.
 */
export const DEFAULT_RETRYABLE_GRPC_CODES: readonly GrpcFailureName[] = Object.freeze(['UNAVAILABLE', 'RESOURCE_EXHAUSTED', 'DEADLINE_EXCEEDED']);

/** Whether `value` is the name of a gRPC status code (`OK` included). */
export function isGrpcStatusName(value: unknown): value is GrpcStatusName {
  return typeof value === 'string' && Object.hasOwn(GrpcStatus, value);
}

/**
 * The name of a gRPC status code number, e.g. `14` → `UNAVAILABLE`; a number outside the table is `UNKNOWN`, as the
 * gRPC specification asks a client to read a code it does not know.
 */
export function grpcStatusName(code: number): GrpcStatusName {
  return NAMES[code] ?? 'UNKNOWN';
}

/**
 * The failure class of a gRPC status, for a policy's `backoffByClass`: RESOURCE_EXHAUSTED → `rateLimited`,
 * DEADLINE_EXCEEDED → `timeout`, UNAVAILABLE, INTERNAL, UNKNOWN and DATA_LOSS → `serverError`; any other → undefined
 * (the main schedule).
 */
export function failureClassOfGrpcStatus(name: GrpcStatusName): FailureClass | undefined {
  switch (name) {
    case 'RESOURCE_EXHAUSTED':
      return FailureClass.RATE_LIMITED;
    case 'DEADLINE_EXCEEDED':
      return FailureClass.TIMEOUT;
    case 'UNAVAILABLE':
    case 'INTERNAL':
    case 'UNKNOWN':
    case 'DATA_LOSS':
      return FailureClass.SERVER_ERROR;
    default:
      return undefined;
  }
}

/** A non-negative whole number of ms, as gRPC's retry design (gRFC A6) writes a pushback. */
const PUSHBACK_MS = /^\d{1,15}$/;

/**
 * What a `grpc-retry-pushback-ms` value says (gRFC A6, "Pushback"): a non-negative integer is the wait in ms before
 * the next attempt (it replaces the backoff); anything else, a negative or unreadable value, asks for no retry at all
 * (`'stop'`). Surrounding whitespace is ignored.
 *
 * @example
 * ```ts
 * parseGrpcPushback('250'); // 250
 * parseGrpcPushback('-1'); // 'stop'
 * ```
 */
export function parseGrpcPushback(value: string): number | 'stop' {
  const text = value.trim();
  return PUSHBACK_MS.test(text) ? Number(text) : 'stop';
}
