import type { Clock, Random } from '@retryd/core';
import { CapacityProbe } from '../protection/capacity-probe.js';
import { SLOW_START_IN_FLIGHT } from '../protection/ready-attempt.js';
import { RetryPacer } from '../protection/retry-pacer.js';
import { DEFAULT_TARGET_SETTINGS, type TargetSettings } from '../protection/target-settings.js';
import { AdaptiveThrottle } from './adaptive-throttle.js';
import { ServiceProtection } from './w7-service-protection.js';
import { W7Design } from './w7-workload.js';

/** An attempt that ended, as a design sees it. */
export interface EndedAttempt {
  /** Its number in its task's run: 1 for the first. */
  attempt: number;
  success: boolean;
  /** When it was sent, and when it had been due (its task's place in line). */
  sentAt: number;
  dueAt: number;
  /** When its retry is due by the policy; null when the task is done (it succeeded, or ran out of attempts). */
  retryAt: number | null;
}

/**
 * A protection design, as the W7 model drives it: one target's, with every attempt of that target's tasks going through
 * it (with several targets, case g, the model builds one a target, as the service keeps one `ProtectedTarget` a target).
 * Time is the model's virtual time; a design draws from the random it was given, never from another.
 */
export interface W7Protection {
  /**
   * The earliest time at which a due task may be sent (a hold): `now` or before when it may go now; Infinity until an
   * attempt in flight ends. `inFlight`: this target's attempts in flight.
   */
  openAt(now: number, inFlight: number): number;
  /**
   * Attempt number `attempt` of a due task is about to go: true to send it, false to refuse it locally (its task is
   * rescheduled by its policy and keeps its attempt: a protection holds a task, it never uses up its attempts).
   */
  admit(attempt: number, now: number): boolean;
  /**
   * An attempt ended: when its retry may go if not at `retryAt` (a pacer's later slot, a held task's own due time), or
   * its retry at `retryAt` with the place in line it takes back then if the target is still held (see {@link KeptPlace}),
   * else undefined.
   */
  ended(attempt: EndedAttempt, now: number): number | KeptPlace | undefined;
  /** Whether the target is held (its breaker is not closed): a retry due now takes back its {@link KeptPlace}. Optional. */
  holds?(now: number): boolean;
}

/** A retry due at `retryAt` by its policy that, if the target is still held then, goes in line as if due at `placeAt`. */
export interface KeptPlace {
  retryAt: number;
  placeAt: number;
}

/**
 * `previous`: the defaults until the capacity probe (`DEFAULT_TARGET_SETTINGS` then), kept here so that the table shows
 * what the change did: the retry budget on (one retry per first attempt, 10/s), a breaker opening on 50 counted failures
 * in a row and closing on three good probes.
 */
export const PREVIOUS_SETTINGS: Readonly<TargetSettings> = Object.freeze({
  ...DEFAULT_TARGET_SETTINGS,
  breaker: Object.freeze({ ...DEFAULT_TARGET_SETTINGS.breaker, consecutiveFailures: 50, halfOpenProbes: 3 }),
  retryBudget: Object.freeze({ ...DEFAULT_TARGET_SETTINGS.retryBudget, enabled: true }),
});

/**
 * `breaker-only`'s settings: `previous` without the retry budget, with a breaker that opens on 100 counted failures in
 * a row (not 50) and closes on the first good probe (`halfOpenProbes` 1, not 3), and neither the capacity probe nor the
 * slow start. Each change is what one W7 case asks:
 *
 * - The budget is a rate of retries per first attempt over 10 s; a backlog enqueued at once makes all its first attempts
 *   in its first second, so every retry after the tenth second waits for the floor of 10 a second (d: 132 s for 4.5).
 * - A target failing 90% of calls at random runs 50 failures in a row every ~2,000 calls (0.9⁵⁰ ≈ 0.5%), 100 in a row
 *   every ~3.8 million.
 * - Three good probes in a row come one time in a thousand at 90% failure: the breaker opened by chance never closed.
 */
export const BREAKER_ONLY_SETTINGS: Readonly<TargetSettings> = Object.freeze({
  ...PREVIOUS_SETTINGS,
  breaker: Object.freeze({ ...PREVIOUS_SETTINGS.breaker, consecutiveFailures: 100, halfOpenProbes: 1 }),
  retryBudget: Object.freeze({ ...PREVIOUS_SETTINGS.retryBudget, enabled: false }),
});

/** `none`: every attempt goes when it is due. */
class NoProtection implements W7Protection {
  openAt(): number {
    return -Infinity;
  }
  admit(): boolean {
    return true;
  }
  ended(): undefined {
    return undefined;
  }
}

/** `sre`: {@link AdaptiveThrottle} over every attempt; a success is an accept. */
class SreThrottling implements W7Protection {
  private readonly throttle = new AdaptiveThrottle();

  constructor(private readonly random: Random) {}

  openAt(): number {
    return -Infinity;
  }
  admit(_attempt: number, now: number): boolean {
    return this.throttle.admit(now, this.random);
  }
  ended(a: EndedAttempt, now: number): undefined {
    if (a.success) this.throttle.accepted(now);
    return undefined;
  }
}

/**
 * `budget`: the service's retry budget and pacer alone (`RetryPacer`, with the default settings): every first attempt
 * deposits, every failure's retry withdraws or waits for the pacer's next slot. No ready-attempt rule: every failure counts.
 */
class BudgetOnly implements W7Protection {
  private readonly pacer: RetryPacer;

  constructor(clock: Clock) {
    this.pacer = new RetryPacer(DEFAULT_TARGET_SETTINGS.retryBudget, clock);
  }

  openAt(): number {
    return -Infinity;
  }
  admit(attempt: number): boolean {
    if (attempt === 1) this.pacer.firstAttempt();
    return true;
  }
  ended(a: EndedAttempt): number | undefined {
    if (a.success || a.retryAt === null) return undefined;
    return this.pacer.pace(a.retryAt);
  }
}

/** The design's protection of one target for one run, on the model's clock, drawing from `random`. */
export function protectionFor(design: W7Design, clock: Clock, random: Random): W7Protection {
  switch (design) {
    case W7Design.NONE:
      return new NoProtection();
    case W7Design.LANDED:
      // As `ProtectedTarget` runs them: the capacity probe with adaptive throttling, the slow start and steady probes of a
      // target that answered lately with the breaker.
      return new ServiceProtection(clock, random, DEFAULT_TARGET_SETTINGS, {
        ...(DEFAULT_TARGET_SETTINGS.adaptive.enabled ? { capacity: new CapacityProbe() } : {}),
        ...(DEFAULT_TARGET_SETTINGS.breaker.enabled ? { slowStartInFlight: SLOW_START_IN_FLIGHT, steadyProbes: true } : {}),
      });
    case W7Design.PREVIOUS:
      return new ServiceProtection(clock, random, PREVIOUS_SETTINGS);
    case W7Design.SRE:
      return new SreThrottling(random);
    case W7Design.BUDGET:
      return new BudgetOnly(clock);
    case W7Design.BREAKER_ONLY:
      return new ServiceProtection(clock, random, BREAKER_ONLY_SETTINGS);
  }
}
