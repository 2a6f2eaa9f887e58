import { CircuitState, type Clock, type Random } from '@retryd/core';
import type { FieldError } from '../domain/errors.js';
import { RetryDelayReasons, type RetryDelayReason, type RetryTask } from '../domain/task.js';
import type { AttemptVerdict } from '../engine/attempt-protection.js';
import type { AttemptResult } from '../engine/attempt-result.js';
import type { AttemptCompletion, Store, TargetRef, TargetView } from '../store/store.js';
import { AdaptiveRate } from './adaptive-rate.js';
import { gateLimits } from './gate-limits.js';
import { KeptPlaces } from './kept-places.js';
import { BreakerCauses, type ProtectionEvent } from './protection-events.js';
import { ReadyAttempt } from './ready-attempt.js';
import { CapacityProbe } from './capacity-probe.js';
import { RetryPacer } from './retry-pacer.js';
import { SendPacer } from './send-pacer.js';
import { SerialQueue } from './serial-queue.js';
import { readSettings, writeSettings } from './settings-record.js';
import { healthOf, SharedBreaker, type BreakerWrite, type Health } from './shared-breaker.js';
import { loadSignalOf } from './load-signal.js';
import { StormDetector, type RetryStorm } from './storm-detector.js';
import type { BreakerAction } from './target-control.js';
import { TargetGate } from './target-gate.js';
import type { TargetSettings } from './target-settings.js';
import { TrafficCounters } from './traffic-counters.js';

/**
 * The longest a `Retry-After` holds a whole target, in ms (10 minutes), and never longer than the service honours a
 * `Retry-After` at all (`--max-retry-after`): a longer one still delays its own task as its policy allows, but one
 * answer must not stop every other task of the target for hours. An operator ends a hold at once (`release`, or the
 * breaker's `close` or `reset`).
 */
export const MAX_RETRY_AFTER_HOLD_MS = 600_000;

/**
 * A claimed task that waited this long past its due time, in ms, waited in the gate (a hold, a limit): the shared
 * breaker may have changed, and is read again (at most this often) before the attempt's outcome is judged. On a
 * healthy target tasks go out when due, so this costs nothing there.
 */
const WAITED_MS = 100;

/**
 * The share of its TTL at which the view a hand-off is judged by is read again while it still admits (three quarters):
 * the read, a few ms, ends before the view lapses, and a target with steady traffic is read a third more often than
 * at the TTL alone.
 */
const REFRESH_AHEAD = 0.75;

/** What a {@link ProtectedTarget} needs from its owner. */
export interface ProtectedTargetDeps {
  store: Pick<Store, 'targetState' | 'holdTarget' | 'releaseTarget' | 'limitTarget' | 'admin' | 'rescheduleTask'>;
  defaults: TargetSettings;
  /** Whole epoch ms (the engine's "now"). */
  clock: Clock;
  random: Random;
  /** How long settings and the shared breaker are trusted before they are read again, in ms. */
  ttlMs: number;
  /** The longest `Retry-After` the service honours, in ms: a target's `Retry-After` hold is no longer either. */
  maxRetryAfterMs: number;
  emit: (event: ProtectionEvent) => void;
  report: (error: unknown) => void;
  /** The gate opened or loosened: claim now rather than at the next timer. */
  wake: () => void;
}

/**
 * Everything this instance knows and does for one target: its settings (cached), its shared breaker, adaptive rate,
 * retry budget, traffic counts and what it last wrote to the store's gate. The hot-path methods are synchronous and
 * O(1); every store write runs in the target's own queue, one at a time, and only when something changes.
 */
