import { GrpcStatus, isGrpcStatusName, type GrpcFailureName, type GrpcStatusName } from '../grpc/grpc-status.js';
import { FailureClass } from '../http/failure-class.js';
import { BackoffType, DEFAULT_RETRYABLE_STATUS_CODES, JitterType, type BackoffByClass, type BackoffSchedule, type RetryPolicy } from './retry-policy.js';

/** One broken rule in a policy: the field (with its path), the rule, and a sentence that says both. */
export interface PolicyViolation {
  /** Dotted path of the field, e.g. `maxAttempts` or `policy.maxAttempts`. */
  field: string;
  /** The rule the value broke, e.g. `an integer >= 1`. */
  rule: string;
  /** `maxAttempts must be an integer >= 1, got 0` */
  message: string;
}

/** The result of {@link validatePolicy}: the policy, typed, or every rule it breaks. */
export type PolicyValidation = { ok: true; policy: RetryPolicy } | { ok: false; violations: PolicyViolation[] };

/** Thrown by {@link assertValidPolicy}; `violations` lists every broken rule, the message the first. */
export class InvalidPolicyError extends Error {
  override readonly name = 'InvalidPolicyError';
  readonly code = 'INVALID_POLICY';
  constructor(readonly violations: PolicyViolation[]) {
    super(violations.map((v) => v.message).join('; '));
  }
}

/** The fields of a {@link BackoffSchedule}, in the order messages list them. */
export const BACKOFF_SCHEDULE_FIELDS: readonly (keyof BackoffSchedule)[] = Object.freeze([
  'backoffType',
  'initialDelayMs',
  'multiplier',
  'maxDelayMs',
  'jitterType',
]);

/** The fields of a {@link RetryPolicy}, in the order messages list them: what {@link validatePolicy} knows. */
export const RETRY_POLICY_FIELDS: readonly (keyof RetryPolicy)[] = Object.freeze([
  'maxAttempts',
  ...BACKOFF_SCHEDULE_FIELDS,
  'totalBudgetMs',
  'estimatedCallMs',
  'retryableStatusCodes',
  'successStatusCodes',
  'backoffByClass',
]);

const POLICY_FIELDS = new Set<string>(RETRY_POLICY_FIELDS);
const SCHEDULE_FIELDS = new Set<string>(BACKOFF_SCHEDULE_FIELDS);
const FAILURE_CLASSES = new Set<string>(Object.values(FailureClass));

const BACKOFF_TYPES: readonly unknown[] = Object.values(BackoffType);
const JITTER_TYPES: readonly unknown[] = Object.values(JitterType);

/** The longest delay or budget a policy may name: about 10 years, far below where ms arithmetic loses precision. */
export const MAX_POLICY_MS = 10 * 365 * 24 * 3600 * 1000;
/** Most attempts a policy may name. */
export const MAX_ATTEMPTS_LIMIT = 10_000;

function show(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  try {
    const s = JSON.stringify(value);
    return s.length > 60 ? `${s.slice(0, 57)}...` : s;
  } catch {
    return String(value);
  }
}

const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
/** A delay that passes the rules of `initialDelayMs` and `maxDelayMs` alone. */
const isDelay = (v: unknown): v is number => isFiniteNumber(v) && v > 0 && v <= MAX_POLICY_MS;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

type Fail = (field: string, rule: string, value: unknown) => void;
/** Reports a key that names nothing known: `<field> is not a <what> (known: …)`. */
type Refuse = (field: string, what: string, known: Iterable<string>) => void;

/**
 * The rules of each schedule field alone; each fails under `at(field)`. A field absent from a class's schedule is
 * inherited and not checked here (`partial`); the main schedule must have them all.
 */
