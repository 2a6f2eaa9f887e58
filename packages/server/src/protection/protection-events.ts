/**
 * What per-target protection tells the service's log (one line each, matched by alerts): a breaker opening or
 * closing, a target held by a `Retry-After`, a target's holds ended by an operator, a retry storm. A breaker's opening and closing are reported by the
 * instance whose write made the change, so a fleet logs each once; a hold by the instance that extended it; a storm
 * by each instance that sees it (each sees its own share of the traffic). `target` is the target key (the origin).
 */
export type ProtectionEvent =
  | {
      event: 'breaker_open';
      tenantId: string;
      target: string;
      /** When probes are let through (epoch ms): the end of the target's hold. */
      openUntil: number;
      /** Re-openings in a row since it last closed. */
      reopenCount: number;
      cause: BreakerOpenCause;
    }
  | { event: 'breaker_closed'; tenantId: string; target: string; cause: BreakerCloseCause }
  | {
      event: 'target_held';
      tenantId: string;
      target: string;
      /** Until when claims skip the target (epoch ms). */
      until: number;
      /** The status that carried the `Retry-After` (429 or 503). */
      status: number;
    }
  | {
      event: 'target_released';
      tenantId: string;
      target: string;
      /** Who ended its holds: an operator (`release`, or the breaker's `close` or `reset`). */
      cause: 'operator';
    }
  | {
      event: 'retry_storm';
      tenantId: string;
      target: string;
      /** Retries of the last whole second. */
      retriesPerSecond: number;
      /** Share of the last second's calls that succeeded (0–1). */
      successRatio: number;
    };

/** Why a breaker opened: its failure counts, a failed probe, a retry storm, or an operator. */
export type BreakerOpenCause = 'failures' | 'probe_failed' | 'retry_storm' | 'operator';

/** Why a breaker closed: its probes succeeded, an operator closed or reset it, or its settings turned it off. */
export type BreakerCloseCause = 'probes_succeeded' | 'operator' | 'disabled';

/** What one kind of breaker change reports when it opens the breaker, and when it closes it. */
export interface BreakerCauses {
  open: BreakerOpenCause;
  close: BreakerCloseCause;
}

/** The {@link BreakerCauses} of each kind of breaker change. */
export const BreakerCauses = {
  /** The local breaker's counts opened it. */
  FAILURES: { open: 'failures', close: 'probes_succeeded' },
  /** A probe's outcome: a failure re-opens it, enough successes close it. */
  PROBES: { open: 'probe_failed', close: 'probes_succeeded' },
  STORM: { open: 'retry_storm', close: 'probes_succeeded' },
  OPERATOR: { open: 'operator', close: 'operator' },
  /** Settings that turned the breaker off close it. */
  SETTINGS: { open: 'operator', close: 'disabled' },
} as const satisfies Record<string, BreakerCauses>;
