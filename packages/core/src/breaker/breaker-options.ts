import { systemClock, type Clock, type Random } from '../time/clock.js';
import { assertOptions, clockRule, integerAtLeast, numberAtLeast, numberAbove, type FieldRule } from '../validation/field-rules.js';

/**
 * How a {@link CircuitBreaker} decides. Every field is optional; the defaults are in
 * {@link CIRCUIT_BREAKER_DEFAULTS}. Plain data apart from `clock`, so a service can keep it in configuration.
 *
 * @example
 * ```ts
 * // Open after 5 failures in a row, or when half of at least 20 calls in 10 s failed;
 * // stay open 5 s, then 10 s, 20 s, ... up to a minute while probes keep failing.
 * new CircuitBreaker({ failureRateThreshold: 0.5, minimumCalls: 20, openDurationMs: 5_000,
 *   openBackoffMultiplier: 2, maxOpenDurationMs: 60_000 });
 * ```
 */
export interface CircuitBreakerOptions {
  /** Open after this many failures in a row while CLOSED: an integer `>= 1`. Default 5. */
  consecutiveFailures?: number;
  /**
   * Also open when `failures / calls >= failureRateThreshold` over the last `windowMs`, once at least
   * `minimumCalls` calls finished in it: a number `> 0` and `<= 1`. Absent (the default): only the
   * consecutive rule applies.
   */
  failureRateThreshold?: number;
  /** Length of the failure-rate window in ms, kept in 10 slices: `> 0`. Default 10_000. */
  windowMs?: number;
  /** Calls the window must hold before the failure rate can open the breaker: an integer `>= 1`. Default 10. */
  minimumCalls?: number;
  /** How long the breaker stays OPEN after opening from CLOSED, in ms: `>= 0`. Default 30_000. */
  openDurationMs?: number;
  /**
   * Each consecutive re-opening from HALF_OPEN (a probe failed) multiplies the open duration by this:
   * the k-th re-opening lasts `openDurationMs × multiplier^k`, capped by `maxOpenDurationMs`. `>= 1`;
   * default 1 (no backoff). A successful close starts again from `openDurationMs`.
   */
  openBackoffMultiplier?: number;
  /** Cap on a backed-off open duration in ms: `>= openDurationMs`. Default `10 × openDurationMs`. */
  maxOpenDurationMs?: number;
  /**
   * Probe calls admitted in one HALF_OPEN period (a released probe gives its slot back), so also the
   * most in flight at once; the breaker closes after this many probe successes, and any probe failure
   * re-opens it. An integer `>= 1`. Default 1.
   */
  halfOpenProbes?: number;
  /**
   * Jitter on each open period: `NONE` (the default) opens for exactly the backed-off duration `d`; `EQUAL` opens
   * for `d/2 + uniform(0, d/2)`, drawn from `random`, so breakers that opened together (one outage behind many
   * targets, many instances) do not all probe at the same instant.
   */
  openJitter?: BreakerJitter;
  /** Draws the open jitter: uniform in `[0, 1)`. Default `Math.random`. */
  random?: Random;
  /** Source of `now()`. Default {@link systemClock}. */
  clock?: Clock;
}

/** The jitter of a breaker's open periods (see {@link CircuitBreakerOptions.openJitter}). */
export const BreakerJitter = {
  NONE: 'NONE',
  EQUAL: 'EQUAL',
} as const;
export type BreakerJitter = (typeof BreakerJitter)[keyof typeof BreakerJitter];

/** The defaults of {@link CircuitBreakerOptions} (`maxOpenDurationMs` defaults to 10 × `openDurationMs`). */
export const CIRCUIT_BREAKER_DEFAULTS = Object.freeze({
  consecutiveFailures: 5,
  windowMs: 10_000,
  minimumCalls: 10,
  openDurationMs: 30_000,
  openBackoffMultiplier: 1,
  halfOpenProbes: 1,
  openJitter: BreakerJitter.NONE,
} as const);

/** {@link CircuitBreakerOptions} with the defaults filled in. */
export interface ResolvedCircuitBreakerOptions {
  readonly consecutiveFailures: number;
  readonly failureRateThreshold: number | undefined;
  readonly windowMs: number;
  readonly minimumCalls: number;
  readonly openDurationMs: number;
  readonly openBackoffMultiplier: number;
  readonly maxOpenDurationMs: number;
  readonly halfOpenProbes: number;
  readonly openJitter: BreakerJitter;
  readonly random: Random;
  readonly clock: Clock;
}

const RULES: Readonly<Record<keyof CircuitBreakerOptions, FieldRule>> = {
  consecutiveFailures: integerAtLeast(1),
  failureRateThreshold: {
    rule: 'a number > 0 and <= 1',
    test: (v) => typeof v === 'number' && v > 0 && v <= 1,
  },
  windowMs: numberAbove(0),
  minimumCalls: integerAtLeast(1),
  openDurationMs: numberAtLeast(0),
  openBackoffMultiplier: numberAtLeast(1),
  maxOpenDurationMs: numberAtLeast(0),
  halfOpenProbes: integerAtLeast(1),
  openJitter: {
    rule: `one of ${Object.values(BreakerJitter).join(', ')}`,
    test: (v) => Object.values(BreakerJitter).includes(v as BreakerJitter),
  },
  random: { rule: 'a function returning numbers in [0, 1)', test: (v) => typeof v === 'function' },
  clock: clockRule,
};

/**
 * Validates options (every broken rule is reported, each naming the option and the rule) and fills in
 * the defaults.
 *
 * @throws RangeError e.g. `consecutiveFailures must be an integer >= 1, got 0`
 */
export function resolveCircuitBreakerOptions(options?: CircuitBreakerOptions): ResolvedCircuitBreakerOptions {
  assertOptions('CircuitBreaker', options, RULES, (o) => {
    const open = (o.openDurationMs as number | undefined) ?? CIRCUIT_BREAKER_DEFAULTS.openDurationMs;
    const max = o.maxOpenDurationMs as number | undefined;
    return max !== undefined && max < open
      ? `maxOpenDurationMs must be a finite number >= openDurationMs (${open}), got ${max}`
      : undefined;
  });
  const d = CIRCUIT_BREAKER_DEFAULTS;
  const openDurationMs = options?.openDurationMs ?? d.openDurationMs;
  return {
    consecutiveFailures: options?.consecutiveFailures ?? d.consecutiveFailures,
    failureRateThreshold: options?.failureRateThreshold,
    windowMs: options?.windowMs ?? d.windowMs,
    minimumCalls: options?.minimumCalls ?? d.minimumCalls,
    openDurationMs,
    openBackoffMultiplier: options?.openBackoffMultiplier ?? d.openBackoffMultiplier,
    maxOpenDurationMs: options?.maxOpenDurationMs ?? 10 * openDurationMs,
    halfOpenProbes: options?.halfOpenProbes ?? d.halfOpenProbes,
    openJitter: options?.openJitter ?? d.openJitter,
    random: options?.random ?? Math.random,
    clock: options?.clock ?? systemClock,
  };
}
