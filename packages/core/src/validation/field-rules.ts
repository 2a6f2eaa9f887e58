/**
 * Rules for validating options and snapshots at the boundary, shared by the circuit breaker and the retry
 * budget so that both word their errors the same way: `<field> must be <rule>, got <value>`.
 */

/** Renders a value for an error message: JSON where possible, cut to 60 characters. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (typeof value === 'function') return 'a function';
  try {
    const s = JSON.stringify(value);
    return s.length > 60 ? `${s.slice(0, 57)}...` : s;
  } catch {
    // Cyclic objects and BigInts cannot be stringified as JSON.
    return String(value);
  }
}

/** `<field> must be <rule>, got <value>`: the one shape of every validation message. */
export function violationMessage(field: string, rule: string, value: unknown): string {
  return `${field} must be ${rule}, got ${describeValue(value)}`;
}

/** A rule a value must follow, with the words an error message uses for it. */
export interface FieldRule {
  /** Completes "must be ...", e.g. `an integer >= 1`. */
  readonly rule: string;
  /** True when the value follows the rule. */
  test(value: unknown): boolean;
}

/** True for numbers other than NaN and ±Infinity. */
export const isFiniteNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/** Integers (safe ones, so counters stay exact) at or above `min`. */
export const integerAtLeast = (min: number): FieldRule => ({
  rule: `an integer >= ${min}`,
  test: (v) => Number.isSafeInteger(v) && (v as number) >= min,
});

/** Finite numbers at or above `min`. */
export const numberAtLeast = (min: number): FieldRule => ({
  rule: `a finite number >= ${min}`,
  test: (v) => isFiniteNumber(v) && v >= min,
});

/** Finite numbers strictly above `min`. */
export const numberAbove = (min: number): FieldRule => ({
  rule: `a finite number > ${min}`,
  test: (v) => isFiniteNumber(v) && v > min,
});

/** Something with a `now()` method: all the breaker and the budget ask of a `Clock`. */
export const clockRule: FieldRule = {
  rule: 'a Clock (an object with a now() method)',
  test: (v) => typeof v === 'object' && v !== null && typeof (v as { now?: unknown }).now === 'function',
};

/**
 * Checks an options object against per-field rules and throws one `RangeError` listing every broken rule
 * (joined by `; `). Unknown fields are refused so that a misspelt option (`failureRate`) is not silently
 * ignored; a field set to `undefined` counts as absent.
 *
 * @param owner - names the thing configured, e.g. `CircuitBreaker`
 * @param input - the options as given (may come from a parsed config file)
 * @param rules - one rule per known field
 * @param extra - cross-field checks, run when every field passed; each returns a message or undefined
 * @throws RangeError e.g. `consecutiveFailures must be an integer >= 1, got 0`
 */
export function assertOptions(
  owner: string,
  input: unknown,
  rules: Readonly<Record<string, FieldRule>>,
  extra: (options: Record<string, unknown>) => string | undefined = () => undefined,
): void {
  if (input === undefined) return;
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new RangeError(violationMessage(`${owner} options`, 'an object', input));
  }
  const options = input as Record<string, unknown>;
  const messages: string[] = [];
  for (const [field, value] of Object.entries(options)) {
    const rule = rules[field];
    if (rule === undefined) {
      messages.push(`${field} is not a ${owner} option (known: ${Object.keys(rules).join(', ')})`);
    } else if (value !== undefined && !rule.test(value)) {
      messages.push(violationMessage(field, rule.rule, value));
    }
  }
  if (messages.length === 0) {
    const message = extra(options);
    if (message !== undefined) messages.push(message);
  }
  if (messages.length > 0) throw new RangeError(messages.join('; '));
}
