import type { Clock } from '@retryd/core';

/**
 * One re-aimable timer on an injected {@link Clock}: the scheduler's only wait. It keeps the earliest time it was
 * aimed at; aiming later than that changes nothing, aiming earlier re-arms it, and {@link DueTimer.clear} disarms it.
 * When it fires it is disarmed and `onFire` runs.
 */
export class DueTimer {
  private at: number | null = null;
  private controller: AbortController | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly onFire: () => void,
  ) {}

  /** When the timer fires next (epoch ms), or null when it is disarmed. */
  get target(): number | null {
    return this.at;
  }

  /** Fires at `at` (epoch ms) unless already aimed at or before it. A time in the past fires at once. */
  aimAt(at: number): void {
    if (this.at !== null && this.at <= at) return;
    this.clear();
    const controller = new AbortController();
    this.controller = controller;
    this.at = at;
    this.clock.sleep(Math.max(0, at - this.clock.now()), controller.signal).then(
      () => {
        if (this.controller !== controller) return;
        this.controller = null;
        this.at = null;
        this.onFire();
      },
      () => {
        // Aborted by clear() or a re-aim: the newer timer owns the wake-up.
      },
    );
  }

  /** Disarms the timer. */
  clear(): void {
    this.controller?.abort();
    this.controller = null;
    this.at = null;
  }
}