export class ProtectedTarget {
  settings: TargetSettings;
  settingsVersion = 0;
  /** Whether the settings and the shared breaker were read at least once. */
  loaded = false;
  readonly breaker: SharedBreaker;
  readonly adaptive = new AdaptiveRate();
  /** Tells a full target from one failing a share of its calls, and paces a full one (with `adaptive`). */
  private capacity = new CapacityProbe();
  /** Whether the gate was last synced with this target in slow start (no success remembered). */
  private slowStarting = false;
  /** The capacity probe's pace the gate was last synced with (null: none), so that a change is written once. */
  private syncedPace: number | null = null;
  private pacer: RetryPacer;
  private readonly sends: SendPacer;
  private traffic: TrafficCounters;
  private readonly storms = new StormDetector();
  /** The fewest attempts this target's tasks lately needed to succeed, remembered for the breaker's window. */
  private ready: ReadyAttempt;
  private readAt = -Infinity;
  private loading: Promise<void> | undefined;
  /** A read of the target's state in progress (one at a time). */
  private reading: Promise<void> | undefined;
  /** A read of the breaker that a waited task started: outcomes wait for it, to be judged on what it finds. */
  private probeCheck: Promise<void> | undefined;
  private readonly queue: SerialQueue;
  /** Until when this instance held the target for a `Retry-After`. */
  private retryAfterUntil = -Infinity;
  /** The last moment this instance saw its breaker not closed (its own closing, or a `heldThrough` while open). */
  private breakerSeenUntil = -Infinity;
  private readonly gate: TargetGate;
  /** Retries of this target left at their own due time by its breaker, to be put back in line then (see the class). */
  private readonly places: KeptPlaces;

  constructor(
    readonly ref: TargetRef,
    private readonly deps: ProtectedTargetDeps,
  ) {
    this.settings = deps.defaults;
    this.breaker = new SharedBreaker(deps.store.targetState, ref, deps.defaults.breaker, deps.clock, deps.random, deps.report);
    this.pacer = new RetryPacer(deps.defaults.retryBudget, deps.clock);
    this.ready = new ReadyAttempt(deps.defaults.breaker.windowMs);
    this.sends = new SendPacer(deps.clock);
    this.traffic = new TrafficCounters(deps.defaults.stormDetection.baselineMs);
    this.gate = new TargetGate(deps.store, ref, deps.clock, deps.wake);
    this.queue = new SerialQueue(deps.report);
    this.places = new KeptPlaces(deps.store, deps.clock, (now) => this.breaker.stateAt(now) !== CircuitState.CLOSED, deps.report);
  }

  // ---- the hot path ----------------------------------------------------------------------------------------------

  /** The first read of this target, when it has not happened yet; starts a read again when the last is over a TTL old. */
  ensureLoaded(now: number): Promise<void> | undefined {
    if (!this.loaded) return (this.loading ??= this.queue.run(() => this.load(now)).finally(() => (this.loading = undefined)));
    if (now - this.readAt >= this.deps.ttlMs) void this.readSoon(() => this.refresh(now));
    return undefined;
  }

  /**
   * An attempt of `task` goes out: undefined when it goes at once, else a promise of its turn, so that this instance's
   * sends to a rate-limited target are spread at its rate (`SendPacer`), waiting never more than `maxWaitMs`.
   */
  started(task: RetryTask, now: number, maxWaitMs: number): Promise<void> | undefined {
    if (now - (task.nextAttemptAt ?? now) >= WAITED_MS && now - this.breaker.readAt >= WAITED_MS) {
      // It waited in the gate: what held it may have been another instance's breaker, whose probe this may be.
      // (A read already in progress reads the breaker too.)
      const check =
        this.reading ??
        this.readSoon(async () => {
          if (await this.breaker.refresh(now)) await this.syncGate(now);
        });
      if (check !== undefined) {
        this.probeCheck = check;
        void check.then(() => {
          if (this.probeCheck === check) this.probeCheck = undefined;
        });
      }
    }
    this.roll(now);
    const retry = task.attemptNumber > task.runAttemptOffset;
    this.traffic.dispatched(retry);
    if (!retry && this.settings.retryBudget.enabled) this.pacer.firstAttempt();
    const turn = this.sends.turn(this.rateNow(), maxWaitMs);
    if (!this.settings.adaptive.enabled) return turn;
    // Counted when it goes, after its turn: the capacity probe compares what was sent with what was accepted.
    if (turn === undefined) {
      this.capacitySent(now);
      return undefined;
    }
    return turn.then(() => this.capacitySent(this.deps.clock.now()));
  }

  /** An attempt ended; see `AttemptProtection.attemptEnded`. */
  ended(task: RetryTask, result: AttemptResult, completion: AttemptCompletion, now: number): AttemptVerdict | Promise<AttemptVerdict | undefined> | undefined {
    const check = this.probeCheck;
    if (check !== undefined) return check.then(() => this.recordOutcome(task, result, completion, now));
    return this.recordOutcome(task, result, completion, now);
  }

