import { CircuitState } from './breaker-state.js';

/**
 * Thrown instead of making a call when the circuit refuses it: the breaker is OPEN, or HALF_OPEN with every
 * probe slot taken. Code `CIRCUIT_OPEN`; `retryAfterMs` says how long until OPEN turns HALF_OPEN (0 in
 * HALF_OPEN, where the wait depends on the probes in flight), suitable for a `Retry-After` answer.
 *
 * @example
 * ```ts
 * if (!breaker.tryAcquire()) throw breaker.openError();
 * // BrokenCircuitError: Circuit is OPEN: calls are refused for another 1200 ms
 * ```
 */
export class BrokenCircuitError extends Error {
  override readonly name = 'BrokenCircuitError';
  readonly code = 'CIRCUIT_OPEN';

  /**
   * @param state - the state that refused the call
   * @param retryAfterMs - whole ms until the breaker admits calls again, as far as it knows
   */
  constructor(
    readonly state: CircuitState,
    readonly retryAfterMs: number,
  ) {
    super(
      state === CircuitState.HALF_OPEN
        ? `Circuit is HALF_OPEN: every probe slot is in use, ${retryAfterMs} ms left of the open period`
        : `Circuit is ${state}: calls are refused for another ${retryAfterMs} ms`,
    );
  }
}
