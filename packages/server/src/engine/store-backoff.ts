import type { Clock, Random } from '@retryd/core';
import { storeRetryDelay } from '../store/store-retry-delay.js';

/**
 * Back-off for retrying a failing store operation, so a database that went away is not hammered and the engine
 * carries on by itself once it is back. The waits are `storeRetryDelay`'s (exponential from 50 ms to 5 s, full
 * jitter, through core's `computeDelay`): the instances of a deployment, which all see the store fail at once, do
 * not come back to it in lockstep.
 *
 * @example
 * ```ts
 * const backoff = new StoreBackoff(clock, random);
 * for (;;) {
 *   try { await store.ping(); backoff.reset(); break; } catch { await backoff.wait(); }
 * }
 * ```
 */
export class StoreBackoff {
  private failures = 0;
  private previousDelayMs = 0;
  /** The next wait, drawn once it is first asked for and kept until it is used, so a caller can read it first. */
  private drawn: number | undefined;
  private controller: AbortController | null = null;

  /** @param random - default `Math.random` */
  constructor(
    private readonly clock: Clock,
    private readonly random: Random = Math.random,
  ) {}

  /** The wait that the next {@link StoreBackoff.wait} (or {@link StoreBackoff.failed}) will count, in whole ms. */
  get nextDelayMs(): number {
    this.drawn ??= storeRetryDelay(this.failures + 1, this.previousDelayMs, this.random);
    return this.drawn;
  }

  /** Waits before the next try (longer after each failure); resolves early when {@link StoreBackoff.interrupt}ed. */
  async wait(): Promise<void> {
    const delay = this.nextDelayMs;
    this.failed();
    const controller = new AbortController();
    this.controller = controller;
    try {
      await this.clock.sleep(delay, controller.signal);
    } catch {
      // Interrupted: the caller is shutting down.
    } finally {
      if (this.controller === controller) this.controller = null;
    }
  }

  /** Counts a failure without waiting (for a caller that schedules the retry itself, at {@link StoreBackoff.nextDelayMs}). */
  failed(): void {
    this.previousDelayMs = this.nextDelayMs;
    this.drawn = undefined;
    this.failures++;
  }

  /** The operation succeeded: the next failure waits the shortest time again. */
  reset(): void {
    this.failures = 0;
    this.previousDelayMs = 0;
    this.drawn = undefined;
  }

  /** Ends a wait in progress at once. */
  interrupt(): void {
    this.controller?.abort();
  }
}
