import { CircuitBreaker, CircuitState, type Clock, type Random } from '@retryd/core';
import type { CapacityProbe } from '../protection/capacity-probe.js';
import { breakerOptionsOf } from '../protection/core-options.js';
import { ReadyAttempt } from '../protection/ready-attempt.js';
import { RetryPacer } from '../protection/retry-pacer.js';
import type { Health } from '../protection/shared-breaker.js';
import { StormDetector } from '../protection/storm-detector.js';
import { DEFAULT_TARGET_SETTINGS, type TargetSettings } from '../protection/target-settings.js';
import { TrafficCounters } from '../protection/traffic-counters.js';
import type { EndedAttempt, KeptPlace, W7Protection } from './w7-protection.js';

/**
 * The service's protection of one target (`ProtectedTarget`) reduced to one instance, with `DEFAULT_TARGET_SETTINGS`
 * (`landed`) or other settings (`previous`, `breaker-only`), built from the service's own pure parts: `@retryd/core`'s
 * `CircuitBreaker` (the settings' options, equal jitter on open periods), `ReadyAttempt`, `RetryPacer`,
 * `TrafficCounters`, `StormDetector` and, given as extras, `CapacityProbe` and the slow start.
 *
 * - Every outcome is judged as `ProtectedTarget.recordOutcome` does: a failure before the target's ready attempt is neutral (no
 *   breaker failure, no storm count, no pacing); while the breaker is closed, outcomes feed it; while it is open or
 *   half-open, an attempt started after the open period ended is its probe.
 * - The breaker's opening holds the target until its open period ends; then the gate admits `probeSlots` attempts in
 *   flight (one until a probe succeeds, then the successes still needed), as `SharedBreaker.probeSlots` and `gateLimits` do.
 * - A task whose attempt failed while the breaker held the target (or whose failure opened it) keeps its place: its
 *   retry is due at its own due time when its backoff ends within the hold, else at its backoff's end, when it takes
 *   back its place if the breaker still holds the target (`KeptPlaces`). Any other counted failure's retry is paced
 *   by the retry budget.
 * - A retry storm opens a closed breaker.
 * - A setting's `enabled: false` (breaker, retry budget, storm detection) leaves that part out.
 * - With the extras: sends paced at the capacity probe's pace (a token bucket of a hundredth of a second's worth), fed
 *   the answers `ProtectedTarget.measureCapacity` feeds it; at most `slowStartInFlight` in flight while no success is
 *   remembered; a failed probe of a target that answered lately re-opens the breaker without backing off.
 *
 * Left out, because W7's downstreams never call for them: AIMD on 429s and Retry-After holds (no 429, no
 * Retry-After), rate and concurrency limits (none by default). And what only several instances need: the breaker is
 * one object, not a snapshot shared through the store.
 */
/** What the service runs beside its settings (`landed`), each left out when absent (`previous`, `breaker-only`). */
export interface ServiceProtectionExtras {
  /** Paces sends to what a full target accepts, told from a target failing a share of calls by cutting sends for a sample. */
  capacity?: CapacityProbe;
  /** Most attempts in flight while no success is remembered (no ready attempt): a target never seen to answer gets few. */
  slowStartInFlight?: number;
  /**
   * A failed probe backs the breaker off only while no success is remembered (`ProtectedTarget.answeredLately`): a
   * target that answered lately is probed again after the first open period. Without it, every failed probe backs off.
   */
  steadyProbes?: boolean;
}

export class ServiceProtection implements W7Protection {
  private readonly breaker: CircuitBreaker;
  private readonly ready: ReadyAttempt;
  private readonly pacer: RetryPacer;
  private readonly traffic: TrafficCounters;
  private readonly storms = new StormDetector();
  /** While the breaker is not closed: until when it holds the target (its open period's end, whole ms). */
  private holdUntil = -Infinity;
  /** While the breaker is not closed: the probes the gate admits in flight; null while it is closed. */
  private probeSlots: number | null = null;
  /** The capacity probe's pace as a token bucket: its tokens, as of `refilledAt`. */
  private tokens = 1;
  private refilledAt = 0;

  constructor(
    clock: Clock,
    random: Random,
    private readonly settings: TargetSettings = DEFAULT_TARGET_SETTINGS,
    private readonly extras: ServiceProtectionExtras = {},
  ) {
    this.breaker = new CircuitBreaker({ ...breakerOptionsOf(settings.breaker), openJitter: 'EQUAL', random, clock });
    this.ready = new ReadyAttempt(settings.breaker.windowMs);
    this.pacer = new RetryPacer(settings.retryBudget, clock);
    this.traffic = new TrafficCounters(settings.stormDetection.baselineMs);
  }

