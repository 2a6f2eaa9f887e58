import type { TargetLimits } from '../store/store.js';
import { SLOW_START_IN_FLIGHT } from './ready-attempt.js';
import { burstOf, type TargetSettings } from './target-settings.js';

/** An adaptive rate's burst is its rate divided by this: a tenth of a second's worth. */
const ADAPTIVE_BURST_PER_RATE = 10;

/** Least time between two writes of a target's limits by one instance for adaptive throttling, in ms. */
export const LIMIT_WRITE_INTERVAL_MS = 200;

/**
 * The limits a target's gate should hold, from its settings and the protections' state (pure):
 *
 * - rate: the configured rate, or the adaptive rate when that is lower; an adaptive rate gets a burst of a tenth of a
 *   second's worth of its own rate (at least 1, at most the configured burst): the burst bounds how many tasks a claim
 *   may take, not how they go out (each instance's `SendPacer` spreads its sends at the rate), and a hundredth of a
 *   second's worth held a paced target to burst ÷ the time between claims (a busy service claiming every 25 ms sent a
 *   target paced at 445/s some 200/s);
 * - in flight: the configured limit, or, while the breaker is not closed, the probes it still admits (`probeSlots`),
 *   so that when its hold ends the claim gate lets exactly its probes through, on every instance; in slow start (no
 *   success remembered), at most `SLOW_START_IN_FLIGHT`.
 */
export function gateLimits(settings: TargetSettings, adaptiveRate: number | null, probeSlots: number | null, slowStart = false): TargetLimits {
  let ratePerSecond = settings.rateLimit.ratePerSecond;
  let burst = burstOf(settings);
  if (adaptiveRate !== null && (ratePerSecond === null || adaptiveRate < ratePerSecond)) {
    ratePerSecond = adaptiveRate;
    burst = Math.min(Math.max(1, Math.ceil(adaptiveRate / ADAPTIVE_BURST_PER_RATE)), burst ?? Infinity);
  }
  let maxInFlight = settings.maxInFlight;
  if (probeSlots !== null) maxInFlight = Math.min(maxInFlight ?? Infinity, Math.max(1, probeSlots));
  if (slowStart) maxInFlight = Math.min(maxInFlight ?? Infinity, SLOW_START_IN_FLIGHT);
  return { ratePerSecond, burst, maxInFlight };
}

/** True when both say the same (undefined: never written, so nothing is known to be the same). */
export function sameLimits(a: TargetLimits, b: TargetLimits | undefined): boolean {
  return b !== undefined && a.ratePerSecond === b.ratePerSecond && a.burst === b.burst && a.maxInFlight === b.maxInFlight;
}

/** True when the limits do not limit at all. */
export function unlimited(limits: TargetLimits): boolean {
  return limits.ratePerSecond === null && limits.maxInFlight === null;
}
