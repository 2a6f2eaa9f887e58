import { CircuitBreaker, CircuitState, type CircuitBreakerOptions, type CircuitBreakerSnapshot, type Clock, type Random } from '@retryd/core';
import type { AttemptCompletion, TargetRef, TargetStateStore } from '../store/store.js';
import { breakerOptionsOf } from './core-options.js';
import type { BreakerSettings } from './target-settings.js';

/** The `targetState` key of a target's breaker: `breaker:https://api.example.com`. */
export function breakerKey(targetKey: string): string {
  return `breaker:${targetKey}`;
}

/** What an attempt's outcome says about the downstream's health. */
export type Health = 'success' | 'failure' | 'neutral';

/**
 * An attempt's health from the outcome the engine decided: success; a failure the policy retries (a network error, a
 * timeout, a retryable status), whether retried or exhausted; or neither (a permanent answer such as a 400).
 */
export function healthOf(completion: AttemptCompletion): Health {
  switch (completion.next.status) {
    case 'SUCCEEDED':
      return 'success';
    case 'PENDING':
    case 'EXHAUSTED':
      return 'failure';
    default:
      return 'neutral';
  }
}

/** One compare-and-set change of the shared breaker: the snapshot before, the one after, and whether this call wrote. */
export interface BreakerWrite {
  before: CircuitBreakerSnapshot | null;
  after: CircuitBreakerSnapshot | null;
  written: boolean;
}

/**
 * Decides a change from the shared breaker as stored (restored into `breaker`, or a new one when none is stored):
 * the snapshot to write, or null to leave it as it is.
 */
export type BreakerDecision = (breaker: CircuitBreaker, stored: CircuitBreakerSnapshot | null) => CircuitBreakerSnapshot | null;

/** Lost races in a row after which a change gives up (each one means another instance just changed the breaker). */
const MAX_RACES = 8;

/** The state of a stored snapshot at `now` (an OPEN whose time is up is HALF_OPEN). */
export function stateAt(snapshot: CircuitBreakerSnapshot | null, now: number): CircuitState {
  if (snapshot === null || snapshot.state === CircuitState.CLOSED) return CircuitState.CLOSED;
  return snapshot.state === CircuitState.OPEN && now < (snapshot.openUntil ?? 0) ? CircuitState.OPEN : CircuitState.HALF_OPEN;
}

/**
 * One target's circuit breaker, shared by every instance through `targetState` (`breaker:<targetKey>`, a
 * `@retryd/core` snapshot, versioned):
 *
 * - While the shared breaker is CLOSED, each instance feeds its own outcomes to a **local** `CircuitBreaker`; when that
 *   one opens, its snapshot is written over the CLOSED one by compare-and-set. If another instance opened it first,
 *   that opening is adopted instead. The local counters start again at every change of the shared breaker.
 * - Every later change (a probe's outcome, an operator's open, close or reset) is read, applied to the stored snapshot
 *   restored into a breaker, and written back by compare-and-set, retried on a lost race: no update is lost.
 * - Open periods are backed off and drawn with equal jitter from the injected random; `openUntil` is rounded up to a
 *   whole ms before it is written, so the snapshot and the store's hold say the same time.
 *
 * What this instance knows of the shared state is {@link SharedBreaker.snapshot}, read again by its owner at most
 * every second or so and whenever a write of its own loses a race.
 */
export class SharedBreaker {
  private copy: { snapshot: CircuitBreakerSnapshot | null; version: number } = { snapshot: null, version: 0 };
  private local: CircuitBreaker;
  private options: CircuitBreakerOptions;
  /** When this instance last read or wrote the shared breaker (epoch ms). */
  readAt = -Infinity;
  /** When the latest hold by this breaker began (its opening from CLOSED), as far as this instance saw it; null: never. */
  heldSince: number | null = null;
  /** When that hold ended (the breaker closed again); null while it lasts. */
  releasedAt: number | null = null;

  constructor(
    private readonly state: TargetStateStore,
    private readonly target: TargetRef,
    settings: BreakerSettings,
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly onInvalid: (error: Error) => void,
  ) {
    this.options = this.optionsOf(settings);
    this.local = new CircuitBreaker(this.options);
  }

  /** The shared breaker as this instance last knew it (null: none stored, CLOSED). */
  get snapshot(): CircuitBreakerSnapshot | null {
    return this.copy.snapshot;
  }

  /** Takes new settings: the local counters start again. */
  configure(settings: BreakerSettings): void {
    this.options = this.optionsOf(settings);
    this.local = new CircuitBreaker(this.options);
  }

  /** The shared state at `now` as this instance knows it. O(1). */
  stateAt(now: number): CircuitState {
    return stateAt(this.copy.snapshot, now);
  }

  /** Until when the shared breaker holds the target (its open period's end), or null while it is CLOSED. */
  get openUntil(): number | null {
    const s = this.copy.snapshot;
    return s === null || s.state === CircuitState.CLOSED ? null : s.openUntil;
  }

