import type { Clock } from '../time/clock.js';
import { resolveCircuitBreakerOptions, type CircuitBreakerOptions, type ResolvedCircuitBreakerOptions } from './breaker-options.js';
import {
  BREAKER_WINDOW_COUNTERS,
  parseCircuitBreakerSnapshot,
  type BreakerWindowCounter,
  type CircuitBreakerSnapshot,
} from './breaker-snapshot.js';
import { CircuitState, type CircuitStateListener } from './breaker-state.js';
import { BrokenCircuitError } from './broken-circuit-error.js';
import { SlidingWindow } from '../window/sliding-window.js';
import { StateListeners } from './state-listeners.js';

// Shared, not made per call: a breaker counts every call its owner makes, and the common one is a success.
const ONE_SUCCESS: Readonly<Partial<Record<BreakerWindowCounter, number>>> = Object.freeze({ calls: 1 });
const ONE_FAILURE: Readonly<Partial<Record<BreakerWindowCounter, number>>> = Object.freeze({ calls: 1, failures: 1 });

/**
 * A circuit breaker for one downstream target: stops calling it while it is failing, then lets a few probe
 * calls through to learn whether it has recovered.
 *
 * CLOSED opens after `consecutiveFailures` failures in a row, or (with `failureRateThreshold`) when the
 * failure rate over the sliding window reaches the threshold with at least `minimumCalls` calls in it.
 * OPEN refuses calls for the open duration, then turns HALF_OPEN lazily (at the next look at `state`,
 * `tryAcquire()`, ...: there are no timers). HALF_OPEN admits up to `halfOpenProbes` probes; as many
 * probe successes close it, one probe failure re-opens it for a backed-off duration (with `openJitter: 'EQUAL'`,
 * each open period is drawn between half and all of that duration).
 *
 * An operator, or a service that shares one breaker between instances, can also move it by hand:
 * {@link CircuitBreaker.forceOpen}, {@link CircuitBreaker.forceClose} and {@link CircuitBreaker.reset}.
 *
 * Every call admitted by `tryAcquire()` must end in exactly one of `onSuccess()`, `onFailure()` or `release()`
 * (`execute()` does this for you): a HALF_OPEN probe that never reports holds its slot. Outcomes are not
 * tied to the call that reported them, so while OPEN they are ignored, and while HALF_OPEN they are ignored
 * unless a probe is in flight (they come from calls admitted before the breaker opened).
 *
 * @example
 * ```ts
 * const breaker = new CircuitBreaker({ consecutiveFailures: 3, openDurationMs: 10_000 });
 * const body = await breaker.execute(() => fetchJson(url), (err) => !(err instanceof ClientError));
 * ```
 */
export class CircuitBreaker {
  private readonly options: ResolvedCircuitBreakerOptions;
  private readonly clock: Clock;
  private readonly window: SlidingWindow<BreakerWindowCounter>;
  private readonly listeners = new StateListeners();
  private current: CircuitState = CircuitState.CLOSED;
  private failureStreak = 0;
  private openedAt: number | null = null;
  private openUntil: number | null = null;
  private reopenCount = 0;
  private probesInFlight = 0;
  private probeSuccesses = 0;

  /** @throws RangeError naming every invalid option and its rule, e.g. `consecutiveFailures must be an integer >= 1, got 0` */
  constructor(options?: CircuitBreakerOptions) {
    this.options = resolveCircuitBreakerOptions(options);
    this.clock = this.options.clock;
    this.window = new SlidingWindow(this.options.windowMs, BREAKER_WINDOW_COUNTERS);
  }

  /**
   * Restores a breaker from {@link CircuitBreaker.toJSON}'s output (parsed JSON is fine). With the same options
   * and clock it behaves exactly like the original, except that probes in flight are not restored.
   * A window stored with another `windowMs` is dropped; `openUntil` is capped at `now + maxOpenDurationMs`.
   *
   * @throws InvalidSnapshotError naming the first malformed field
   * @throws RangeError for invalid options
   */
  static fromJSON(snapshot: unknown, options?: CircuitBreakerOptions): CircuitBreaker {
    const parsed = parseCircuitBreakerSnapshot(snapshot);
    const breaker = new CircuitBreaker(options);
    breaker.restore(parsed);
    return breaker;
  }

  /** The current state; reading it turns OPEN into HALF_OPEN once the open duration has passed. */
  get state(): CircuitState {
    if (this.current === CircuitState.OPEN && this.openUntil !== null) {
      const now = this.clock.now();
      if (now >= this.openUntil) this.moveTo(CircuitState.HALF_OPEN, now);
    }
    return this.current;
  }

