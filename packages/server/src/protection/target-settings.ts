import { connectWithinAttempt, isTimeoutMs, TIMEOUT_RULE } from '../domain/attempt-timeouts.js';
import type { FieldError } from '../domain/errors.js';

// How retryd protects one downstream target (an origin): plain data, validated at the boundary with the field and
// the rule named, stored per target with service-wide defaults. The mechanisms that read it are in this folder.

/** The circuit breaker of a target: `@retryd/core`'s `CircuitBreaker` options, plus whether it runs at all. */
export interface BreakerSettings {
  enabled: boolean;
  /** Open after this many retryable failures in a row. */
  consecutiveFailures: number;
  /** Also open when this share of the calls of the last `windowMs` failed, once `minimumCalls` were made (0–1]. */
  failureRateThreshold: number;
  minimumCalls: number;
  windowMs: number;
  /** The first open period; each failed probe opens it again for `openBackoffMultiplier` times longer, with jitter. */
  openDurationMs: number;
  openBackoffMultiplier: number;
  maxOpenDurationMs: number;
  /** Probe attempts let through when an open period ends; that many successes close it, one failure re-opens it. */
  halfOpenProbes: number;
}

/** Adaptive throttling: a 429, or a 503 with a `Retry-After`, lowers the target's allowed rate; quiet seconds raise it again. */
export interface AdaptiveSettings {
  enabled: boolean;
  /** Multiplies the allowed rate on a 429 or a 503 with a `Retry-After` (0–1), at most once per `decreaseIntervalMs`. */
  decreaseFactor: number;
  decreaseIntervalMs: number;
  /**
   * Added to the allowed rate for each second without a 429 or 503, until it reaches the configured limit; null (the
   * default): a tenth of the configured limit (at least 1/s), or 10/s without one, so a target of any size climbs back
   * within about ten seconds.
   */
  increasePerSecond: number | null;
  /** The allowed rate never goes below this, in dispatches per second. */
  minRatePerSecond: number;
}

/** The retry budget: retries at most `retryRatio` of first attempts over `windowMs`, plus a floor per second. */
export interface RetryBudgetSettings {
  enabled: boolean;
  retryRatio: number;
  minRetriesPerSecond: number;
  windowMs: number;
}

/** Retry-storm detection: a sharp rise of retries with few successes opens the breaker and logs `retry_storm`. */
export interface StormSettings {
  enabled: boolean;
  /** Retries per second of the last second, against their average over `baselineMs`, that count as a storm. */
  riseFactor: number;
  /** A storm needs at least this many retries in the last second (quiet targets never storm). */
  minRetriesPerSecond: number;
  /** …and a success ratio of the last second below this (0–1). */
  maxSuccessRatio: number;
  baselineMs: number;
}

/**
 * Standard Webhooks signatures on every attempt to the target: `webhook-id` (the task's idempotency key),
 * `webhook-timestamp` (the send time, in seconds) and `webhook-signature` (one `v1,<HMAC-SHA256>` per secret).
 */
export interface SigningSettings {
  enabled: boolean;
  /**
   * `{{secret:NAME}}` references to `whsec_…` secrets, resolved at each attempt (a literal secret is never stored); each
   * gives one signature, in order, so that during a rotation the receiver accepts the request with either secret.
   * Default [] (at least one when `enabled`).
   */
  secrets: string[];
}

/** Everything retryd does to protect one target, and how it signs the requests it sends there. */
export interface TargetSettings {
  breaker: BreakerSettings;
  /** Most dispatches per second over every instance, with a burst; null: no limit. */
  rateLimit: { ratePerSecond: number | null; burst: number | null };
  /** Most attempts in flight over every instance; null: no limit. */
  maxInFlight: number | null;
  adaptive: AdaptiveSettings;
  retryBudget: RetryBudgetSettings;
  stormDetection: StormSettings;
  /** Whether a `Retry-After` on a 429 or 503 holds the whole target until then (not only the one task). */
  retryAfterHoldsTarget: boolean;
  signing: SigningSettings;
  /**
   * The attempt timeout of the target's tasks that set none of their own, in ms (1 to 30 minutes); null (the default):
   * the service's (`--attempt-timeout`).
   */
  attemptTimeoutMs: number | null;
  /**
   * The connect timeout of the target's tasks that set none of their own, in ms (1 to 30 minutes, at most
   * `attemptTimeoutMs` when both are set); null (the default): the service's (`--connect-timeout`).
   */
  connectTimeoutMs: number | null;
}

