import { BackoffType, JitterType, type RetryPolicy } from './retry-policy.js';

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

const POLICY_FIELDS = new Set<string>([
  'maxAttempts',
  'backoffType',
  'initialDelayMs',
  'multiplier',
  'maxDelayMs',
  'jitterType',
  'totalBudgetMs',
  'estimatedCallMs',
  'retryableStatusCodes',
]);

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

/**
 * Checks untrusted input (a parsed HTTP body, a config file) against every rule of {@link RetryPolicy}
 * and reports all violations at once, each naming the field and the rule. Unknown fields are refused
 * so a misspelt option (`maxAttempt`) is not silently ignored. The service reuses this for its 400 answers.
 *
 * @param input - the candidate policy
 * @param path - prefix for field names, e.g. `policy` gives `policy.maxAttempts`
 * @example
 * ```ts
 * const r = validatePolicy({ ...DEFAULT_POLICY, maxAttempts: 0 });
 * // r.ok === false; r.violations[0].message === 'maxAttempts must be an integer >= 1, got 0'
 * ```
 */
export function validatePolicy(input: unknown, path = ''): PolicyValidation {
  const violations: PolicyViolation[] = [];
  const name = (field: string) => (path ? `${path}.${field}` : field);
  const fail = (field: string, rule: string, value: unknown) =>
    violations.push({ field: name(field), rule, message: `${name(field)} must be ${rule}, got ${show(value)}` });

  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    const field = path || 'policy';
    return { ok: false, violations: [{ field, rule: 'an object', message: `${field} must be an object, got ${show(input)}` }] };
  }
  const p = input as Record<string, unknown>;

  for (const key in p) {
    if (Object.hasOwn(p, key) && !POLICY_FIELDS.has(key)) {
      violations.push({ field: name(key), rule: 'a known policy field', message: `${name(key)} is not a policy field (known: ${[...POLICY_FIELDS].join(', ')})` });
    }
  }

  const { maxAttempts, backoffType, initialDelayMs, multiplier, maxDelayMs, jitterType } = p;
  if (!Number.isInteger(maxAttempts) || (maxAttempts as number) < 1) fail('maxAttempts', 'an integer >= 1', maxAttempts);
  else if ((maxAttempts as number) > MAX_ATTEMPTS_LIMIT) fail('maxAttempts', `<= ${MAX_ATTEMPTS_LIMIT}`, maxAttempts);
  if (!BACKOFF_TYPES.includes(backoffType as BackoffType)) fail('backoffType', `one of ${BACKOFF_TYPES.join(', ')}`, backoffType);
  if (!isFiniteNumber(initialDelayMs) || initialDelayMs <= 0) fail('initialDelayMs', 'a number > 0', initialDelayMs);
  else if (initialDelayMs > MAX_POLICY_MS) fail('initialDelayMs', `<= ${MAX_POLICY_MS}`, initialDelayMs);
  if (!isFiniteNumber(multiplier) || multiplier < 1) {
    fail('multiplier', 'a finite number >= 1', multiplier);
  }
  if (!isFiniteNumber(maxDelayMs)) fail('maxDelayMs', 'a finite number', maxDelayMs);
  else if (maxDelayMs > MAX_POLICY_MS) fail('maxDelayMs', `<= ${MAX_POLICY_MS}`, maxDelayMs);
  else if (isFiniteNumber(initialDelayMs) && maxDelayMs < initialDelayMs) {
    fail('maxDelayMs', `>= initialDelayMs (${initialDelayMs})`, maxDelayMs);
  }
  if (!JITTER_TYPES.includes(jitterType as JitterType)) fail('jitterType', `one of ${JITTER_TYPES.join(', ')}`, jitterType);
  const { totalBudgetMs, estimatedCallMs, retryableStatusCodes } = p;
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
  if (retryableStatusCodes !== undefined) {
    if (!Array.isArray(retryableStatusCodes)) {
      fail('retryableStatusCodes', 'an array of HTTP status codes when present', retryableStatusCodes);
    } else {
      retryableStatusCodes.forEach((code: unknown, i) => {
        if (!Number.isInteger(code) || (code as number) < 100 || (code as number) > 599) {
          fail(`retryableStatusCodes[${i}]`, 'an integer HTTP status from 100 to 599', code);
        } else if ((code as number) >= 200 && (code as number) < 300) {
          fail(`retryableStatusCodes[${i}]`, 'a failure status (2xx means success and is never retried)', code);
        }
      });
    }
  }

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
  if (retryableStatusCodes !== undefined) policy.retryableStatusCodes = [...new Set(retryableStatusCodes as number[])];
  return { ok: true, policy };
}

/** Like {@link validatePolicy} but throws {@link InvalidPolicyError}; returns the normalised policy. */
export function assertValidPolicy(input: unknown, path = ''): RetryPolicy {
  const r = validatePolicy(input, path);
  if (!r.ok) throw new InvalidPolicyError(r.violations);
  return r.policy;
}