function checkScheduleFields(s: Record<string, unknown>, at: (field: string) => string, fail: Fail, partial: boolean): void {
  const present = (field: string) => !partial || s[field] !== undefined;
  const { backoffType, initialDelayMs, multiplier, maxDelayMs, jitterType } = s;
  if (present('backoffType') && !BACKOFF_TYPES.includes(backoffType as BackoffType)) {
    fail(at('backoffType'), `one of ${BACKOFF_TYPES.join(', ')}`, backoffType);
  }
  if (present('initialDelayMs')) {
    if (!isFiniteNumber(initialDelayMs) || initialDelayMs <= 0) fail(at('initialDelayMs'), 'a number > 0', initialDelayMs);
    else if (initialDelayMs > MAX_POLICY_MS) fail(at('initialDelayMs'), `<= ${MAX_POLICY_MS}`, initialDelayMs);
  }
  if (present('multiplier') && (!isFiniteNumber(multiplier) || multiplier < 1)) {
    fail(at('multiplier'), 'a finite number >= 1', multiplier);
  }
  if (present('maxDelayMs')) {
    if (!isFiniteNumber(maxDelayMs)) fail(at('maxDelayMs'), 'a finite number', maxDelayMs);
    else if (maxDelayMs > MAX_POLICY_MS) fail(at('maxDelayMs'), `<= ${MAX_POLICY_MS}`, maxDelayMs);
    else if (!partial && isFiniteNumber(initialDelayMs) && maxDelayMs < initialDelayMs) {
      fail(at('maxDelayMs'), `>= initialDelayMs (${initialDelayMs})`, maxDelayMs);
    }
  }
  if (present('jitterType') && !JITTER_TYPES.includes(jitterType as JitterType)) {
    fail(at('jitterType'), `one of ${JITTER_TYPES.join(', ')}`, jitterType);
  }
}

/**
 * `backoffByClass`: an object keyed by failure class, each a partial schedule whose fields follow the main
 * schedule's rules and which, merged over the main schedule, keeps `maxDelayMs >= initialDelayMs`.
 */
function checkBackoffByClass(input: unknown, main: Record<string, unknown>, fail: Fail, refuse: Refuse): void {
  if (!isObject(input)) {
    fail('backoffByClass', `an object of schedules keyed by failure class (${[...FAILURE_CLASSES].join(', ')}) when present`, input);
    return;
  }
  for (const failureClass of Object.keys(input)) {
    const path = `backoffByClass.${failureClass}`;
    if (!FAILURE_CLASSES.has(failureClass)) {
      refuse(path, 'failure class', FAILURE_CLASSES);
      continue;
    }
    const own = input[failureClass];
    if (own === undefined) continue;
    if (!isObject(own)) {
      fail(path, `a backoff schedule (an object with some of ${BACKOFF_SCHEDULE_FIELDS.join(', ')})`, own);
      continue;
    }
    let valid = true;
    const failHere: Fail = (field, rule, value) => {
      valid = false;
      fail(field, rule, value);
    };
    for (const key of Object.keys(own)) {
      if (!SCHEDULE_FIELDS.has(key)) {
        valid = false;
        refuse(`${path}.${key}`, 'backoff schedule field', BACKOFF_SCHEDULE_FIELDS);
      }
    }
    checkScheduleFields(own, (field) => `${path}.${field}`, failHere, true);
    // A class that sets neither bound inherits both, already checked as the main schedule's.
    if (!valid || (own.initialDelayMs === undefined && own.maxDelayMs === undefined)) continue;
    // The merged bounds; when the main schedule's own bound is broken, that is reported once, under its own name.
    const initial = own.initialDelayMs ?? main.initialDelayMs;
    const max = own.maxDelayMs ?? main.maxDelayMs;
    if (!isDelay(initial) || !isDelay(max) || max >= initial) continue;
    if (own.maxDelayMs !== undefined) {
      const from = own.initialDelayMs === undefined ? `, the main schedule's` : '';
      fail(`${path}.maxDelayMs`, `>= initialDelayMs (${initial}${from})`, own.maxDelayMs);
    } else {
      fail(`${path}.initialDelayMs`, `<= maxDelayMs (${max}, the main schedule's; or give this class its own maxDelayMs)`, own.initialDelayMs);
    }
  }
}

/**
 * Checks untrusted input (a parsed HTTP body, a config file) against every rule of {@link RetryPolicy}
 * and reports all violations at once, each naming the field and the rule. Unknown fields are refused
 * so a misspelt option (`maxAttempt`) is not silently ignored. The service reuses this for its 400 answers.
 *
 * `backoffByClass` is checked the same way: an unknown class or schedule field is refused, each field a class gives
 * follows the rule of the main field of that name, and the merged schedule keeps `maxDelayMs >= initialDelayMs`.
 *
 * @param input - the candidate policy
 * @param path - prefix for field names, e.g. `policy` gives `policy.maxAttempts`
 * @example
 * ```ts
 * const r = validatePolicy({ ...DEFAULT_POLICY, maxAttempts: 0 });
 * // r.ok === false; r.violations[0].message === 'maxAttempts must be an integer >= 1, got 0'
 * validatePolicy({ ...DEFAULT_POLICY, backoffByClass: { rateLimited: { initialDelayMs: 30_000 } } }).ok;
 * // false: 'backoffByClass.rateLimited.initialDelayMs must be <= maxDelayMs (10000, the main schedule's; or give
 * //         this class its own maxDelayMs), got 30000'
 * ```
 */