/**
 * The service-wide defaults: protections on, and never starving a target that answers. Every rule below counts a
 * failure only when it came at or past the target's ready attempt (`ReadyAttempt`): a key that was "not ready yet"
 * where its retries succeed is what the target does when it works.
 *
 * Chosen from `retryd simulate w7` (docs/simulate.md, the design `capacity`) and measured on the service with W3 and W7.
 *
 * - The breaker is for a target that accepts nothing: a hundred counted failures in a row (or every call of ten
 *   seconds, at least ten) open it for 10–20 ms, each further period 20% longer (drawn with equal jitter) up to
 *   five minutes while probes fail. One probe goes at a time, and the first that succeeds closes it (a dead target
 *   costs one call per period: about 60 in its first hour). Tasks that fail while it holds keep their place in line,
 *   so the probes are the tasks furthest along, and never go sooner than their policy says. Until a first success (or
 *   none in a breaker window), a target gets 10 attempts in flight (`SLOW_START_IN_FLIGHT`): one that is down costs a
 *   first wave of about 20 calls, not the dispatch concurrency.
 * - No rate or concurrency limit unless an operator sets one. Adaptive throttling lowers the rate when the target
 *   says it is too much: a 429, or a 503 with a `Retry-After`, halves it (at most every 500 ms), and each second
 *   without one raises it by a tenth of the limit (or 10/s). A bare 503 is what a target says of one key, or of a
 *   share of its calls, as much as of its load: the capacity probe (`CapacityProbe`) tells a full target from one
 *   failing a share of calls by cutting its sends for a moment, and paces a full one at what it accepts.
 * - No retry budget: a target failing 90% of its calls at random needs nine retries a task, and a backlog enqueued at
 *   once makes its first attempts in its first second, after which a budget of retries per first attempt paces every
 *   retry at its floor (W7's overload took 29× longer). An outage is the breaker's; a full target the capacity
 *   probe's. A retry storm is a surge of retries while fewer than 5% of counted calls succeed.
 */
export const DEFAULT_TARGET_SETTINGS: Readonly<TargetSettings> = deepFreeze({
  breaker: {
    enabled: true,
    // Not 5: at 1,000 calls/s, five random failures in a row come every ~600 calls at a 30% failure rate, which
    // `retryd simulate amplification` showed opening a breaker on a target that mostly works. Not 50 either: at a 90%
    // failure rate a run of 50 comes every ~2,000 calls (0.9⁵⁰ ≈ 0.5%), and the target still answers one call in ten;
    // a run of 100, every ~3.8 million.
    consecutiveFailures: 100,
    // Every call of the window: a target that answers a share of its calls is not down (the rate was 50%, which held
    // a target failing half its calls at random for most of its run). Ten calls, the slow start's first wave (a target
    // never seen to answer gets 10 in flight): a target down from the start costs that wave and no second one
    // (`retryd simulate w7`, f: 82 calls in its hour against 84 with 20). Waiting for more would not tell a "not ready
    // yet" target from a down one: both fail every first attempt.
    failureRateThreshold: 1,
    minimumCalls: 10,
    windowMs: 10_000,
    // From 20 ms (drawn as 10–20): a breaker opened by the first wave of a "not ready yet" target holds every task of
    // it, first attempts included, until a probe gets through, and a key that fails twice needs two probes: with
    // 100 ms that was about 130 ms held of W1's 4 s run (5% of its rate), and W7's a1 and a2 took 1.10× and 1.14×
    // of none in `retryd simulate w7` (1.05× with 20 ms and ten calls above). Each period 20% longer, up to five
    // minutes: a recovery is found within about a fifth of the outage's length, and a target dead for an hour gets
    // about 60 probe rounds in it, one call each (with 5%, up to a minute: ~170 rounds of three calls).
    openDurationMs: 20,
    openBackoffMultiplier: 1.2,
    maxOpenDurationMs: 300_000,
    // One: at 90% failure, three good probes in a row come one time in a thousand, and a breaker opened by chance on a
    // target that answers one call in ten never closed.
    halfOpenProbes: 1,
  },
  rateLimit: { ratePerSecond: null, burst: null },
  maxInFlight: null,
  adaptive: { enabled: true, decreaseFactor: 0.5, decreaseIntervalMs: 500, increasePerSecond: null, minRatePerSecond: 1 },
  // Off (above); when an operator turns it on, one counted retry per first attempt: a target failing half its calls at
  // random needs about that many, and 20% paced the rest of them at 10/s.
  retryBudget: { enabled: false, retryRatio: 1, minRetriesPerSecond: 10, windowMs: 10_000 },
  // A storm is retries surging while almost nothing succeeds: at 50%, a target failing half its calls tripped it.
  stormDetection: { enabled: true, riseFactor: 5, minRetriesPerSecond: 20, maxSuccessRatio: 0.05, baselineMs: 60_000 },
  retryAfterHoldsTarget: true,
  signing: { enabled: false, secrets: [] },
  attemptTimeoutMs: null,
  connectTimeoutMs: null,
});

