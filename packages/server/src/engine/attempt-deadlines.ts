import type { Clock } from '@retryd/core';

/** Something that ends at a deadline unless it settles first. */
export interface Expirable {
  /** Epoch ms, on the clock the deadlines are kept on. */
  readonly deadline: number;
  /** The deadline passed before the item was removed. */
  expire(): void;
}

/**
 * The deadlines of the attempts in flight, on one timer of the injected clock rather than one per attempt.
 *
 * Attempts share one timeout, so they are added in deadline order: the open ones, kept in insertion order, have the
 * earliest deadline first, and one sleep aimed at it is enough. An attempt that settles is removed in O(1); when the
 * one aimed at settles, the timer still fires at its deadline, finds the next open attempt's deadline later, and
 * sleeps again — about one wake per timeout period under steady load. A timer per attempt (an `AbortController`, a
 * sleep and an abort event each) cost several per cent of the engine's CPU on W1.
 */
export class AttemptDeadlines {
  readonly #open = new Set<Expirable>();
  readonly #clock: Clock;
  #timer: AbortController | null = null;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Starts watching `item`'s deadline, which must not be earlier than any item added before it. */
  add(item: Expirable): void {
    this.#open.add(item);
    if (this.#timer === null) this.#arm(item.deadline);
  }

  /** Stops watching `item` (it settled). With nothing left to watch, the timer is dropped. */
  remove(item: Expirable): void {
    this.#open.delete(item);
    if (this.#open.size === 0) this.#disarm();
  }

  /** Attempts watched now. */
  get size(): number {
    return this.#open.size;
  }

  #arm(at: number): void {
    const timer = new AbortController();
    this.#timer = timer;
    this.#clock.sleep(Math.max(0, at - this.#clock.now()), timer.signal).then(
      () => {
        if (this.#timer !== timer) return;
        this.#timer = null;
        this.#expireDue();
      },
      () => {
        // Dropped: nothing is watched any more.
      },
    );
  }

  #disarm(): void {
    this.#timer?.abort();
    this.#timer = null;
  }

  #expireDue(): void {
    const now = this.#clock.now();
    for (const item of this.#open) {
      if (item.deadline > now) {
        this.#arm(item.deadline);
        return;
      }
      this.#open.delete(item);
      item.expire();
    }
  }
}
