import type { Clock } from '@retryd/core';

/** First wait after a store failure, in ms. */
const MIN_DELAY_MS = 50;
/** Longest wait between attempts at a failing store, in ms. */
const MAX_DELAY_MS = 5_000;

/**
 * Exponential back-off for retrying a failing store operation (50 ms doubling to 5 s), so a database that went away
 * is not hammered and the engine carries on by itself once it is back. No jitter: each engine has one writer.
 */
export class StoreBackoff {
  private failures = 0;
  private controller: AbortController | null = null;

  constructor(private readonly clock: Clock) {}

  /** The wait that the next {@link StoreBackoff.wait} will take, in ms. */
  get nextDelayMs(): number {
    return Math.min(MAX_DELAY_MS, MIN_DELAY_MS * 2 ** Math.min(this.failures, 16));
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
    this.failures++;
  }

  /** The operation succeeded: the next failure waits the shortest time again. */
  reset(): void {
    this.failures = 0;
  }

  /** Ends a wait in progress at once. */
  interrupt(): void {
    this.controller?.abort();
  }
}