export function validatePolicy(input: unknown, path = ''): PolicyValidation {
  const violations: PolicyViolation[] = [];
  const name = (field: string) => (path ? `${path}.${field}` : field);
  const fail: Fail = (field, rule, value) =>
    violations.push({ field: name(field), rule, message: `${name(field)} must be ${rule}, got ${show(value)}` });

  if (!isObject(input)) {
    const field = path || 'policy';
    return { ok: false, violations: [{ field, rule: 'an object', message: `${field} must be an object, got ${show(input)}` }] };
  }
  const p = input;

  const refuse: Refuse = (field, what, known) =>
    violations.push({ field: name(field), rule: `a known ${what}`, message: `${name(field)} is not a ${what} (known: ${[...known].join(', ')})` });
  for (const key in p) {
    if (Object.hasOwn(p, key) && !POLICY_FIELDS.has(key)) refuse(key, 'policy field', POLICY_FIELDS);
  }

  const { maxAttempts, backoffType, initialDelayMs, multiplier, maxDelayMs, jitterType } = p;
  if (!Number.isInteger(maxAttempts) || (maxAttempts as number) < 1) fail('maxAttempts', 'an integer >= 1', maxAttempts);
  else if ((maxAttempts as number) > MAX_ATTEMPTS_LIMIT) fail('maxAttempts', `<= ${MAX_ATTEMPTS_LIMIT}`, maxAttempts);
  checkScheduleFields(p, (field) => field, fail, false);
  const { totalBudgetMs, estimatedCallMs, retryableStatusCodes, successStatusCodes, backoffByClass } = p;
  if (totalBudgetMs !== undefined) {
    if (!isFiniteNumber(totalBudgetMs) || totalBudgetMs <= 0) fail('totalBudgetMs', 'a number > 0 when present', totalBudgetMs);
    else if (totalBudgetMs > MAX_POLICY_MS) fail('totalBudgetMs', `<= ${MAX_POLICY_MS}`, totalBudgetMs);
  }
  if (estimatedCallMs !== undefined) {
    if (!isFiniteNumber(estimatedCallMs) || estimatedCallMs < 0) fail('estimatedCallMs', 'a number >= 0 when present', estimatedCallMs);
    else if (estimatedCallMs > MAX_POLICY_MS) fail('estimatedCallMs', `<= ${MAX_POLICY_MS}`, estimatedCallMs);
    else if (isFiniteNumber(totalBudgetMs) && estimatedCallMs >= totalBudgetMs) {
      fail('estimatedCallMs', `< totalBudgetMs (${totalBudgetMs})`, estimatedCallMs);
    }
  }
  if (retryableStatusCodes !== undefined) checkRetryableStatusCodes(retryableStatusCodes, fail);
  if (successStatusCodes !== undefined) checkSuccessStatusCodes(successStatusCodes, retryableStatusCodes, fail);
  if (backoffByClass !== undefined) checkBackoffByClass(backoffByClass, p, fail, refuse);

  if (violations.length > 0) return { ok: false, violations };
  const policy: RetryPolicy = {
    maxAttempts: maxAttempts as number,
    backoffType: backoffType as BackoffType,
    initialDelayMs: initialDelayMs as number,
    multiplier: multiplier as number,
    maxDelayMs: maxDelayMs as number,
    jitterType: jitterType as JitterType,
  };
  if (totalBudgetMs !== undefined) policy.totalBudgetMs = totalBudgetMs as number;
  if (estimatedCallMs !== undefined) policy.estimatedCallMs = estimatedCallMs as number;
  if (retryableStatusCodes !== undefined) policy.retryableStatusCodes = [...new Set(retryableStatusCodes as (number | GrpcFailureName)[])];
  if (successStatusCodes !== undefined) policy.successStatusCodes = [...new Set(successStatusCodes as number[])];
  if (backoffByClass !== undefined) policy.backoffByClass = copyBackoffByClass(backoffByClass as BackoffByClass);
  return { ok: true, policy };
}

