/**
 * The states of a {@link CircuitBreaker}:
 * - `CLOSED`: calls flow; failures are counted.
 * - `OPEN`: calls are refused until the open duration has passed.
 * - `HALF_OPEN`: a few probe calls are let through to learn whether the downstream has recovered.
 */
export const CircuitState = {
  CLOSED: 'CLOSED',
  OPEN: 'OPEN',
  HALF_OPEN: 'HALF_OPEN',
} as const;
export type CircuitState = (typeof CircuitState)[keyof typeof CircuitState];

/** What a state-change listener receives. */
export interface CircuitStateChange {
  from: CircuitState;
  to: CircuitState;
  /**
   * `clock.now()` when the breaker made the change. OPEN → HALF_OPEN happens lazily, at the first look at
   * the breaker after the open duration, so `at` may be later than the moment the open period ended.
   */
  at: number;
}

/** Called synchronously after each state change. See {@link CircuitBreaker.onStateChange}. */
export type CircuitStateListener = (change: CircuitStateChange) => void;

/** True when `value` is one of the {@link CircuitState} strings. */
export function isCircuitState(value: unknown): value is CircuitState {
  return Object.values(CircuitState).includes(value as CircuitState);
}
