import type { Clock } from '@retryd/core';
import { clearClockTimer, setClockTimer } from './clock-timer.js';

/**
 * One re-aimable timer on an injected {@link Clock}: the scheduler's only wait. It keeps the earliest time it was
 * aimed at; aiming later than that changes nothing, aiming earlier re-arms it, and {@link DueTimer.clear} disarms it.
 * When it fires it is disarmed and `onFire` runs.
 */
export class DueTimer {
  private at: number | null = null;
  private handle: unknown = undefined;

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
    this.at = at;
    const handle = setClockTimer(this.clock, Math.max(0, at - this.clock.now()), () => {
      // A re-aim or clear() since owns the wake-up.
      if (this.handle !== handle) return;
      this.handle = undefined;
      this.at = null;
      this.onFire();
    });
    this.handle = handle;
  }

  /** Disarms the timer. */
  clear(): void {
    if (this.handle !== undefined) clearClockTimer(this.clock, this.handle);
    this.handle = undefined;
    this.at = null;
  }
}
