import type { AttemptCompletion, ClaimOptions, CompleteAndClaimResult, Store } from './store.js';

/**
 * `completeAndClaim` for a store whose two writes cannot share one: both calls are issued at once, so that they
 * travel together (ioredis pipelines commands sent in the same turn on one connection) and their latencies overlap.
 * Rejects as soon as either does, as the port allows.
 *
 * @example
 * ```ts
 * completeAndClaim(completions, now, claim) { return completeAlongsideClaim(this, completions, now, claim); }
 * ```
 */
export async function completeAlongsideClaim(
  store: Pick<Store, 'completeAttempts' | 'claimDue'>,
  completions: readonly AttemptCompletion[],
  now: number,
  claim: ClaimOptions,
): Promise<CompleteAndClaimResult> {
  const [results, claimed] = await Promise.all([store.completeAttempts(completions, now), store.claimDue(now, claim)]);
  return { results, claimed };
}