/** Every protection off: for a target whose failures are expected (a benchmark's flaky downstream, a test). */
export const PROTECTIONS_OFF: Readonly<TargetSettings> = deepFreeze({
  ...DEFAULT_TARGET_SETTINGS,
  breaker: { ...DEFAULT_TARGET_SETTINGS.breaker, enabled: false },
  adaptive: { ...DEFAULT_TARGET_SETTINGS.adaptive, enabled: false },
  retryBudget: { ...DEFAULT_TARGET_SETTINGS.retryBudget, enabled: false },
  stormDetection: { ...DEFAULT_TARGET_SETTINGS.stormDetection, enabled: false },
  retryAfterHoldsTarget: false,
});

/** A partial `TargetSettings`, as `PUT /targets/{targetKey}` takes it: what it leaves out keeps its value. */
export type TargetSettingsPatch = {
  [K in keyof TargetSettings]?: TargetSettings[K] extends object | null
    ? TargetSettings[K] extends null | number
      ? TargetSettings[K]
      : Partial<NonNullable<TargetSettings[K]>>
    : TargetSettings[K];
};

/** A field's rule; `each`: the rule of every item of an array field, broken ones named by index (`secrets[1]`). */
type Rule = { rule: string; test: (value: unknown) => boolean; each?: Rule };
const bool: Rule = { rule: 'true or false', test: (v) => typeof v === 'boolean' };
const intAtLeast = (min: number): Rule => ({ rule: `an integer >= ${min}`, test: (v) => Number.isSafeInteger(v) && (v as number) >= min });
const numAbove = (min: number): Rule => ({ rule: `a finite number > ${min}`, test: (v) => Number.isFinite(v) && (v as number) > min });
const numAtLeast = (min: number): Rule => ({ rule: `a finite number >= ${min}`, test: (v) => Number.isFinite(v) && (v as number) >= min });
const share = (exclusiveZero: boolean): Rule => ({
  rule: exclusiveZero ? 'a number > 0 and <= 1' : 'a number >= 0 and <= 1',
  test: (v) => Number.isFinite(v) && ((v as number) > 0 || (!exclusiveZero && v === 0)) && (v as number) <= 1,
});
const orNull = (rule: Rule): Rule => ({ rule: `null or ${rule.rule}`, test: (v) => v === null || rule.test(v) });
const listOf = (max: number, each: Rule): Rule => ({ rule: `an array of at most ${max} items`, test: (v) => Array.isArray(v) && v.length <= max, each });

/** Most signing secrets of a target: a rotation needs two; a few more leave room for an overlap. */
export const MAX_SIGNING_SECRETS = 5;
/** A signing secret as the settings hold it: exactly one reference, so that no literal secret is ever stored. */
export const SIGNING_SECRET_REFERENCE = /^\{\{secret:([A-Za-z0-9_]{1,128})\}\}$/;
const secretReference: Rule = {
  rule: "a reference {{secret:NAME}} to a secret of the target's tenant or a shared one; a literal secret is never stored",
  test: (v) => typeof v === 'string' && SIGNING_SECRET_REFERENCE.test(v),
};

/** Each field's rule, by section (`null` for the two top-level scalars). */
const RULES = {
  breaker: {
    enabled: bool,
    consecutiveFailures: intAtLeast(1),
    failureRateThreshold: share(true),
    minimumCalls: intAtLeast(1),
    windowMs: numAbove(0),
    openDurationMs: numAtLeast(0),
    openBackoffMultiplier: numAtLeast(1),
    maxOpenDurationMs: numAtLeast(0),
    halfOpenProbes: intAtLeast(1),
  },
  rateLimit: { ratePerSecond: orNull(numAbove(0)), burst: orNull(numAtLeast(1)) },
  adaptive: {
    enabled: bool,
    decreaseFactor: { rule: 'a number > 0 and < 1', test: (v: unknown) => Number.isFinite(v) && (v as number) > 0 && (v as number) < 1 },
    decreaseIntervalMs: numAtLeast(0),
    increasePerSecond: orNull(numAbove(0)),
    minRatePerSecond: numAbove(0),
  },
  retryBudget: { enabled: bool, retryRatio: numAtLeast(0), minRetriesPerSecond: numAtLeast(0), windowMs: numAbove(0) },
  stormDetection: {
    enabled: bool,
    riseFactor: numAbove(1),
    minRetriesPerSecond: numAtLeast(0),
    maxSuccessRatio: share(false),
    baselineMs: numAbove(0),
  },
  signing: { enabled: bool, secrets: listOf(MAX_SIGNING_SECRETS, secretReference) },
} as const satisfies Record<string, Record<string, Rule>>;

