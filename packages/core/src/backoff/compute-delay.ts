import type { Random } from '../time/clock.js';
import type { BackoffSchedule } from '../policy/retry-policy.js';

const uniform = (random: Random, low: number, high: number) => low + random() * (high - low);

/**
 * The capped base delay before retry `n`, without jitter:
 * FIXED `initialDelayMs`; LINEAR `initialDelayMs × n`; EXPONENTIAL `initialDelayMs × multiplier^(n−1)`;
 * then `min(maxDelayMs, base)`. Never NaN or Infinity: a base that overflows is simply capped.
 */
export function baseDelay(policy: BackoffSchedule, n: number): number {
  let base: number;
  switch (policy.backoffType) {
    case 'FIXED':
      base = policy.initialDelayMs;
      break;
    case 'LINEAR':
      base = policy.initialDelayMs * n;
      break;
    case 'EXPONENTIAL':
      // multiplier^(n-1) overflows to Infinity for large n; min() below turns that into maxDelayMs.
      base = policy.initialDelayMs * Math.pow(policy.multiplier, n - 1);
      break;
  }
  return Number.isFinite(base) ? Math.min(policy.maxDelayMs, base) : policy.maxDelayMs;
}

/**
 * The delay in ms before retry `n` (`n = 1` is the first retry, i.e. the second attempt). Pure: the same
 * arguments always give the same delay.
 *
 * - NONE: the capped base; FULL: `uniform(0, cap)`; EQUAL: `cap/2 + uniform(0, cap/2)`;
 * - DECORRELATED: `min(maxDelayMs, uniform(initialDelayMs, max(initialDelayMs, previousDelayMs) × 3))`.
 *
 * @param policy - a valid policy (see `validatePolicy`), or any {@link BackoffSchedule}, such as `scheduleFor(policy, failureClass)`
 * @param n - the retry number, an integer >= 1
 * @param previousDelayMs - the delay chosen before the previous retry (0 before the first); read by DECORRELATED only
 * @param random - uniform in `[0, 1)`
 * @example
 * ```ts
 * computeDelay({ ...DEFAULT_POLICY, jitterType: 'NONE' }, 3, 0, Math.random); // 400
 * ```
 */
export function computeDelay(policy: BackoffSchedule, n: number, previousDelayMs: number, random: Random): number {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`n must be an integer >= 1, got ${n}`);
  const cap = baseDelay(policy, n);
  switch (policy.jitterType) {
    case 'NONE':
      return cap;
    case 'FULL':
      return uniform(random, 0, cap);
    case 'EQUAL':
      return cap / 2 + uniform(random, 0, cap / 2);
    case 'DECORRELATED': {
      const previous = Number.isFinite(previousDelayMs) ? previousDelayMs : policy.initialDelayMs;
      const high = Math.min(Math.max(policy.initialDelayMs, previous) * 3, Number.MAX_VALUE);
      return Math.min(policy.maxDelayMs, uniform(random, policy.initialDelayMs, high));
    }
  }
}