  /**
   * Tells every protection of the target what the attempt's outcome says of it (readiness, traffic, breaker, capacity,
   * Retry-After, adaptive rate), and returns the verdict on the task's retry: a breaker hold or the retry budget's pace.
   */
  private recordOutcome(task: RetryTask, result: AttemptResult, completion: AttemptCompletion, now: number): AttemptVerdict | Promise<AttemptVerdict> | undefined {
    const s = this.settings;
    this.roll(now);
    const attempt = task.attemptNumber + 1 - task.runAttemptOffset;
    const starting = this.ready.at(now) === null;
    const health = this.healthOf(completion, attempt, now);
    // A key that was not ready yet is not a call the target failed: storm detection does not count it either.
    if (health !== 'not_ready') this.traffic.ended(health === 'success');
    // The first success (or the first in a breaker window) ends the slow start: the gate lets the whole concurrency go,
    // at once (not at the adaptive writes' interval: each ms of it is a fresh target's start held to 10 in flight).
    if (starting && this.slowStarting && this.ready.at(now) !== null) void this.queue.run(() => this.syncGate(this.deps.clock.now()));
    if (s.adaptive.enabled) this.measureCapacity(health, attempt, completion.attempt?.startedAt ?? now, now);
    const judged: Health = health === 'not_ready' ? 'neutral' : health;
    let written: Promise<void> | undefined;
    let breakerHandles = false;
    // `enabled` says whether outcomes open the breaker; one that is open (by hand, say) is honoured either way.
    if (this.breaker.stateAt(now) === CircuitState.CLOSED) {
      if (s.breaker.enabled && this.breaker.record(judged)) {
        breakerHandles = true;
        written = this.queue.run(() => this.breakerWrite(BreakerCauses.FAILURES, now, () => this.breaker.openFromLocal(now)));
      }
    } else {
      breakerHandles = true;
      if ((completion.attempt?.startedAt ?? -Infinity) >= (this.breaker.openUntil ?? Infinity)) {
        // Started after the open period ended, so the gate let it through as a probe; earlier ones are stale.
        written = this.queue.run(() => this.probe(judged, now));
      }
    }
    const { status, retryAfterMs: retryAfter } = loadSignalOf(result, now);
    if (retryAfter !== undefined) {
      const hold = this.retryAfterHold(retryAfter, status as number, now);
      if (hold !== undefined) written = hold;
    }
    if (s.adaptive.enabled) {
      // Only an answer that says "too much" lowers the rate: a 429, or a 503 with a Retry-After. A bare 503 is also what
      // a target says of one key ("not ready yet") or of a share of its calls; halving on each starved such targets.
      // A target the breaker is dealing with (an outage) keeps its rate, so a recovered target is not left at a sliver.
      if (status === 429 || (status === 503 && retryAfter !== undefined)) {
        if (!breakerHandles && this.adaptive.throttled(s.adaptive, s.rateLimit.ratePerSecond, this.traffic.dispatchRate(now), now)) {
          this.syncLater(now);
        }
      } else if (this.adaptive.advance(s.adaptive, s.rateLimit.ratePerSecond, now)) {
        this.syncLater(now);
      }
    }
    const next = completion.next;
    if (next.status !== 'PENDING' || next.nextAttemptAt === null || health === 'success') return written === undefined ? undefined : { written };
    if (breakerHandles) {
      // Judged once the breaker's change is written: its new open period decides the verdict.
      const policyAt = next.nextAttemptAt;
      const judge = (): AttemptVerdict => this.heldRetry(task, attempt, policyAt);
      if (written === undefined) return judge();
      const settle = (): AttemptVerdict => ({ ...judge(), written });
      return written.then(settle, settle);
    }
    let retryAt: number | undefined;
    let delayedBy: RetryDelayReason | undefined;
    if (judged === 'failure' && s.retryBudget.enabled) {
      const paced = this.pacer.pace(next.nextAttemptAt);
      if (paced !== next.nextAttemptAt) {
        retryAt = paced;
        delayedBy = RetryDelayReasons.RETRY_BUDGET;
      }
    }
    if (retryAt === undefined) return written === undefined ? undefined : { written };
    const verdict: AttemptVerdict = delayedBy === undefined ? { retryAt } : { retryAt, delayedBy };
    if (written !== undefined) verdict.written = written;
    return verdict;
  }

