import { CircuitState, isCircuitState } from './breaker-state.js';
import { integerAtLeast, isFiniteNumber } from '../validation/field-rules.js';
import { expectObject, snapshotFail } from '../validation/invalid-snapshot-error.js';
import { parseWindowSnapshot, type WindowSnapshot } from '../window/sliding-window.js';

/** The counters the breaker keeps in each slice of its failure-rate window. */
export type BreakerWindowCounter = 'calls' | 'failures';

/** The keys of {@link BreakerWindowCounter}, in snapshot order. */
export const BREAKER_WINDOW_COUNTERS: readonly BreakerWindowCounter[] = ['calls', 'failures'];

/**
 * A {@link CircuitBreaker}'s state as plain, JSON-safe data: what a service stores per downstream target.
 * Times are `clock.now()` values; the system clock is anchored to the Unix epoch, so they stay meaningful
 * after a process restart. Options are not part of it: they are given again to `fromJSON`.
 */
export interface CircuitBreakerSnapshot {
  /** Snapshot format version: 1. */
  v: 1;
  /** The stored state. An OPEN whose `openUntil` has passed reads as HALF_OPEN after restoring. */
  state: CircuitState;
  /** Failures in a row while CLOSED. */
  failureStreak: number;
  /** When the current or last open period began; null while CLOSED. */
  openedAt: number | null;
  /** When the current or last open period ends; null while CLOSED. */
  openUntil: number | null;
  /** Consecutive re-openings from HALF_OPEN since the breaker last closed: the backoff exponent. */
  reopenCount: number;
  /** Probe bookkeeping of the current HALF_OPEN period (zeros in other states). */
  halfOpen: { probesInFlight: number; probeSuccesses: number };
  /** The failure-rate window: calls and failures per slice. */
  window: WindowSnapshot<BreakerWindowCounter>;
}

const FAIL = snapshotFail('CircuitBreaker');

/**
 * Checks an untrusted snapshot (read back from a store) and returns it typed, or throws
 * {@link InvalidSnapshotError} naming the first bad field.
 */
export function parseCircuitBreakerSnapshot(input: unknown): CircuitBreakerSnapshot {
  const s = expectObject(input, 'snapshot', FAIL);
  if (s.v !== 1) FAIL('v', '1 (the only snapshot version this library reads)', s.v);
  if (!isCircuitState(s.state)) FAIL('state', `one of ${Object.values(CircuitState).join(', ')}`, s.state);
  const counter = integerAtLeast(0);
  if (!counter.test(s.failureStreak)) FAIL('failureStreak', counter.rule, s.failureStreak);
  if (!counter.test(s.reopenCount)) FAIL('reopenCount', counter.rule, s.reopenCount);

  const needsTimes = s.state !== CircuitState.CLOSED;
  for (const field of ['openedAt', 'openUntil'] as const) {
    const value = s[field];
    if (needsTimes ? !isFiniteNumber(value) : value !== null && !isFiniteNumber(value)) {
      FAIL(field, needsTimes ? `a finite number when state is ${s.state as string}` : 'a finite number or null', value);
    }
  }
  if (isFiniteNumber(s.openedAt) && isFiniteNumber(s.openUntil) && s.openUntil < s.openedAt) {
    FAIL('openUntil', `>= openedAt (${s.openedAt})`, s.openUntil);
  }

  const h = expectObject(s.halfOpen, 'halfOpen', FAIL);
  if (!counter.test(h.probesInFlight)) FAIL('halfOpen.probesInFlight', counter.rule, h.probesInFlight);
  if (!counter.test(h.probeSuccesses)) FAIL('halfOpen.probeSuccesses', counter.rule, h.probeSuccesses);

  const window = parseWindowSnapshot(s.window, 'window', BREAKER_WINDOW_COUNTERS, FAIL);
  window.buckets.forEach((b, i) => {
    if (b.failures > b.calls) FAIL(`window.buckets[${i}].failures`, `<= calls (${b.calls})`, b.failures);
  });

  return {
    v: 1,
    state: s.state as CircuitState,
    failureStreak: s.failureStreak as number,
    openedAt: s.openedAt as number | null,
    openUntil: s.openUntil as number | null,
    reopenCount: s.reopenCount as number,
    halfOpen: { probesInFlight: h.probesInFlight as number, probeSuccesses: h.probeSuccesses as number },
    window,
  };
}