/**
 * `retryableStatusCodes`: an array of failure statuses, all of one kind: HTTP statuses (integers 100–599, never a 2xx),
 * or gRPC status code names (never `OK`). Which kind a target takes is checked where the target is known (the service,
 * at enqueue).
 */
function checkRetryableStatusCodes(codes: unknown, fail: Fail): void {
  if (!Array.isArray(codes)) {
    fail('retryableStatusCodes', 'an array of HTTP status codes or of gRPC status code names when present', codes);
    return;
  }
  const grpc = codes.length > 0 && typeof codes[0] === 'string';
  codes.forEach((code: unknown, i) => {
    const field = `retryableStatusCodes[${i}]`;
    if (grpc) {
      if (typeof code !== 'string') fail(field, 'a gRPC status code name like the first entry (HTTP statuses and gRPC codes are not mixed)', code);
      else if (!isGrpcStatusName(code)) fail(field, `a gRPC status code name (${GRPC_FAILURE_NAMES.join(', ')})`, code);
      else if (code === 'OK') fail(field, 'a failure code (OK means success and is never retried)', code);
    } else if (typeof code === 'string') {
      fail(field, 'an HTTP status like the first entry (HTTP statuses and gRPC codes are not mixed)', code);
    } else if (!Number.isInteger(code) || (code as number) < 100 || (code as number) > 599) {
      fail(field, 'an integer HTTP status from 100 to 599', code);
    } else if ((code as number) >= 200 && (code as number) < 300) {
      fail(field, 'a failure status (2xx means success and is never retried)', code);
    }
  });
}

const GRPC_FAILURE_NAMES = (Object.keys(GrpcStatus) as GrpcStatusName[]).filter((name) => name !== 'OK');

/**
 * `successStatusCodes`: an array of non-2xx statuses (2xx always succeeds), none of them one the policy retries: a
 * status cannot both end the call and be tried again. The retried ones are `retryableStatusCodes` as given (when it is
 * a valid array), or the defaults, which the error then names.
 */
function checkSuccessStatusCodes(codes: unknown, retryable: unknown, fail: Fail): void {
  if (!Array.isArray(codes)) {
    fail('successStatusCodes', 'an array of HTTP status codes when present', codes);
    return;
  }
  const own = Array.isArray(retryable);
  if (own && retryable.length > 0 && typeof retryable[0] === 'string') {
    fail('successStatusCodes', 'absent when retryableStatusCodes names gRPC codes (successStatusCodes are HTTP statuses, for HTTP targets)', codes);
    return;
  }
  const retried: readonly unknown[] = own ? retryable : DEFAULT_RETRYABLE_STATUS_CODES;
  codes.forEach((code: unknown, i) => {
    const field = `successStatusCodes[${i}]`;
    if (!Number.isInteger(code) || (code as number) < 100 || (code as number) > 599) {
      fail(field, 'an integer HTTP status from 100 to 599', code);
    } else if ((code as number) >= 200 && (code as number) < 300) {
      fail(field, 'a status other than 2xx (2xx always succeeds)', code);
    } else if (retried.includes(code)) {
      fail(field, own ? 'a status not in retryableStatusCodes' : 'a status the policy does not retry (retryableStatusCodes leaves it out; by default 408, 425, 429, 500, 502, 503 and 504 are retried)', code);
    }
  });
}

/** A copy of valid `backoffByClass` in a fixed order, fields set to `undefined` left out: stored and compared as JSON. */
function copyBackoffByClass(input: BackoffByClass): BackoffByClass {
  const out: BackoffByClass = {};
  for (const failureClass of Object.values(FailureClass)) {
    const own = input[failureClass];
    if (own === undefined) continue;
    const copy: Partial<BackoffSchedule> = {};
    for (const field of BACKOFF_SCHEDULE_FIELDS) {
      const value = own[field];
      if (value !== undefined) (copy as Record<string, unknown>)[field] = value;
    }
    out[failureClass] = copy;
  }
  return out;
}

/** Like {@link validatePolicy} but throws {@link InvalidPolicyError}; returns the normalised policy. */
export function assertValidPolicy(input: unknown, path = ''): RetryPolicy {
  const r = validatePolicy(input, path);
  if (!r.ok) throw new InvalidPolicyError(r.violations);
  return r.policy;
}