  /**
   * The verdict on the retry of a task whose attempt failed while the breaker held its target (or opened it), due by its
   * policy at `policyAt`. It keeps its place in line, so that when the hold ends the probes are the tasks furthest along,
   * the ones whose next call can succeed, not the fresh tasks that queued behind or beside them. Beside: a batch enqueued
   * at once shares one due time, and among equal due times PostgreSQL claims last a row written again (its index orders
   * them by row version), so the place is a ms before its last due time. But never sooner than its policy lets it go:
   * a retry due within the hold is moved to its place at once (the hold keeps it until then anyway); a later one stays
   * at its own due time and takes back its place then, if the breaker still holds the target (`KeptPlaces`). Moved
   * sooner, a task was every open period's probe while the target stayed down, and spent its attempts at the
   * breaker's pace (five attempts 30 s apart in a tenth of a second).
   */
  private heldRetry(task: RetryTask, attempt: number, policyAt: number): AttemptVerdict {
    const placeAt = (task.nextAttemptAt ?? task.createdAt) - 1;
    if (policyAt <= (this.breaker.openUntil ?? -Infinity)) return { retryAt: Math.min(policyAt, placeAt) };
    const ref = { tenantId: task.tenantId, taskId: task.taskId };
    return { onWritten: (version) => this.places.keep(ref, version, attempt, policyAt, placeAt) };
  }

  /**
   * What an attempt says of the target: the engine's health of its outcome, except that a failure before the target's
   * ready attempt is `not_ready` (see {@link ReadyAttempt}); a success teaches the ready attempt.
   */
  private healthOf(completion: AttemptCompletion, attempt: number, now: number): Health | 'not_ready' {
    const health = healthOf(completion);
    if (health === 'success') this.ready.succeeded(attempt, now);
    else if (health === 'failure' && this.ready.notReady(attempt, now)) return 'not_ready';
    return health;
  }

  /**
   * Feeds the capacity probe an answer that says something of load: a success or a counted failure, of an attempt at or
   * past the ready attempt (a key not ready yet says nothing of load, and counting its successes alone would make the
   * share accepted look higher), while the breaker is closed (probes are the breaker's) and a success is remembered.
   */
  private measureCapacity(health: Health | 'not_ready', attempt: number, sentAt: number, now: number): void {
    const ready = health === 'not_ready' || health === 'neutral' ? null : this.ready.at(now);
    if (ready === null || attempt < ready || this.breaker.stateAt(now) !== CircuitState.CLOSED) {
      // Answered all the same: the sample it was sent in need not wait for it.
      this.capacity.skipped(sentAt, now);
      return;
    }
    this.capacity.answered(health === 'success', sentAt, now);
    if (this.capacity.rateAt(now) !== this.syncedPace) this.paceChanged();
  }

  private capacitySent(now: number): void {
    this.capacity.sent(now);
    if (this.capacity.rateAt(now) !== this.syncedPace) this.paceChanged();
  }

  /**
   * The capacity probe's pace changed (a test began or ended, a full target's pace moved): into the gate at once, not at
   * AIMD's write interval, since its test lasts one sample, a fraction of a second, and must halve the claims too.
   */
  private paceChanged(): void {
    // Once per change: syncGate records the pace it wrote.
    this.syncedPace = this.capacity.rateAt(this.deps.clock.now());
    void this.queue.run(async () => {
      const at = this.deps.clock.now();
      await this.breaker.refresh(at);
      await this.syncGate(at);
    });
  }

  /** Whether the gate counts this target's attempts in flight: a concurrency limit, a breaker's probes, a slow start. */
  limitsInFlight(): boolean {
    const s = this.settings;
    return s.maxInFlight !== null || this.breaker.openUntil !== null || this.slowStarting;
  }

