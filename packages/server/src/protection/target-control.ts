import type { CircuitState } from '@retryd/core';
import type { TargetRef, TargetView } from '../store/store.js';
import type { TargetSettings } from './target-settings.js';

/** A target's circuit breaker as operators see it. */
export interface BreakerView {
  state: CircuitState;
  /** When an OPEN breaker lets probes through (epoch ms), or null. */
  openUntil: number | null;
  /** Re-openings in a row since it last closed (each one opens it for longer). */
  reopenCount: number;
}

/** Everything known about one target: its settings, its breaker, its allowed rate and the store's view of its gate. */
export interface TargetStatus {
  target: TargetView;
  settings: TargetSettings;
  breaker: BreakerView;
  /** The rate adaptive throttling allows now (dispatches per second), or null when it does not limit the target. */
  allowedRatePerSecond: number | null;
}

/** What an operator can do to a breaker by hand. */
export type BreakerAction = 'open' | 'close' | 'reset';

/**
 * The longest an operator can open a breaker for in one go: 7 days. An operator's opening is a hold for a maintenance
 * or an incident; one that outlives a week is more likely forgotten than meant, and a week is renewable.
 */
export const MAX_MANUAL_OPEN_MS = 7 * 24 * 3_600_000;

/**
 * The operator's handle on per-target protection, shared by the HTTP API (`/targets`) and the CLI: read a target's
 * state, change its settings (validated; the limits reach the store's gate at once), open, close or reset its
 * breaker by hand, and end its holds. Implemented by the engine's protection (`TargetProtection`); every call is scoped by tenant.
 */
export interface TargetControl {
  /** Every target of a tenant (as `AdminReads.listTargets` pages them), with its status. */
  listTargets(tenantId: string, page: { cursor?: string; limit: number }): Promise<{ items: TargetStatus[]; nextCursor?: string }>;
  /** One target's status; undefined for a target the tenant never named, held or configured. */
  getTarget(target: TargetRef): Promise<TargetStatus | undefined>;
  /**
   * Applies a partial settings object over the target's current settings (the service defaults until it has its
   * own), validates the result (a `RetrydError` VALIDATION_FAILED naming each field and rule), stores it, and sets
   * the target's limits in the store's gate. Returns the new status.
   */
  putSettings(target: TargetRef, patch: unknown): Promise<TargetStatus>;
  /**
   * Opens, closes or resets (closed, counters cleared) the target's breaker. An opening holds the target for
   * `durationMs` (by default the settings' `maxOpenDurationMs`: an operator who opens a breaker means a hold, not one
   * automatic open period of 100 ms), then probes as after any opening; `durationMs` goes only with `open`.
   */
  breaker(target: TargetRef, action: BreakerAction, durationMs?: number): Promise<TargetStatus>;
  /**
   * Ends the target's holds now, so that its due tasks are claimed at once: a `Retry-After`'s (whichever instance made
   * it) and any other, except an open breaker's, which holds it until its open period ends (`breaker(…, 'close')` ends
   * that one too). Returns the new status.
   */
  release(target: TargetRef): Promise<TargetStatus>;
}
