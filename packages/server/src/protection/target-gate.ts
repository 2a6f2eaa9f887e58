import type { Clock } from '@retryd/core';
import type { Store, TargetLimits, TargetRef, TargetView } from '../store/store.js';
import { LIMIT_WRITE_INTERVAL_MS, sameLimits, unlimited } from './gate-limits.js';

/**
 * What this instance wrote to one target's gate in the store (`holdTarget`, `releaseTarget`, `limitTarget`), so that it
 * writes only what changes: the limits when they differ from its last write, a hold only when it reaches further than
 * the last one it knows of; adaptive changes at most every {@link LIMIT_WRITE_INTERVAL_MS}. Every write that can free
 * tasks wakes the engine, whose timer was not aimed at them.
 */
export class TargetGate {
  private limits: TargetLimits | undefined;
  private heldUntil = -Infinity;
  /** The end of the last hold this instance knew of, kept when a release cuts the hold short (then: the release). */
  private lastHoldEnd = -Infinity;
  private limitsWrittenAt = -Infinity;
  private timer: AbortController | undefined;
  private closed = false;

  constructor(
    private readonly store: Pick<Store, 'holdTarget' | 'releaseTarget' | 'limitTarget'>,
    private readonly ref: TargetRef,
    private readonly clock: Clock,
    private readonly wake: () => void,
  ) {}

  /** Whether the gate is known to hold the target at `now` (from this instance's own holds or the last read). */
  isHeld(now: number): boolean {
    return this.heldUntil > now;
  }

  /** Until when the target was last known held (a hold cut short ends at its release), or -Infinity: never. */
  lastHeldUntil(): number {
    return Math.max(this.heldUntil, this.lastHoldEnd);
  }

  /** Whether the limits last written or read limit anything (another instance's adaptive rate, say). */
  isLimited(): boolean {
    return this.limits !== undefined && !unlimited(this.limits);
  }

  /** Takes the gate as the store shows it (read when the target is first seen): what the fleet last wrote. */
  known(view: TargetView): void {
    this.limits = { ratePerSecond: view.ratePerSecond, burst: view.burst, maxInFlight: view.maxInFlight };
    if (view.heldUntil !== null) this.heldUntil = Math.max(this.heldUntil, view.heldUntil);
  }

  /** Writes `limits` unless they are what this instance last wrote (or, never written, they limit nothing). */
  async limit(limits: TargetLimits, now: number): Promise<void> {
    if (sameLimits(limits, this.limits) || (this.limits === undefined && unlimited(limits))) return;
    await this.store.limitTarget(this.ref, limits, now);
    this.limits = limits;
    this.limitsWrittenAt = now;
    this.wake();
  }

  /**
   * Holds the target until `until` unless a hold this instance knows of already reaches that far. Returns whether it
   * wrote the hold.
   */
  async hold(until: number, now: number): Promise<boolean> {
    if (until <= now || until <= this.heldUntil) return false;
    await this.store.holdTarget(this.ref, until, now);
    this.heldUntil = until;
    return true;
  }

  /**
   * Calls `write` (which writes the limits) now when they were last written {@link LIMIT_WRITE_INTERVAL_MS} ago or more,
   * else once at the end of that interval, however often it is asked meanwhile.
   */
  throttle(now: number, write: () => void): void {
    if (this.timer !== undefined || this.closed) return;
    const wait = this.limitsWrittenAt + LIMIT_WRITE_INTERVAL_MS - now;
    if (wait <= 0) {
      write();
      return;
    }
    const timer = new AbortController();
    this.timer = timer;
    this.clock.sleep(wait, timer.signal).then(
      () => {
        this.timer = undefined;
        write();
      },
      () => (this.timer = undefined),
    );
  }

  /** Drops a write waiting for its interval. */
  close(): void {
    this.closed = true;
    this.timer?.abort();
  }

  /** Ends the target's hold at once (holds only extend: this is the one way to cut one short). */
  async release(now: number): Promise<void> {
    await this.store.releaseTarget(this.ref, now);
    this.lastHoldEnd = Math.max(this.lastHoldEnd, Math.min(this.heldUntil, now));
    this.heldUntil = -Infinity;
    this.wake();
  }
}
