import type { Clock } from '@retryd/core';

// An attempt's timeout, on the injected clock. It is set and cleared thousands of times a second, so it uses the
// clock's `setTimer` when the clock has one (the system clock's is core's `setLongTimer`: one `setTimeout` under 24.8
// days, chained past): a `sleep` with an `AbortController` per attempt cost several per cent of the engine's CPU on
// W1, in allocations and abort events. A clock without timers gets the `sleep` form.

/** Calls `fire` after `ms` on `clock`, unless {@link clearAttemptTimer} gets the returned handle first. */
export function setAttemptTimer(clock: Clock, ms: number, fire: () => void): unknown {
  if (clock.setTimer !== undefined && clock.clearTimer !== undefined) return clock.setTimer(ms, fire);
  const controller = new AbortController();
  clock.sleep(ms, controller.signal).then(fire, () => {
    // Cleared: the attempt settled first.
  });
  return controller;
}

/** Cancels a timer of {@link setAttemptTimer} (one that fired already is left alone). */
export function clearAttemptTimer(clock: Clock, handle: unknown): void {
  if (handle instanceof AbortController) handle.abort();
  else clock.clearTimer?.(handle);
}
