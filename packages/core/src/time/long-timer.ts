/**
 * The longest delay `setTimeout` keeps: 2^31 − 1 ms, about 24.8 days. Node, browsers and Deno store a timer's delay as
 * a signed 32-bit integer and run a timer asked for longer after 1 ms instead (Node warns once, browsers not at all),
 * while a policy may ask for delays of up to ten years.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A wait longer than {@link MAX_TIMER_MS}, as a chain of timers of at most that length, re-armed until the whole delay
 * has passed. It keeps what `unref()` asked for across its links, as one Node timer would.
 */
class ChainedTimer {
  #timer: ReturnType<typeof setTimeout> | undefined;
  #left: number;
  #unref = false;

  constructor(
    ms: number,
    private readonly callback: () => void,
  ) {
    this.#left = ms;
    this.#arm();
  }

  #arm(): void {
    // Counted down link by link rather than read off a clock: each link of a chain ends no earlier than it was asked
    // to, so the whole never fires early, and an `Infinity` delay (a wait with no end) never fires at all.
    const link = Math.min(this.#left, MAX_TIMER_MS);
    this.#left -= link;
    this.#timer = setTimeout(this.#left > 0 ? () => this.#arm() : this.callback, link);
    if (this.#unref) unrefTimer(this.#timer);
  }

  /** Lets the process exit while only this timer is pending (Node; a no-op elsewhere), now and for its later links. */
  unref(): this {
    this.#unref = true;
    unrefTimer(this.#timer);
    return this;
  }

  /** Undoes {@link ChainedTimer.unref}. */
  ref(): this {
    this.#unref = false;
    (this.#timer as { ref?: () => unknown } | undefined)?.ref?.();
    return this;
  }

  clear(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

const unrefTimer = (timer: unknown): void => void (timer as { unref?: () => unknown } | undefined)?.unref?.();

/**
 * `setTimeout(callback, ms)` for any `ms`: a delay up to {@link MAX_TIMER_MS} is one `setTimeout` (its handle is
 * returned as it is, so a short timer costs nothing more), a longer one a chain of them, so that a 30-day wait lasts
 * 30 days instead of the 1 ms `setTimeout` alone would give it. A negative or NaN delay fires at once, as with
 * `setTimeout`; `Infinity` never fires. The handle has Node's `unref()` where timers have it.
 *
 * @returns a handle for {@link clearLongTimer}
 * @example
 * ```ts
 * const timer = setLongTimer(30 * 24 * 3600 * 1000, () => renew()); // in 30 days, not in 1 ms
 * clearLongTimer(timer);
 * ```
 */
export function setLongTimer(ms: number, callback: () => void): unknown {
  if (ms > MAX_TIMER_MS) return new ChainedTimer(ms, callback);
  return setTimeout(callback, Math.max(0, ms));
}

/** Cancels a timer of {@link setLongTimer}, whichever link it is on; one that fired, or was cleared, is left alone. */
export function clearLongTimer(handle: unknown): void {
  if (handle instanceof ChainedTimer) handle.clear();
  else clearTimeout(handle as ReturnType<typeof setTimeout>);
}