  /**
   * Asks to make a call. True: go ahead (in HALF_OPEN the call is a probe and holds a probe slot until it
   * reports). False: the breaker is OPEN or every probe slot is taken; see {@link CircuitBreaker.openError}.
   */
  tryAcquire(): boolean {
    switch (this.state) {
      case CircuitState.CLOSED:
        return true;
      case CircuitState.OPEN:
        return false;
      case CircuitState.HALF_OPEN:
        if (this.probesInFlight + this.probeSuccesses >= this.options.halfOpenProbes) return false;
        this.probesInFlight++;
        return true;
    }
  }

  /** An admitted call succeeded. */
  onSuccess(): void {
    const state = this.state;
    if (state === CircuitState.CLOSED) {
      this.failureStreak = 0;
      this.window.add(this.clock.now(), ONE_SUCCESS);
    } else if (state === CircuitState.HALF_OPEN && this.endProbe()) {
      this.probeSuccesses++;
      if (this.probeSuccesses >= this.options.halfOpenProbes) this.closeAt(this.clock.now());
    }
  }

  /**
   * An admitted call failed in a way that says the downstream is unhealthy (a timeout, a 503, a reset). A failed probe
   * re-opens the breaker for a backed-off period; with `backOff: false`, for the period of the opening before it: the
   * caller knows the downstream answered other calls lately, so it is failing a share of its calls, not down, and a
   * longer wait would only starve it (a probe of a target that fails 90% of its calls fails nine times in ten).
   */
  onFailure(options?: { backOff?: boolean }): void {
    const state = this.state;
    if (state === CircuitState.CLOSED) {
      const now = this.clock.now();
      this.failureStreak++;
      this.window.add(now, ONE_FAILURE);
      if (this.failureStreak >= this.options.consecutiveFailures || this.rateExceeded(now)) this.openAt(now, 0);
    } else if (state === CircuitState.HALF_OPEN && this.endProbe()) {
      this.openAt(this.clock.now(), this.reopenCount + (options?.backOff === false ? 0 : 1));
    }
  }

  /**
   * An admitted call ended with an outcome that says nothing about the downstream's health (a 400, a
   * cancelled request, a bug in the caller): frees its probe slot in HALF_OPEN and counts nothing.
   */
  release(): void {
    if (this.state === CircuitState.HALF_OPEN) this.endProbe();
  }

  /**
   * Opens the breaker now, by hand, from any state: calls are refused for `durationMs` (default: the open period it
   * would choose for its next opening, backed off by its re-openings in a row and jittered), then probes are let
   * through as after any opening. The re-opening count is kept, so an automatic re-opening later still backs off.
   *
   * @param durationMs - how long to stay OPEN, a finite number >= 0
   * @throws RangeError e.g. `durationMs must be a finite number >= 0, got -1`
   */
  forceOpen(durationMs?: number): void {
    if (durationMs !== undefined && !(Number.isFinite(durationMs) && durationMs >= 0)) {
      throw new RangeError(`durationMs must be a finite number >= 0, got ${String(durationMs)}`);
    }
    const now = this.clock.now();
    this.openAt(now, this.reopenCount, durationMs);
  }

  /**
   * Closes the breaker now, by hand, as if its probes had succeeded: counters cleared, the backoff of its open
   * periods started again. A CLOSED breaker is left as it is (its failure counts included).
   */
  forceClose(): void {
    if (this.current !== CircuitState.CLOSED) this.closeAt(this.clock.now());
  }

  /** Back to a new breaker's state, whatever its state: CLOSED, every count cleared (failures, probes, re-openings). */
  reset(): void {
    const now = this.clock.now();
    if (this.current === CircuitState.CLOSED) {
      this.reopenCount = 0;
      this.resetCounters();
    } else {
      this.closeAt(now);
    }
  }

  /** Whole ms until OPEN turns HALF_OPEN; 0 in any other state. */
  retryAfterMs(): number {
    if (this.state !== CircuitState.OPEN || this.openUntil === null) return 0;
    return Math.max(0, Math.ceil(this.openUntil - this.clock.now()));
  }

  /** The error to throw for a call {@link CircuitBreaker.tryAcquire} refused, with the current state and wait. */
  openError(): BrokenCircuitError {
    return new BrokenCircuitError(this.state, this.retryAfterMs());
  }

  /**
   * Runs `fn` under the breaker: throws {@link BrokenCircuitError} without calling it when refused, and reports
   * its outcome. A rejection counts as a failure when `isFailure(error)` is true (default: always), and is
   * released uncounted otherwise; if `isFailure` itself throws, the slot is released and that error propagates.
   */
  async execute<T>(fn: () => Promise<T>, isFailure: (error: unknown) => boolean = () => true): Promise<T> {
    if (!this.tryAcquire()) throw this.openError();
    let result: T;
    try {
      result = await fn();
    } catch (error) {
      let failed: boolean;
      try {
        failed = isFailure(error);
      } catch (classifierError) {
        this.release();
        throw classifierError;
      }
      if (failed) this.onFailure();
      else this.release();
      throw error;
    }
    // Outside the try: a listener's error thrown from onSuccess must not be counted as a failure of fn.
    this.onSuccess();
    return result;
  }

