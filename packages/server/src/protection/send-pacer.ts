import type { Clock } from '@retryd/core';

/** The most time's worth of missed turns a late timer makes up at once, in ms: no 100 ms window goes over the rate. */
const CATCH_UP_MS = 10;

interface Waiting {
  resolve: () => void;
  /** When it goes whatever its turn (its wait bound), on the pacer's clock. */
  latestAt: number;
}

/**
 * Spreads one instance's sends to a rate-limited target evenly over time. The store's token bucket decides how many
 * of the target's tasks a claim may take (the rate across every instance, plus a small burst); a claim that takes
 * several at once would send them in one burst, and the downstream would see more than its limit in a short window.
 * The pacer gives each send a turn `1000 / rate` ms after the last one, in claim order, with one timer.
 *
 * A timer that fires late keeps the turns due as they were (the rate is kept): the turns it missed go at once, up to
 * {@link CATCH_UP_MS} of them (or one turn, when turns are further apart), and a longer pause (the event loop busy) is
 * not made up in a burst. On a busy machine timers fire several ms late, and making up one turn at most held a target
 * paced at 967/s to about 250/s. A send after a quiet spell goes at once and starts the turns again from there.
 */
export class SendPacer {
  private nextTurnAt = Number.NEGATIVE_INFINITY;
  private intervalMs = 0;
  private readonly waiting: Waiting[] = [];
  private draining = false;

  constructor(private readonly clock: Clock) {}

  /**
   * A send to the target is ready: undefined when it may go at once, else a promise that resolves at its turn, or
   * after `maxWaitMs` at the latest (a rate lowered while tasks were claimed does not hold them past their lease).
   * `ratePerSecond` null (no limit) lets every send go at once.
   */
  turn(ratePerSecond: number | null, maxWaitMs: number): Promise<void> | undefined {
    if (ratePerSecond === null || ratePerSecond <= 0) {
      // The common case, on every send to a target without a limit: nothing to read or allocate.
      if (this.waiting.length > 0) this.releaseAll();
      this.nextTurnAt = Number.NEGATIVE_INFINITY;
      return undefined;
    }
    const now = this.clock.now();
    this.intervalMs = 1_000 / ratePerSecond;
    if (this.waiting.length === 0 && this.take(now, 0)) return undefined;
    return new Promise<void>((resolve) => {
      this.waiting.push({ resolve, latestAt: now + maxWaitMs });
      if (!this.draining) void this.drain();
    });
  }

  /** How many sends wait for their turn. */
  get waitingCount(): number {
    return this.waiting.length;
  }

  /** Takes the turn at `now` if it has come; the next is due a turn later, counted from no earlier than `now - slackMs`. */
  private take(now: number, slackMs: number): boolean {
    if (now < this.nextTurnAt) return false;
    this.nextTurnAt = Math.max(this.nextTurnAt, now - slackMs) + this.intervalMs;
    return true;
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      for (let head = this.waiting[0]; head !== undefined; head = this.waiting[0]) {
        const now = this.clock.now();
        // A late wake keeps its turn's place (up to CATCH_UP_MS or a turn late): the rate holds though timers fire late.
        if (this.take(now, Math.max(this.intervalMs, CATCH_UP_MS)) || head.latestAt <= now) {
          this.waiting.shift();
          head.resolve();
        } else {
          await this.clock.sleep(Math.min(this.nextTurnAt, head.latestAt) - now);
        }
      }
    } finally {
      this.draining = false;
    }
  }

  private releaseAll(): void {
    for (const waiting of this.waiting.splice(0)) waiting.resolve();
  }
}
