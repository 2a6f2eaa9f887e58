import type { Random } from '../time/clock.js';

/**
 * A deterministic {@link Random} (mulberry32): the same seed always gives the same sequence,
 * so tests can assert exact jittered delays.
 *
 * @example
 * ```ts
 * const random = seededRandom(42);
 * random(); // always the same first value for seed 42
 * ```
 */
export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A {@link Random} that returns the given values in turn (and repeats the last): for exact, readable tests. */
export function sequenceRandom(...values: number[]): Random {
  if (values.length === 0) throw new RangeError('sequenceRandom needs at least one value');
  let i = 0;
  return () => values[Math.min(i++, values.length - 1)] as number;
}