  /**
   * Calls `listener` synchronously after every state change, with `{ from, to, at }`. A listener that throws
   * does not stop the others or the breaker; its error is rethrown from a microtask (an uncaught exception).
   *
   * @returns a function that unsubscribes this listener
   */
  onStateChange(listener: CircuitStateListener): () => void {
    return this.listeners.add(listener);
  }

  /**
   * The breaker as a plain JSON-safe {@link CircuitBreakerSnapshot}, for {@link CircuitBreaker.fromJSON}.
   * It records the stored state as is: an OPEN whose time is up stays OPEN here (taking a snapshot never
   * changes state or calls listeners) and turns HALF_OPEN at the first look after restoring.
   */
  toJSON(): CircuitBreakerSnapshot {
    return {
      v: 1,
      state: this.current,
      failureStreak: this.failureStreak,
      openedAt: this.openedAt,
      openUntil: this.openUntil,
      reopenCount: this.reopenCount,
      halfOpen: { probesInFlight: this.probesInFlight, probeSuccesses: this.probeSuccesses },
      window: this.window.snapshot(this.clock.now()),
    };
  }

  private restore(s: CircuitBreakerSnapshot): void {
    const o = this.options;
    this.current = s.state;
    this.failureStreak = s.failureStreak;
    this.reopenCount = s.reopenCount;
    this.openedAt = s.openedAt;
    // A snapshot written by a host whose clock ran ahead, or with a larger cap, must not hold the circuit
    // open for longer than this breaker's cap from now.
    this.openUntil = s.openUntil === null ? null : Math.min(s.openUntil, this.clock.now() + o.maxOpenDurationMs);
    // Probes in flight belonged to the process that wrote the snapshot: a restarted process has no calls
    // in flight, and none of them will ever report here, so restoring them would hold their slots forever.
    this.probesInFlight = 0;
    // Keep one success short of closing, so that a smaller halfOpenProbes in new options cannot leave a
    // HALF_OPEN breaker with no slot to admit the probe that would close it.
    this.probeSuccesses = s.state === CircuitState.HALF_OPEN ? Math.min(s.halfOpen.probeSuccesses, o.halfOpenProbes - 1) : 0;
    this.window.restore(s.window);
  }

  private endProbe(): boolean {
    // With no probe in flight the outcome comes from a call admitted before the breaker opened: it describes
    // the downstream as it was then, so it must neither close nor re-open the breaker.
    if (this.probesInFlight === 0) return false;
    this.probesInFlight--;
    return true;
  }

  private rateExceeded(now: number): boolean {
    const threshold = this.options.failureRateThreshold;
    if (threshold === undefined) return false;
    const { calls, failures } = this.window.totals(now);
    // Division, not failures >= threshold × calls: 0.3 × 10 is 3.0000000000000004 in binary floating point.
    return calls >= this.options.minimumCalls && failures / calls >= threshold;
  }

  private openAt(now: number, reopenCount: number, durationMs = this.openDurationMs(reopenCount)): void {
    this.reopenCount = reopenCount;
    this.openedAt = now;
    this.openUntil = now + durationMs;
    this.resetCounters();
    // Forced open while OPEN: a new period, but no change of state to report.
    if (this.current !== CircuitState.OPEN) this.moveTo(CircuitState.OPEN, now);
  }

  /** The `reopenCount`-th re-opening's period: backed off, capped, then jittered as the options say. */
  private openDurationMs(reopenCount: number): number {
    const o = this.options;
    const grown = o.openDurationMs * o.openBackoffMultiplier ** reopenCount;
    // grown is NaN for 0 × Infinity (a zero duration after very many re-openings) and Infinity on overflow.
    const duration = Number.isNaN(grown) ? 0 : Math.min(o.maxOpenDurationMs, grown);
    return o.openJitter === 'EQUAL' ? duration / 2 + o.random() * (duration / 2) : duration;
  }

  private closeAt(now: number): void {
    this.reopenCount = 0;
    this.openedAt = null;
    this.openUntil = null;
    this.resetCounters();
    this.moveTo(CircuitState.CLOSED, now);
  }

  private resetCounters(): void {
    this.failureStreak = 0;
    this.window.clear();
    this.probesInFlight = 0;
    this.probeSuccesses = 0;
  }

  private moveTo(to: CircuitState, at: number): void {
    const from = this.current;
    this.current = to;
    this.listeners.emit({ from, to, at });
  }
}