  /** Whether a task due now may be handed to the local engine without a claim. */
  admitsHandOff(now: number): boolean {
    if (!this.loaded || this.retryAfterUntil > now || this.gate.isHeld(now) || this.gate.isLimited()) return false;
    // What this instance knows may be a TTL old: another instance's breaker, hold or limits are learnt by reading the
    // store again. Until then the task goes through the claim gate, which the store enforces whatever this instance knows.
    // The read starts once the view is past REFRESH_AHEAD of a TTL old, while it still admits: under steady traffic
    // the view is renewed before it lapses, and no batch is sent the long way (the claim) for its age alone.
    const age = now - this.readAt;
    if (age >= this.deps.ttlMs * REFRESH_AHEAD) void this.readSoon(() => this.refresh(now));
    if (age >= this.deps.ttlMs) return false;
    const s = this.settings;
    if (this.breaker.stateAt(now) !== CircuitState.CLOSED || this.slowStart(now)) return false;
    if (s.rateLimit.ratePerSecond !== null || s.maxInFlight !== null) return false;
    return this.adaptiveRate(now) === null;
  }

  /**
   * Names the breaker in the `lastError` of a task that ran out of budget before an attempt, when the breaker held the
   * target while the task waited (read afresh: the hold may have been another instance's doing).
   */
  explainBudget(task: RetryTask, completion: AttemptCompletion, now: number): Promise<void> {
    return this.queue.run(async () => {
      if (now - this.breaker.readAt > this.deps.ttlMs / 4) await this.breaker.refresh(now);
      const { heldSince, releasedAt } = this.breaker;
      const due = task.nextAttemptAt ?? task.createdAt;
      if (heldSince === null || (releasedAt !== null && releasedAt < due)) return;
      const note = `budget ran out while ${this.ref.targetKey} was held by its circuit breaker`;
      completion.next.lastError = note;
      if (completion.ifCancelRequested !== undefined) completion.ifCancelRequested.lastError = note;
    });
  }

  // ---- operators -------------------------------------------------------------------------------------------------

  /** Reads settings and breaker afresh (an operator's read); rejects when the store does. */
  readNow(now: number): Promise<void> {
    return this.queue.call(() => (this.loaded ? this.refresh(now) : this.load(now, false)));
  }

  /** Applies a settings patch; `errors` when it breaks a rule. Rejects when the store does. */
  putSettings(patch: unknown, now: number): Promise<{ ok: true } | { ok: false; errors: FieldError[] }> {
    return this.queue.call(async () => {
      if (!this.loaded) await this.load(now);
      const written = await writeSettings(this.deps.store.targetState, this.ref, patch, this.deps.defaults, now, this.deps.report);
      if (!written.ok) return written;
      this.apply(written.record.settings, written.record.version);
      if (!this.settings.breaker.enabled && this.breaker.openUntil !== null) {
        await this.breakerWrite(BreakerCauses.SETTINGS, now, () => this.breaker.change(now, (b) => (b.forceClose(), b.toJSON())));
      }
      await this.syncGate(now);
      return { ok: true };
    });
  }

  /**
   * Opens (for `durationMs`, by default the settings' longest open period), closes or resets the shared breaker by
   * hand; a close or reset also ends every hold of the target (a `Retry-After`'s too): the operator means it to go now.
   * Rejects when the store does.
   */
  operate(action: BreakerAction, now: number, durationMs?: number): Promise<void> {
    return this.queue.call(async () => {
      if (!this.loaded) await this.load(now);
      if (action !== 'open') {
        // A hold besides the breaker's own (whose end `breaker_closed` reports): a Retry-After's, this instance's or one
        // another instance wrote that this one has read.
        const held = this.retryAfterUntil > now || this.gate.lastHeldUntil() > Math.max(now, this.breaker.openUntil ?? -Infinity);
        this.retryAfterUntil = -Infinity;
        await this.breakerWrite(BreakerCauses.OPERATOR, now, () =>
          this.breaker.change(now, (b) => {
            if (action === 'close') b.forceClose();
            else b.reset();
            return b.toJSON();
          }),
        );
        await this.gate.release(now);
        if (held) this.deps.emit({ event: 'target_released', tenantId: this.ref.tenantId, target: this.ref.targetKey, cause: 'operator' });
        return;
      }
      const openFor = durationMs ?? this.settings.breaker.maxOpenDurationMs;
      if (this.gate.isHeld(now + openFor)) {
        // A shorter opening by hand replaces a longer one, but holds only extend in the store: end it first (keeping
        // a Retry-After's hold), and the write below holds the target again until the new end.
        await this.gate.release(now);
        await this.gate.hold(this.retryAfterUntil, now);
      }
      await this.breakerWrite(BreakerCauses.OPERATOR, now, () => this.breaker.change(now, (b) => (b.forceOpen(openFor), b.toJSON())));
    });
  }

