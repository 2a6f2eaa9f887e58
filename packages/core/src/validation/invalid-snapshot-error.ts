import { violationMessage } from './field-rules.js';

/**
 * Thrown by `CircuitBreaker.fromJSON` and `RetryBudget.fromJSON` when a stored snapshot is malformed
 * (corrupted, hand-edited, or written by an incompatible version). Code `INVALID_SNAPSHOT`.
 * A store that meets one should log it and start the target afresh rather than fail every call.
 *
 * @example
 * ```ts
 * CircuitBreaker.fromJSON({ v: 1, state: 'AJAR' });
 * // InvalidSnapshotError: Invalid CircuitBreaker snapshot: state must be one of CLOSED, OPEN, HALF_OPEN, got "AJAR"
 * ```
 */
export class InvalidSnapshotError extends TypeError {
  override readonly name = 'InvalidSnapshotError';
  readonly code = 'INVALID_SNAPSHOT';

  /**
   * @param kind - what the snapshot was of, e.g. `CircuitBreaker`
   * @param field - dotted path of the bad field, e.g. `window.buckets[2].calls`
   * @param rule - the rule it broke, e.g. `an integer >= 0`
   * @param value - the value found
   */
  constructor(
    readonly kind: string,
    readonly field: string,
    readonly rule: string,
    value: unknown,
  ) {
    super(`Invalid ${kind} snapshot: ${violationMessage(field, rule, value)}`);
  }
}

/** Throws an {@link InvalidSnapshotError} for one snapshot kind: the shape parsers take. */
export type SnapshotFail = (field: string, rule: string, value: unknown) => never;

/** A {@link SnapshotFail} for `kind`. */
export function snapshotFail(kind: string): SnapshotFail {
  return (field, rule, value) => {
    throw new InvalidSnapshotError(kind, field, rule, value);
  };
}

/** Returns `value` as a plain object or fails naming `field`. */
export function expectObject(value: unknown, field: string, fail: SnapshotFail): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail(field, 'an object', value);
  return value as Record<string, unknown>;
}
