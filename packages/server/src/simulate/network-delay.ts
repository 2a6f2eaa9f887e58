import type { Random } from '@retryd/core';
import { normalSampler } from './seeded-random.js';

/** The network of both models, as in the AWS post: every message takes `|Normal(10, 2)|` ms. */
export const NETWORK_DELAY = Object.freeze({ meanMs: 10, sdMs: 2 });

/**
 * Draws message delays from `random`: `|Normal(10, 2)|` ms each. The absolute value folds the rare negative draw
 * (five deviations below the mean) back, as the post's simulator does.
 */
export function networkDelay(random: Random): () => number {
  const normal = normalSampler(random);
  return () => Math.abs(normal(NETWORK_DELAY.meanMs, NETWORK_DELAY.sdMs));
}