  /**
   * Ends the target's holds now (an operator's `release`): a `Retry-After`'s, whichever instance made it, and any other
   * hold but an open breaker's, which holds the target again until its open period ends (its `close` ends that).
   * Rejects when the store does.
   */
  release(now: number): Promise<void> {
    return this.queue.call(async () => {
      if (!this.loaded) await this.load(now);
      else await this.breaker.refresh(now);
      this.retryAfterUntil = -Infinity;
      await this.gate.release(now);
      await this.gate.hold(this.breaker.openUntil ?? -Infinity, now);
      this.deps.emit({ event: 'target_released', tenantId: this.ref.tenantId, target: this.ref.targetKey, cause: 'operator' });
    });
  }

  /** The store's view of the gate plus this instance's: what `TargetControl` answers with. */
  allowedRate(view: TargetView | undefined): number | null {
    const adaptive = this.adaptiveRate(this.deps.clock.now());
    if (adaptive !== null) return adaptive;
    const configured = this.settings.rateLimit.ratePerSecond;
    const stored = view?.ratePerSecond ?? null;
    return stored !== null && (configured === null || stored < configured) ? stored : null;
  }

  /** Whether this instance knows the target to be held at `now` (its own `Retry-After` hold, or the gate it last wrote or read). */
  heldAt(now: number): boolean {
    return this.retryAfterUntil > now || this.gate.isHeld(now);
  }

  /**
   * The latest moment up to `now` at which this instance knew the target held: by its breaker (open or half-open, when
   * only probes go) or by a hold (a breaker's, a `Retry-After`'s); -Infinity if never. A task due before it waited for
   * its target, not for the service (`retry_schedule_lag_seconds` counts from it).
   */
  heldThrough(now: number): number {
    if (this.breaker.stateAt(now) !== CircuitState.CLOSED) {
      this.breakerSeenUntil = now;
      return now;
    }
    return Math.min(now, Math.max(this.breakerSeenUntil, this.retryAfterUntil, this.gate.lastHeldUntil()));
  }

  /** The rate this instance lets the target have now: its adaptive limit, else the configured one, else null (no limit). */
  rateNow(): number | null {
    const adaptive = this.adaptiveRate(this.deps.clock.now());
    const configured = this.settings.rateLimit.ratePerSecond;
    return adaptive !== null && (configured === null || adaptive < configured) ? adaptive : configured;
  }

  /** What adaptive throttling allows now: the lower of AIMD's rate (from 429s) and the capacity probe's pace, or null. */
  private adaptiveRate(now: number): number | null {
    if (!this.settings.adaptive.enabled) return null;
    const aimd = this.adaptive.allowed;
    const pace = this.capacity.rateAt(now);
    if (aimd === null) return pace;
    return pace === null ? aimd : Math.min(aimd, pace);
  }

  /**
   * Whether this instance saw the target answer a call within the breaker's window: a failed probe then re-opens the
   * breaker without backing off (the target fails a share of its calls; a probe is one draw of that share, and a
   * growing wait between draws starved a target failing 90%: seven minutes for 5,000 tasks that took 24 s unprotected).
   */
  private answeredLately(now: number): boolean {
    return this.ready.at(now) !== null;
  }

  /** Whether the target is in slow start: the breaker on, and no success remembered (`SLOW_START_IN_FLIGHT`). */
  private slowStart(now: number): boolean {
    return this.settings.breaker.enabled && this.ready.at(now) === null;
  }

  /** Drops the deferred limit write, if one waits, and the places waiting to be kept. */
  close(): void {
    this.gate.close();
    this.places.close();
  }