  openAt(now: number, inFlight: number): number {
    if (this.probeSlots !== null && now < this.holdUntil) return this.holdUntil;
    // The gate counts every attempt of the target in flight, the ones sent before the breaker opened included.
    if (this.probeSlots !== null && inFlight >= this.probeSlots) return Infinity;
    const { slowStartInFlight, capacity } = this.extras;
    if (slowStartInFlight !== undefined && inFlight >= slowStartInFlight && this.ready.at(now) === null) return Infinity;
    const pace = capacity?.rateAt(now) ?? null;
    if (pace === null) return this.probeSlots === null ? this.holdUntil : now;
    this.refill(pace, now);
    return this.tokens >= 1 ? now : now + Math.ceil(((1 - this.tokens) * 1_000) / pace);
  }

  admit(attempt: number, now: number): boolean {
    this.roll(now);
    const capacity = this.extras.capacity;
    if (capacity !== undefined) {
      const pace = capacity.rateAt(now);
      if (pace !== null) {
        this.refill(pace, now);
        this.tokens -= 1;
      }
      capacity.sent(now);
    }
    this.traffic.dispatched(attempt > 1);
    if (attempt === 1 && this.settings.retryBudget.enabled) this.pacer.firstAttempt();
    return true;
  }

  holds(): boolean {
    return this.probeSlots !== null;
  }

  ended(a: EndedAttempt, now: number): number | KeptPlace | undefined {
    this.roll(now);
    let health: Health | 'not-ready' = a.success ? 'success' : 'failure';
    if (a.success) this.ready.succeeded(a.attempt, now);
    else if (this.ready.notReady(a.attempt, now)) health = 'not-ready';
    if (health !== 'not-ready') this.traffic.ended(a.success);
    const judged: Health = health === 'not-ready' ? 'neutral' : health;
    // Until a success is remembered, answers say nothing of capacity (the breaker deals with a target never seen to
    // answer); nor do those of attempts before the ready attempt, whose failures are the key's, not the load's (their
    // successes alone would make the share accepted look higher than it is); nor probes, while the breaker holds it.
    const ready = this.ready.at(now);
    if (ready !== null && a.attempt >= ready && this.probeSlots === null) this.extras.capacity?.answered(a.success, a.sentAt, now);
    else this.extras.capacity?.skipped(a.sentAt, now);
    let held: boolean;
    if (this.probeSlots === null) {
      held = this.settings.breaker.enabled && judged !== 'neutral' && this.record(judged);
    } else {
      held = true;
      // Started after the open period ended: the gate let it through as a probe. Earlier ones say nothing new.
      if (a.sentAt >= this.holdUntil) this.probe(judged, now);
    }
    if (a.success || a.retryAt === null) return undefined;
    if (held) return a.retryAt <= this.holdUntil ? Math.min(a.retryAt, a.dueAt) : { retryAt: a.retryAt, placeAt: a.dueAt };
    return judged === 'failure' && this.settings.retryBudget.enabled ? this.pacer.pace(a.retryAt) : undefined;
  }

  /** Refills the pace's token bucket to `now`: a hundredth of a second's worth at most, at least one. */
  private refill(pace: number, now: number): void {
    this.tokens = Math.min(Math.max(1, pace / 100), this.tokens + ((now - this.refilledAt) * pace) / 1_000);
    this.refilledAt = now;
  }

  /** Feeds a closed breaker; true when this outcome opened it. */
  private record(health: 'success' | 'failure'): boolean {
    if (health === 'success') this.breaker.onSuccess();
    else this.breaker.onFailure();
    // The state first: a snapshot copies the breaker's window, which every outcome would pay for.
    return this.breaker.state !== CircuitState.CLOSED && this.sync();
  }

  /** A probe's outcome, as `ProtectedTarget.probe` applies it to the shared breaker (restored with no probe in flight). */
  private probe(health: Health, now: number): void {
    if (health === 'neutral' || this.breaker.state !== CircuitState.HALF_OPEN || !this.breaker.tryAcquire()) return;
    if (health === 'success') this.breaker.onSuccess();
    else this.breaker.onFailure({ backOff: this.extras.steadyProbes !== true || this.ready.at(now) === null });
    this.sync();
  }

  /** Reads the breaker into the gate's hold and probe slots (`SharedBreaker.probeSlots`); true when it is not closed. */
  private sync(): boolean {
    const snapshot = this.breaker.toJSON();
    if (snapshot.state === CircuitState.CLOSED) {
      this.probeSlots = null;
      this.holdUntil = -Infinity;
      return false;
    }
    const successes = snapshot.state === CircuitState.HALF_OPEN ? snapshot.halfOpen.probeSuccesses : 0;
    this.probeSlots = successes === 0 ? 1 : Math.max(1, this.settings.breaker.halfOpenProbes - successes);
    this.holdUntil = Math.ceil(snapshot.openUntil ?? -Infinity);
    return true;
  }

  /** Rolls the traffic counts to `now`'s second; a storm that begins opens a closed breaker (`ProtectedTarget.onStorm`). */
  private roll(now: number): void {
    const ended = this.traffic.roll(now);
    if (ended === null) return;
    const { stormDetection, breaker } = this.settings;
    if (stormDetection.enabled && breaker.enabled && this.storms.stormBeginningWith(stormDetection, ended) !== null && this.probeSlots === null) {
      this.breaker.forceOpen();
      this.sync();
    }
  }
}