  /**
   * Probes admitted at once in this open or half-open period, or null while CLOSED: one until a probe has succeeded
   * (a target still down costs one call per open period, not `probes`), then the successes still needed (at least 1).
   */
  probeSlots(probes: number): number | null {
    const s = this.copy.snapshot;
    if (s === null || s.state === CircuitState.CLOSED) return null;
    const successes = s.state === CircuitState.HALF_OPEN ? s.halfOpen.probeSuccesses : 0;
    return successes === 0 ? 1 : Math.max(1, probes - successes);
  }

  /**
   * Feeds an outcome to the local breaker (call only while the shared breaker is CLOSED). True when this outcome
   * opened it: the caller then writes {@link SharedBreaker.openFromLocal}.
   */
  record(health: Health): boolean {
    const local = this.local;
    if (local.state !== CircuitState.CLOSED) return false;
    if (health === 'success') local.onSuccess();
    else if (health === 'failure') local.onFailure();
    else return false;
    return local.state !== CircuitState.CLOSED;
  }

  /** Writes the opening of the local breaker over a CLOSED shared one; adopts another instance's opening. */
  async openFromLocal(now: number): Promise<BreakerWrite> {
    try {
      return await this.change(now, (_, stored) => (stateAt(stored, now) === CircuitState.CLOSED ? this.local.toJSON() : null));
    } catch (error) {
      // Not written: count afresh, so that the next failures can open it again.
      this.local = new CircuitBreaker(this.options);
      throw error;
    }
  }

  /** Reads the shared breaker and adopts it when it changed. Returns whether it changed. */
  async refresh(now: number): Promise<boolean> {
    const stored = await this.state.getTargetState(this.target.tenantId, breakerKey(this.target.targetKey));
    const version = stored?.version ?? 0;
    // A version this instance has adopted (or passed) is not adopted again: its snapshot is not even parsed, which
    // would cost a JSON parse and a validation on every read of a breaker that did not change (most reads), and
    // would report a bad snapshot again at every read instead of once per version.
    if (version <= this.copy.version) {
      this.readAt = now;
      return false;
    }
    return this.adopt(version, this.parse(stored?.value), now);
  }

  /**
   * Applies `decide` to the shared breaker as stored now, and writes its result by compare-and-set; on a lost race,
   * reads and decides again. Adopts what it wrote, or what it found when `decide` left it as it was.
   */
  async change(now: number, decide: BreakerDecision): Promise<BreakerWrite> {
    const key = breakerKey(this.target.targetKey);
    for (let race = 0; race < MAX_RACES; race++) {
      const stored = await this.state.getTargetState(this.target.tenantId, key);
      const version = stored?.version ?? 0;
      const before = this.parse(stored?.value);
      const breaker = before === null ? new CircuitBreaker(this.options) : CircuitBreaker.fromJSON(before, this.options);
      const after = decide(breaker, before);
      if (after === null) {
        this.adopt(version, before, now);
        return { before, after: before, written: false };
      }
      if (after.openUntil !== null) after.openUntil = Math.ceil(after.openUntil);
      if (await this.state.putTargetState(this.target.tenantId, key, version, JSON.stringify(after), now)) {
        this.adopt(version + 1, after, now);
        return { before, after, written: true };
      }
    }
    throw new Error(`the breaker of ${this.target.targetKey} changed ${MAX_RACES} times while being written; try again`);
  }

  private adopt(version: number, snapshot: CircuitBreakerSnapshot | null, now: number): boolean {
    this.readAt = now;
    // The same version is the same snapshot; an older one (a read that raced a write of ours) must not undo it.
    if (version <= this.copy.version) return false;
    const wasClosed = this.copy.snapshot === null || this.copy.snapshot.state === CircuitState.CLOSED;
    this.copy = { snapshot, version };
    // Every instance counts afresh after any change of the shared breaker (and the writer's local one has opened).
    this.local = new CircuitBreaker(this.options);
    const closed = snapshot === null || snapshot.state === CircuitState.CLOSED;
    if (wasClosed && !closed) {
      this.heldSince = snapshot.openedAt ?? now;
      this.releasedAt = null;
    } else if (!wasClosed && closed) {
      this.releasedAt = now;
    }
    return true;
  }

  private parse(value: string | undefined): CircuitBreakerSnapshot | null {
    if (value === undefined) return null;
    try {
      // Through the breaker: validated, and an open period longer than this breaker's cap is cut to it.
      return CircuitBreaker.fromJSON(JSON.parse(value), this.options).toJSON();
    } catch (error) {
      this.onInvalid(new Error(`the stored breaker of ${this.target.targetKey} is not a valid snapshot; it counts as closed`, { cause: error }));
      return null;
    }
  }

  private optionsOf(s: BreakerSettings): CircuitBreakerOptions {
    return {
      ...breakerOptionsOf(s),
      openJitter: 'EQUAL',
      random: this.random,
      clock: this.clock,
    };
  }
}