const timeoutMs: Rule = { rule: TIMEOUT_RULE, test: isTimeoutMs };
const SCALARS = {
  maxInFlight: orNull(intAtLeast(1)),
  retryAfterHoldsTarget: bool,
  attemptTimeoutMs: orNull(timeoutMs),
  connectTimeoutMs: orNull(timeoutMs),
} as const;

export type TargetSettingsCheck = { ok: true; settings: TargetSettings } | { ok: false; errors: FieldError[] };

/**
 * Applies `patch` (untrusted JSON, `PUT /targets/{targetKey}`) over `base` and checks the result: every broken rule at
 * once, each naming the field (`breaker.openDurationMs`) and the rule, unknown fields refused, and the rules that tie
 * fields together (`maxOpenDurationMs >= openDurationMs`, `burst` only with a rate, a secret to sign with). Whether
 * the provider knows a signing secret is checked by `TargetProtection.putSettings` (it needs the provider).
 */
export function applySettingsPatch(base: TargetSettings, patch: unknown): TargetSettingsCheck {
  const errors: FieldError[] = [];
  const fail = (field: string, rule: string) => errors.push({ field, rule, message: `${field} must be ${rule}` });
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
    return { ok: false, errors: [{ field: 'body', rule: 'a JSON object', message: 'body must be a JSON object' }] };
  }
  const merged = structuredClone(base) as unknown as Record<string, unknown>;
  for (const [section, value] of Object.entries(patch)) {
    if (Object.hasOwn(SCALARS, section)) {
      const rule = SCALARS[section as keyof typeof SCALARS];
      if (rule.test(value)) merged[section] = value;
      else fail(section, rule.rule);
      continue;
    }
    if (!Object.hasOwn(RULES, section)) {
      fail(section, `absent (known fields: ${[...Object.keys(RULES), ...Object.keys(SCALARS)].join(', ')})`);
      continue;
    }
    const rules = RULES[section as keyof typeof RULES] as Record<string, Rule>;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      fail(section, 'an object');
      continue;
    }
    const target = merged[section] as Record<string, unknown>;
    for (const [field, fieldValue] of Object.entries(value)) {
      const rule = rules[field];
      if (rule === undefined) fail(`${section}.${field}`, `absent (known fields: ${Object.keys(rules).join(', ')})`);
      else if (!rule.test(fieldValue)) fail(`${section}.${field}`, rule.rule);
      else if (rule.each === undefined) target[field] = fieldValue;
      else {
        const { each } = rule;
        const before = errors.length;
        (fieldValue as unknown[]).forEach((item, i) => {
          if (!each.test(item)) fail(`${section}.${field}[${i}]`, each.rule);
        });
        if (errors.length === before) target[field] = [...(fieldValue as unknown[])];
      }
    }
  }
  const settings = merged as unknown as TargetSettings;
  if (errors.length === 0) {
    if (settings.breaker.maxOpenDurationMs < settings.breaker.openDurationMs) {
      fail('breaker.maxOpenDurationMs', `>= breaker.openDurationMs (${settings.breaker.openDurationMs})`);
    }
    if (settings.rateLimit.burst !== null && settings.rateLimit.ratePerSecond === null) {
      fail('rateLimit.burst', 'null when rateLimit.ratePerSecond is null (a burst is the size of a rate limit)');
    }
    if (settings.signing.enabled && settings.signing.secrets.length === 0) {
      fail('signing.secrets', 'at least one {{secret:NAME}} reference when signing.enabled is true');
    }
    const tie = connectWithinAttempt(settings);
    if (tie !== undefined) fail('connectTimeoutMs', tie);
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, settings };
}

/**
 * A rate limit's burst when none is given: a hundredth of a second's worth, at least 1, so that no 100 ms window
 * carries more than about 10% over the limit (a tenth of a second's worth allowed twice the rate in one).
 */
export function burstOf(settings: TargetSettings): number | null {
  const { ratePerSecond, burst } = settings.rateLimit;
  if (ratePerSecond === null) return null;
  return burst ?? Math.max(1, Math.ceil(ratePerSecond / 100));
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
