import { clearLongTimer, setLongTimer } from './long-timer.js';

/**
 * A source of time and a way to wait. Injected everywhere time matters so tests can run on a
 * {@link ManualClock} (from `@retryd/core/testing`) and assert exact delays without real sleeps.
 */
export interface Clock {
  /**
   * Milliseconds on a clock that never goes backwards. The system clock anchors it to the Unix epoch at
   * process start, so values are comparable with `Date.now()` and may be persisted (breaker state), while
   * wall-clock steps (NTP, manual changes) during the process's life cannot make a measured interval negative.
   */
  now(): number;
  /**
   * Resolves after `ms` milliseconds. When `signal` aborts, rejects at once with `signal.reason`
   * (an already aborted signal rejects without waiting). Any `ms` a policy allows (up to ten years) must wait that
   * long: a clock of your own built on `setTimeout` should wait with {@link setLongTimer}, since `setTimeout` fires a
   * delay over 2^31 − 1 ms (24.8 days) after 1 ms.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Optional: calls `callback` once, after `ms` milliseconds, unless {@link Clock.clearTimer} gets the returned handle
   * first. Meant for the many timers that are almost always cancelled (an HTTP attempt's timeout): it costs what
   * `setTimeout` costs, where `sleep` with an `AbortSignal` costs a controller and an abort event each. Like `sleep`,
   * it must keep delays of any length.
   */
  setTimer?(ms: number, callback: () => void): unknown;
  /** Cancels a timer made by {@link Clock.setTimer}. A timer that already fired, or was cleared, is left alone. */
  clearTimer?(handle: unknown): void;
}

/** A source of uniform random numbers in `[0, 1)`, like `Math.random`. */
export type Random = () => number;

/** Rejects with the signal's reason, the same way `fetch` and `setTimeout` from `node:timers/promises` do. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

// Read once: `performance.timeOrigin` is a getter that costs as much as the rest of a first try.
const TIME_ORIGIN = performance.timeOrigin;

/**
 * Real time: `performance.timeOrigin + performance.now()` (monotonic, epoch-anchored), and timers for both `sleep` and
 * `setTimer` that keep delays of any length: one longer than `setTimeout` holds (2^31 − 1 ms, about 24.8 days) is
 * waited in links ({@link setLongTimer}) instead of firing after 1 ms.
 *
 * @example
 * ```ts
 * await systemClock.sleep(100, controller.signal);
 * ```
 */
export const systemClock: Clock = {
  now: () => TIME_ORIGIN + performance.now(),
  setTimer: setLongTimer,
  clearTimer: clearLongTimer,
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(abortReason(signal));
        return;
      }
      const onAbort = () => {
        clearLongTimer(timer);
        reject(abortReason(signal as AbortSignal));
      };
      const timer = setLongTimer(ms, () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};
