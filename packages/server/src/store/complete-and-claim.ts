import type { AttemptCompletion, ClaimOptions, CompleteAndClaimResult, Store } from './store.js';

/**
 * `completeAndClaim` for a store whose two writes cannot share one: both calls are issued at once, so that they
 * travel together (ioredis pipelines commands sent in the same turn on one connection) and their latencies overlap.
 * Rejects when either does, once both have settled.
 *
 * When the completions fail but the claim was made (on Redis Cluster, a completion batch touching a master that is
 * failing over while the claim is served by the others), the claimed tasks are released at once (`releaseLeases`,
 * best effort) before rejecting: the caller never sees them, and their leases would otherwise hold them back until
 * they lapse and are reaped as lost attempts.
 *
 * @example
 * ```ts
 * completeAndClaim(completions, now, claim) { return completeAlongsideClaim(this, completions, now, claim); }
 * ```
 */
export async function completeAlongsideClaim(
  store: Pick<Store, 'completeAttempts' | 'claimDue' | 'releaseLeases'>,
  completions: readonly AttemptCompletion[],
  now: number,
  claim: ClaimOptions,
): Promise<CompleteAndClaimResult> {
  const [results, claimed] = await Promise.allSettled([store.completeAttempts(completions, now), store.claimDue(now, claim)]);
  if (results.status === 'rejected') {
    if (claimed.status === 'fulfilled' && claimed.value.length > 0) await store.releaseLeases(claimed.value, now).catch(() => 0);
    throw results.reason;
  }
  if (claimed.status === 'rejected') throw claimed.reason;
  return { results: results.value, claimed: claimed.value };
}
