// The token bucket of a target's rate limit (see `Store.limitTarget`), as pure functions of the stored bucket and
// `now`: the store reads the bucket, calls these, and writes the result back in the same IMMEDIATE transaction.

/** A bucket as stored: its tokens when they were last counted, and when (epoch ms). */
export interface Bucket {
  tokens: number;
  countedAt: number;
}

/** A bucket's size when a rate comes without one: the smallest the port allows. */
export const DEFAULT_BURST = 1;

/**
 * The bucket brought up to `now`: refilled at `ratePerSecond` since it was counted, never past `burst`.
 *
 * Computed as `min(burst, tokens + elapsedMs * ratePerSecond / 1000)`, in that order, so that whole figures stay
 * whole: 100 ms at 10/s gives exactly 1 token, not 0.999…, and a claim at the moment a token is due finds it.
 *
 * @example
 * ```ts
 * refill({ tokens: 0, countedAt: 1_000 }, 10, 3, 1_100); // { tokens: 1, countedAt: 1_100 }
 * ```
 */
export function refill(bucket: Bucket, ratePerSecond: number, burst: number, now: number): Bucket {
  // An instance whose clock is behind the one that counted last gains nothing (rather than draining the bucket),
  // and does not move the count back: the time in between would otherwise be credited twice.
  if (now <= bucket.countedAt) return { tokens: Math.min(burst, bucket.tokens), countedAt: bucket.countedAt };
  const elapsedMs = now - bucket.countedAt;
  return { tokens: Math.min(burst, bucket.tokens + (elapsedMs * ratePerSecond) / 1000), countedAt: now };
}

/** The whole tokens a bucket can give now: what a claim may offer its target. */
export function wholeTokens(bucket: Bucket): number {
  return Math.max(0, Math.floor(bucket.tokens));
}

/**
 * When a bucket short of a whole token next holds one (what `throttled_until` keeps), or null when it holds one.
 *
 * The time is the earliest at which {@link refill} gives at least 1: the division may round it a hair early, so it
 * is nudged up to the next representable instant until it does (once at most, in practice). A claim at the
 * throttle's end therefore finds its token instead of throttling the target again.
 */
export function nextTokenAt(bucket: Bucket, ratePerSecond: number): number | null {
  if (bucket.tokens >= 1) return null;
  let at = bucket.countedAt + ((1 - bucket.tokens) * 1000) / ratePerSecond;
  for (let i = 0; i < 8 && bucket.tokens + ((at - bucket.countedAt) * ratePerSecond) / 1000 < 1; i++) {
    at += Math.max(Math.abs(at) * Number.EPSILON, Number.MIN_VALUE);
  }
  return at;
}
