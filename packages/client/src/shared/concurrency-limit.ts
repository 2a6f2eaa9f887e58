/**
 * At most `max` tasks at a time; the others wait their turn in arrival order. A waiting task whose signal aborts
 * leaves the line at once (with the signal's reason) and never runs.
 *
 * @example
 * ```ts
 * const limit = new ConcurrencyLimit(10);
 * await limit.run(() => send(request), signal);
 * ```
 */
export class ConcurrencyLimit {
  #active = 0;
  readonly #waiting: (() => void)[] = [];

  /**
   * @param max - tasks that may run at once: an integer >= 1
   * @param field - the option that set `max`, for the message
   */
  constructor(
    readonly max: number,
    field = 'max',
  ) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`${field} must be an integer >= 1, got ${String(max)}`);
  }

  /** Tasks running now. */
  get active(): number {
    return this.#active;
  }

  /** Tasks waiting for a turn. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** Runs `task` when a turn is free; rejects with `signal`'s reason if it aborts first. */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted();
    if (this.#active < this.max) this.#active++;
    else await this.#turn(signal);
    try {
      return await task();
    } finally {
      // The turn passes straight to the next in line, so a task arriving now cannot jump the queue.
      const next = this.#waiting.shift();
      if (next === undefined) this.#active--;
      else next();
    }
  }

  #turn(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const start = () => {
        signal?.removeEventListener('abort', leave);
        resolve();
      };
      const leave = () => {
        const at = this.#waiting.indexOf(start);
        if (at >= 0) this.#waiting.splice(at, 1);
        reject(signal?.reason);
      };
      this.#waiting.push(start);
      signal?.addEventListener('abort', leave, { once: true });
    });
  }
}