  /** Resolves once the state changes under way are written. */
  whenIdle(): Promise<void> {
    return this.queue.idle();
  }

  // ---- state changes (always inside the queue) ----------------------------------------------------------------------

  /** The first read; then the gate brought in line, unless `sync` is false (an operator's read writes nothing). */
  private async load(now: number, sync = true): Promise<void> {
    try {
      await this.read(now);
    } finally {
      // Even when the store failed: the defaults apply meanwhile, and the next look at the target reads it again.
      this.loaded = true;
    }
    if (sync) await this.syncGate(now);
  }

  private async read(now: number): Promise<void> {
    // Before the reads: a failing store is tried again a TTL later, not at every attempt.
    this.readAt = now;
    const [record, gate] = await Promise.all([
      readSettings(this.deps.store.targetState, this.ref, this.deps.defaults, this.deps.report),
      // The gate as the fleet left it: an adaptive limit another instance set (or left behind when it stopped) is taken
      // over, so that this instance raises and lifts it rather than leaving it or overwriting it.
      this.deps.store.admin.getTarget(this.ref, now).catch((error: unknown) => (this.deps.report(error), undefined)),
      this.breaker.refresh(now),
    ]);
    this.apply(record.settings, record.version);
    if (gate !== undefined) {
      this.gate.known(gate);
      const configured = this.settings.rateLimit.ratePerSecond;
      if (this.settings.adaptive.enabled && gate.ratePerSecond !== null && (configured === null || gate.ratePerSecond < configured)) {
        this.adaptive.adopt(gate.ratePerSecond, now);
      }
    }
  }

  private async refresh(now: number): Promise<void> {
    this.readAt = now;
    const [record, breakerChanged, gate] = await Promise.all([
      readSettings(this.deps.store.targetState, this.ref, this.deps.defaults, this.deps.report),
      this.breaker.refresh(now),
      // Holds other instances made (a Retry-After), for the hand-off's sake.
      this.deps.store.admin.getTarget(this.ref, now).catch((error: unknown) => (this.deps.report(error), undefined)),
    ]);
    if (gate !== undefined) this.gate.known(gate);
    if (this.apply(record.settings, record.version) || breakerChanged) await this.syncGate(now);
  }

  /** Takes settings read or written at `version`; false when they are the ones already in use. */
  private apply(settings: TargetSettings, version: number): boolean {
    if (version === this.settingsVersion && this.loaded) return false;
    const before = this.settings;
    this.settings = settings;
    this.settingsVersion = version;
    if (before === settings) return false;
    this.breaker.configure(settings.breaker);
    if (before.breaker.windowMs !== settings.breaker.windowMs) this.ready = new ReadyAttempt(settings.breaker.windowMs);
    this.pacer = new RetryPacer(settings.retryBudget, this.deps.clock);
    if (before.stormDetection.baselineMs !== settings.stormDetection.baselineMs) {
      this.traffic = new TrafficCounters(settings.stormDetection.baselineMs);
    }
    if (!settings.adaptive.enabled) {
      this.adaptive.reset();
      this.capacity = new CapacityProbe();
    }
    return true;
  }

  private async probe(health: Health, now: number): Promise<void> {
    await this.breakerWrite(BreakerCauses.PROBES, now, () =>
      this.breaker.change(now, (b) => {
        // Closed or re-opened meanwhile (by another probe's outcome): this one says nothing new.
        if (b.state !== CircuitState.HALF_OPEN || health === 'neutral' || !b.tryAcquire()) return null;
        if (health === 'success') b.onSuccess();
        else b.onFailure({ backOff: !this.answeredLately(now) });
        return b.toJSON();
      }),
    );
  }

