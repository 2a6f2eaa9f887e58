import type { Random } from '@retryd/core';

// The simulations draw hundreds of millions of numbers: Math.random cannot be seeded, and a 32-bit generator
// (mulberry32, period 2^32) would wrap within one full run. xoshiro128** has a period of 2^128 − 1, passes
// BigCrush and needs only 32-bit integer operations, which JavaScript does exactly with Math.imul and >>> 0.

/** The seed when none is given: the year of the AWS post the contention model comes from. */
export const DEFAULT_SIMULATION_SEED = 2015;

/** Mixes a seed and a cell's coordinates into one 32-bit seed (murmur3's finaliser per part). */
export function deriveSeed(seed: number, ...parts: readonly number[]): number {
  let h = seed >>> 0;
  for (const part of [...parts, parts.length]) {
    h = Math.imul(h ^ (part >>> 0), 0x9e3779b1) >>> 0;
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b) >>> 0;
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35) >>> 0;
    h ^= h >>> 16;
  }
  return h >>> 0;
}

/**
 * A seeded {@link Random} (xoshiro128**, its state filled from the seed by splitmix32): uniform in `[0, 1)`,
 * the same sequence for the same seed on every platform.
 *
 * @example
 * ```ts
 * const random = xoshiro128(1);
 * random(); // always the same first value for seed 1
 * ```
 */
export function xoshiro128(seed: number): Random {
  let z = seed >>> 0;
  const splitmix32 = () => {
    z = (z + 0x9e3779b9) >>> 0;
    let t = z;
    t = Math.imul(t ^ (t >>> 16), 0x21f0aaad);
    t = Math.imul(t ^ (t >>> 15), 0x735a2d97);
    return (t ^ (t >>> 15)) >>> 0;
  };
  return xoshiro128FromState(splitmix32(), splitmix32(), splitmix32(), splitmix32());
}

/** xoshiro128** from its four 32-bit state words (not all zero): for reference vectors. */
export function xoshiro128FromState(s0: number, s1: number, s2: number, s3: number): Random {
  let a = s0 | 0;
  let b = s1 | 0;
  let c = s2 | 0;
  let d = s3 | 0;
  return () => {
    const t = b << 9;
    let r = Math.imul(b, 5);
    r = Math.imul((r << 7) | (r >>> 25), 9);
    c ^= a;
    d ^= b;
    b ^= c;
    a ^= d;
    c ^= t;
    d = (d << 11) | (d >>> 21);
    return (r >>> 0) / 4294967296;
  };
}

/**
 * Normal draws by the polar form of the Box–Muller transform (Marsaglia's): each accepted pair of uniforms gives
 * two independent normals, the second kept for the next call. No sine or cosine, which cost more than the
 * one pair in five that is rejected.
 *
 * @example
 * ```ts
 * const normal = normalSampler(xoshiro128(1));
 * Math.abs(normal(10, 2)); // a network delay in ms
 * ```
 */
export function normalSampler(random: Random): (mean: number, sd: number) => number {
  let spare = 0;
  let hasSpare = false;
  return (mean, sd) => {
    if (hasSpare) {
      hasSpare = false;
      return mean + sd * spare;
    }
    let u: number;
    let v: number;
    let s: number;
    do {
      u = 2 * random() - 1;
      v = 2 * random() - 1;
      s = u * u + v * v;
    } while (s >= 1 || s === 0);
    const scale = Math.sqrt((-2 * Math.log(s)) / s);
    spare = v * scale;
    hasSpare = true;
    return mean + sd * u * scale;
  };
}

/** An exponential draw with the given mean (the gap between two arrivals of a Poisson process). */
export function exponential(random: Random, mean: number): number {
  return -mean * Math.log(1 - random());
}
