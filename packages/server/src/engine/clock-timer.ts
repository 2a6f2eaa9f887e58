import type { Clock } from '@retryd/core';

// A timer on the injected clock, for the engine's timers that are set and cleared thousands of times a second (an
// attempt's timeout, the due timer that every wake re-aims). It uses the clock's `setTimer` when the clock has one (the
// system clock's is core's `setLongTimer`: one `setTimeout` under 24.8 days, chained past). A `sleep` with an
// `AbortController` instead cost several per cent of the engine's CPU on W1, in allocations and abort events, and
// each abort without a reason builds a DOMException with its stack: 86 µs a wake on a Redis enqueue's profile. A
// clock without timers gets the `sleep` form.

/** Calls `fire` after `ms` on `clock`, unless {@link clearClockTimer} gets the returned handle first. */
export function setClockTimer(clock: Clock, ms: number, fire: () => void): unknown {
  if (clock.setTimer !== undefined && clock.clearTimer !== undefined) return clock.setTimer(ms, fire);
  const controller = new AbortController();
  clock.sleep(ms, controller.signal).then(fire, () => {
    // Cleared first.
  });
  return controller;
}

/** The reason a cleared `sleep` rejects with: any value but undefined spares the abort a DOMException. */
const CLEARED = Symbol('cleared');

/** Cancels a timer of {@link setClockTimer} (one that fired already is left alone). */
export function clearClockTimer(clock: Clock, handle: unknown): void {
  if (handle instanceof AbortController) handle.abort(CLEARED);
  else clock.clearTimer?.(handle);
}
