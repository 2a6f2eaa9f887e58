import type { TargetLimits, TargetRef } from '../../store/store.js';
import type { QueueStatements, ReadyQueueRow } from './queue-statements.js';
import { DEFAULT_BURST, nextTokenAt, refill, wholeTokens, type Bucket } from './token-bucket.js';

// A target's limits as a claim applies them (see `Store.limitTarget` and 003-target-limits.sql), inside the claim's
// IMMEDIATE transaction, so that every instance on the file shares one bucket and one in-flight count. A claim
// opens the gate of each limited queue it considers (what may it offer?), takes at most that, and closes the gate
// (what is left, and until when is the queue not ready?). A queue without limits never comes here.

/** What a limited queue may give one claim, as of the claim's `now`. */
export interface Gate {
  /** Tasks the queue may give: its bucket's whole tokens and its free in-flight slots, whichever is fewer. */
  offer: number;
  /** The bucket brought up to now; null without a rate limit. */
  bucket: Bucket | null;
  /** Its IN_FLIGHT tasks before the claim (hand-offs included); null without a concurrency limit. */
  inFlight: number | null;
  /** The earliest lease among those that lapses after now; null when none does. */
  nextLeaseExpiry: number | null;
}

/** Whether a ready queue has a limit: only then does a claim open its gate. */
export function isLimited(queue: ReadyQueueRow): boolean {
  return queue[2] !== null || queue[4] !== null;
}

/**
 * Reads a limited queue's allowance at `now`: its bucket refilled (no write), and, with a concurrency limit, its
 * IN_FLIGHT tasks counted (one walk of the tenant's few in-flight entries).
 */
export function openGate(s: QueueStatements, queue: ReadyQueueRow, now: number): Gate {
  const [tenantId, , ratePerSecond, burst, maxInFlight, tokens, tokensAt, queueId] = queue;
  let offer = Number.POSITIVE_INFINITY;
  let bucket: Bucket | null = null;
  if (ratePerSecond !== null) {
    const size = burst ?? DEFAULT_BURST;
    // The schema keeps tokens with every rate; a full bucket is the reading of a row that somehow lacks them.
    bucket = refill({ tokens: tokens ?? size, countedAt: tokensAt ?? now }, ratePerSecond, size, now);
    offer = wholeTokens(bucket);
  }
  let inFlight: number | null = null;
  let nextLeaseExpiry: number | null = null;
  if (maxInFlight !== null) {
    const counted = s.inFlightOf.get(now, tenantId, queueId);
    inFlight = counted?.[0] ?? 0;
    nextLeaseExpiry = counted?.[1] ?? null;
    offer = Math.min(offer, Math.max(0, maxInFlight - inFlight));
  }
  return { offer, bucket, inFlight, nextLeaseExpiry };
}

/**
 * Writes what a claim that took `taken` tasks (at most `gate.offer`) left of a limited queue's gate, in one update
 * of its row: the bucket less the tokens taken and, when it holds less than one, `throttled_until` at its next whole
 * token; when the queue is now at its in-flight limit, `full_until` (see below). Writes nothing when the claim took
 * nothing and left the queue unthrottled (it had nothing due): the stored bucket refills to the same count later.
 *
 * `full_until` is the earliest lease that lapses after `now` among the queue's in-flight tasks, this claim's
 * (`leaseExpiresAt`) included: the completions that free a slot clear it sooner, and should they all be lost, the
 * queue is counted again then. When every in-flight lease has lapsed already (their reaping will clear it), this
 * claim's lease length bounds it all the same.
 */
export function closeGate(
  s: QueueStatements,
  queue: ReadyQueueRow,
  gate: Gate,
  taken: number,
  now: number,
  leaseExpiresAt: number,
): void {
  const [, , ratePerSecond, , maxInFlight, , , queueId] = queue;
  let bucket: Bucket | null = null;
  let throttledUntil: number | null = null;
  if (ratePerSecond !== null && gate.bucket !== null) {
    bucket = { tokens: gate.bucket.tokens - taken, countedAt: gate.bucket.countedAt };
    throttledUntil = nextTokenAt(bucket, ratePerSecond);
  }
  let fullUntil: number | null = null;
  if (maxInFlight !== null && (gate.inFlight ?? 0) + taken >= maxInFlight) {
    const next = gate.nextLeaseExpiry;
    fullUntil = taken > 0 ? Math.min(next ?? leaseExpiresAt, leaseExpiresAt) : (next ?? leaseExpiresAt);
  }
  if (taken === 0 && throttledUntil === null && fullUntil === null) return;
  s.setGate.run(bucket?.tokens ?? null, bucket?.countedAt ?? null, throttledUntil, fullUntil, queueId);
}

/**
 * `limitTarget`: sets a target's limits (creating its queue row if needed) and its bucket: the tokens it had,
 * refilled at the old rate up to `now` and capped at the new burst, or a full bucket for a target that had no rate
 * limit. A burst without a rate is not kept (it means nothing without one). Ends any throttle the old limits set
 * but the new bucket's own: the next claim applies the new limits. Run inside an IMMEDIATE transaction.
 */
export function applyLimits(s: QueueStatements, target: TargetRef, limits: TargetLimits, now: number): void {
  const { ratePerSecond, maxInFlight } = limits;
  let bucket: Bucket | null = null;
  if (ratePerSecond !== null) {
    const size = limits.burst ?? DEFAULT_BURST;
    const [oldRate, oldBurst, tokens, tokensAt] = s.bucketOf.get(target.tenantId, target.targetKey) ?? [null, null, null, null];
    const kept =
      oldRate !== null && tokens !== null && tokensAt !== null
        ? refill({ tokens, countedAt: tokensAt }, oldRate, oldBurst ?? DEFAULT_BURST, now)
        : { tokens: size, countedAt: now };
    bucket = { tokens: Math.min(size, kept.tokens), countedAt: kept.countedAt };
  }
  s.limitTarget.run(
    target.tenantId,
    target.targetKey,
    ratePerSecond,
    ratePerSecond === null ? null : limits.burst,
    maxInFlight,
    now,
    bucket?.tokens ?? null,
    bucket?.countedAt ?? null,
    bucket === null || ratePerSecond === null ? null : nextTokenAt(bucket, ratePerSecond),
  );
}
