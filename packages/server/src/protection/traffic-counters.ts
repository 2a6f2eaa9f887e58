/** What one target saw on this instance in one whole second. */
export interface SecondCounts {
  /** Attempts sent (first attempts and retries). */
  dispatches: number;
  /** Of those, retries. */
  retries: number;
  /** Attempts that ended (with any outcome). */
  calls: number;
  /** Of those, successes. */
  successes: number;
}

/** A whole second just ended, as retry-storm detection reads it. */
export interface EndedSecond extends SecondCounts {
  /** Average retries per second over the baseline before that second. */
  baselineRetriesPerSecond: number;
}

const zero = (): SecondCounts => ({ dispatches: 0, retries: 0, calls: 0, successes: 0 });

/**
 * Per-second counts of one target's traffic on this instance, in O(1) per event and bounded memory: the current
 * second, the one before it (for the dispatch rate over the last second), and the retries of each second of a
 * baseline window (a ring, with its running sum) for retry-storm detection. Time moves on only when an event arrives.
 */
export class TrafficCounters {
  private second = Number.NaN;
  private current = zero();
  private previous = zero();
  private readonly ring: Float64Array;
  private ringAt = 0;
  private ringSum = 0;

  /** @param baselineMs - how far back the retry baseline reaches (whole seconds, at least one) */
  constructor(baselineMs: number) {
    this.ring = new Float64Array(Math.max(1, Math.ceil(baselineMs / 1_000)));
  }

  /**
   * Moves the counts to the second of `now`. Returns the last whole second before `now`'s (the "last second" a storm is
   * judged on: all zeros after a quiet spell) when `now` is in a new second, else null.
   */
  roll(now: number): EndedSecond | null {
    const second = Math.floor(now / 1_000);
    if (second === this.second) return null;
    if (Number.isNaN(this.second)) {
      this.second = second;
      return null;
    }
    const gap = second - this.second;
    if (gap < 0) return null; // a clock that stepped back: keep counting in the newer second
    const ended = this.current;
    const baseline = this.ringSum / this.ring.length;
    this.push(ended.retries);
    for (let i = 1; i < Math.min(gap, this.ring.length + 1); i++) this.push(0);
    this.previous = gap === 1 ? ended : zero();
    this.current = zero();
    this.second = second;
    return { ...(gap === 1 ? ended : zero()), baselineRetriesPerSecond: baseline };
  }

  /** An attempt went out at `now` (call {@link TrafficCounters.roll} first). */
  dispatched(retry: boolean): void {
    this.current.dispatches++;
    if (retry) this.current.retries++;
  }

  /** An attempt ended at `now` (call {@link TrafficCounters.roll} first). */
  ended(success: boolean): void {
    this.current.calls++;
    if (success) this.current.successes++;
  }

  /** Dispatches per second over the second before `now`: the previous second weighted by how much of it is in range. */
  dispatchRate(now: number): number {
    const fraction = now / 1_000 - this.second;
    return this.previous.dispatches * Math.max(0, 1 - fraction) + this.current.dispatches;
  }

  private push(retries: number): void {
    this.ringSum += retries - (this.ring[this.ringAt] as number);
    this.ring[this.ringAt] = retries;
    this.ringAt = (this.ringAt + 1) % this.ring.length;
  }
}
