import type { AdaptiveSettings } from './target-settings.js';

/**
 * How long a target with no configured rate keeps an adaptive limit without a 429 or 503 before it is lifted, in ms:
 * with no configured limit to climb back to, "not needed for a while" is the only sign the downstream copes again.
 */
export const ADAPTIVE_LIFT_AFTER_MS = 30_000;

/**
 * Adaptive throttling of one target on one instance (AIMD, as TCP does with its window): each 429 or 503 multiplies the
 * allowed rate by `decreaseFactor` (at most once per `decreaseIntervalMs`, so a burst of answers to calls made at the
 * old rate counts once); each whole second without one adds `increasePerSecond` (by default a tenth of the configured
 * limit, or 10/s without one). The first decrease starts from the
 * configured limit or, without one, from the rate this instance was dispatching at. The limit is lifted (`allowed`
 * null) once it climbs back to the configured limit, or, without one, after {@link ADAPTIVE_LIFT_AFTER_MS} without a
 * 429 or 503. Pure bookkeeping: time is passed in, nothing is written here.
 */
export class AdaptiveRate {
  /** Dispatches per second allowed now, or null when adaptive throttling does not limit the target. */
  allowed: number | null = null;
  private lastDecreaseAt = -Infinity;
  private lastThrottledAt = -Infinity;
  /** Whole seconds of increase are counted from here. */
  private raisedFrom = 0;

  /**
   * A 429 or 503 arrived at `now`. `configured` is the target's configured rate (or null), `observedRate` what this
   * instance dispatched over the last second. Returns whether `allowed` changed.
   */
  throttled(settings: AdaptiveSettings, configured: number | null, observedRate: number, now: number): boolean {
    this.lastThrottledAt = now;
    this.raisedFrom = now;
    if (now - this.lastDecreaseAt < settings.decreaseIntervalMs) return false;
    this.lastDecreaseAt = now;
    const from = this.allowed ?? Math.max(configured ?? observedRate, settings.minRatePerSecond);
    const next = Math.max(settings.minRatePerSecond, from * settings.decreaseFactor);
    if (next === this.allowed) return false;
    this.allowed = next;
    return true;
  }

  /** Time passed to `now` without a 429 or 503: raises the allowed rate, or lifts it. Returns whether it changed. */
  advance(settings: AdaptiveSettings, configured: number | null, now: number): boolean {
    if (this.allowed === null) return false;
    const seconds = Math.floor((now - this.raisedFrom) / 1_000);
    if (seconds < 1) return false;
    this.raisedFrom += seconds * 1_000;
    const next = this.allowed + seconds * increaseOf(settings, configured);
    const lifted = configured === null ? now - this.lastThrottledAt >= ADAPTIVE_LIFT_AFTER_MS : next >= configured;
    this.allowed = lifted ? null : next;
    return true;
  }

  /**
   * Takes over a limit found in the store's gate (set by another instance, or left by one that stopped), as if this
   * instance had just lowered it to `rate` at `now`: it is then raised and lifted like one of its own.
   */
  adopt(rate: number, now: number): void {
    this.allowed = rate;
    this.lastDecreaseAt = now;
    this.lastThrottledAt = now;
    this.raisedFrom = now;
  }

  /** Forgets any limit (settings changed, adaptive throttling turned off). */
  reset(): void {
    this.allowed = null;
    this.lastDecreaseAt = -Infinity;
    this.lastThrottledAt = -Infinity;
  }
}

/** What each second without a 429 or 503 adds to the allowed rate: the setting, or a tenth of the configured limit (at least 1/s), or 10/s. */
export function increaseOf(settings: AdaptiveSettings, configured: number | null): number {
  return settings.increasePerSecond ?? (configured === null ? 10 : Math.max(1, configured / 10));
}