  /**
   * Makes a breaker change, then brings the gate in line with it (a hold until an opening's end, probe slots, limits
   * restored on a close; a hold cut short when it closes early) and reports an opening or closing this write made.
   */
  private async breakerWrite(causes: BreakerCauses, now: number, write: () => Promise<BreakerWrite>): Promise<void> {
    const { before, after, written } = await write();
    if (written) {
      const wasClosed = before === null || before.state === CircuitState.CLOSED;
      const { tenantId, targetKey } = this.ref;
      if (after !== null && after.state === CircuitState.OPEN && (wasClosed || after.openedAt !== before.openedAt)) {
        const { openUntil, reopenCount } = after;
        this.deps.emit({ event: 'breaker_open', tenantId, target: targetKey, openUntil: openUntil ?? now, reopenCount, cause: causes.open });
      } else if (!wasClosed && (after === null || after.state === CircuitState.CLOSED)) {
        this.breakerSeenUntil = now;
        this.deps.emit({ event: 'breaker_closed', tenantId, target: targetKey, cause: causes.close });
        // The probes got through: the downstream is back. Start again from the configured rate; 429s teach the rest.
        this.adaptive.reset();
        // Closed before its open period ended (by hand): end the hold now, but keep a Retry-After's.
        if ((before?.openUntil ?? -Infinity) > now) {
          await this.gate.release(now);
          await this.gate.hold(this.retryAfterUntil, now);
        }
      }
    }
    await this.syncGate(now);
  }

  /**
   * Brings the store's gate in line with what this instance knows: held until the breaker's open period ends, its probe
   * slots (or the configured limit) in flight, the configured or adaptive rate. Writes only what differs.
   */
  private async syncGate(now: number): Promise<void> {
    const s = this.settings;
    const probes = this.breaker.probeSlots(s.breaker.halfOpenProbes);
    this.slowStarting = this.slowStart(now);
    this.syncedPace = s.adaptive.enabled ? this.capacity.rateAt(now) : null;
    await this.gate.hold(this.breaker.openUntil ?? -Infinity, now);
    await this.gate.limit(gateLimits(s, this.adaptiveRate(now), probes, this.slowStarting), now);
  }

  /** A 429 or 503 with a `Retry-After` holds the whole target until then (extending, never shortening, a hold). */
  private retryAfterHold(retryAfterMs: number, status: number, now: number): Promise<void> | undefined {
    if (!this.settings.retryAfterHoldsTarget) return undefined;
    const until = Math.ceil(now + Math.min(retryAfterMs, MAX_RETRY_AFTER_HOLD_MS, this.deps.maxRetryAfterMs));
    if (until <= this.retryAfterUntil) return undefined;
    this.retryAfterUntil = until;
    return this.queue.run(async () => {
      // Reported only when this write extended the hold (a longer one already known makes the line untrue).
      if (await this.gate.hold(until, now)) {
        this.deps.emit({ event: 'target_held', tenantId: this.ref.tenantId, target: this.ref.targetKey, until, status });
      }
    });
  }

  /** Starts a read of the target's state unless one is in progress; returns it when it started one. */
  private readSoon(read: () => Promise<void>): Promise<void> | undefined {
    if (this.reading !== undefined) return undefined;
    const reading = this.queue.run(read).finally(() => {
      if (this.reading === reading) this.reading = undefined;
    });
    this.reading = reading;
    return reading;
  }

  /** An adaptive change: written to the gate now or when the gate's write interval allows. */
  private syncLater(now: number): void {
    this.gate.throttle(now, () => {
      // Read the breaker first: limits written from a stale copy could undo another instance's probe slots.
      void this.queue.run(async () => {
        const at = this.deps.clock.now();
        await this.breaker.refresh(at);
        await this.syncGate(at);
      });
    });
  }

  /** Rolls the traffic counts to `now`'s second and checks the second that ended for a retry storm. */
  private roll(now: number): void {
    const ended = this.traffic.roll(now);
    if (ended === null || !this.settings.stormDetection.enabled) return;
    const storm = this.storms.stormBeginningWith(this.settings.stormDetection, ended);
    if (storm !== null) void this.queue.run(() => this.onStorm(storm, now));
  }

  private async onStorm(storm: RetryStorm, now: number): Promise<void> {
    const { tenantId, targetKey } = this.ref;
    this.deps.emit({ event: 'retry_storm', tenantId, target: targetKey, retriesPerSecond: storm.retriesPerSecond, successRatio: storm.successRatio });
    if (!this.settings.breaker.enabled) return;
    await this.breakerWrite(BreakerCauses.STORM, now, () =>
      this.breaker.change(now, (b) => (b.state === CircuitState.CLOSED ? (b.forceOpen(), b.toJSON()) : null)),
    );
  }
}
