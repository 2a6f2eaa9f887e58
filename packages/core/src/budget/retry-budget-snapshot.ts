import { expectObject, snapshotFail } from '../validation/invalid-snapshot-error.js';
import { parseWindowSnapshot, type WindowSnapshot } from '../window/sliding-window.js';

/** The counters a retry budget keeps in each slice of its window. */
export type BudgetWindowCounter = 'deposits' | 'withdrawals';

/** The keys of {@link BudgetWindowCounter}, in snapshot order. */
export const BUDGET_WINDOW_COUNTERS: readonly BudgetWindowCounter[] = ['deposits', 'withdrawals'];

/**
 * A {@link RetryBudget}'s state as plain, JSON-safe data: first attempts and granted retries per slice of the
 * window, at `clock.now()` times. Ratio and floor are options, not state, so changing them takes effect
 * at once on a restored budget.
 */
export interface RetryBudgetSnapshot {
  /** Snapshot format version: 1. */
  v: 1;
  /** Deposits (first attempts) and withdrawals (granted retries) per slice. */
  window: WindowSnapshot<BudgetWindowCounter>;
}

const FAIL = snapshotFail('RetryBudget');

/**
 * Checks an untrusted snapshot (read back from a store) and returns it typed, or throws
 * {@link InvalidSnapshotError} naming the first bad field.
 */
export function parseRetryBudgetSnapshot(input: unknown): RetryBudgetSnapshot {
  const s = expectObject(input, 'snapshot', FAIL);
  if (s.v !== 1) FAIL('v', '1 (the only snapshot version this library reads)', s.v);
  return { v: 1, window: parseWindowSnapshot(s.window, 'window', BUDGET_WINDOW_COUNTERS, FAIL) };
}
