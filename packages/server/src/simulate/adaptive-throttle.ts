import type { Random } from '@retryd/core';

/** The SRE book's settings: `K` = 2 (a backend may see twice what it accepts), over the last two minutes. */
export const SRE_THROTTLE = Object.freeze({ k: 2, windowMs: 120_000 });

// Whole seconds per slice: the window is then right to within a second of its two minutes, with O(1) per call.
const SLICE_MS = 1_000;

/**
 * Client-side adaptive throttling, from Google's "Site Reliability Engineering", chapter 21 ("Handling Overload"): the
 * client counts the requests it meant to send and the ones the backend accepted, over a sliding window, and refuses a
 * request locally with probability `max(0, (requests − K·accepts) / (requests + 1))`. A backend that accepts everything
 * is never throttled; one that accepts nothing gets ever fewer calls (the refused requests count as requests too);
 * in between, the client sends about `K` times what is accepted. Pure bookkeeping: time and randomness are passed in.
 *
 * @example
 * ```ts
 * const throttle = new AdaptiveThrottle();
 * if (throttle.admit(now, random)) send(); // then, on a success: throttle.accepted(now)
 * ```
 */
export class AdaptiveThrottle {
  private readonly requests: Float64Array;
  private readonly accepts: Float64Array;
  private requestSum = 0;
  private acceptSum = 0;
  private slice = 0;

  constructor(
    private readonly k: number = SRE_THROTTLE.k,
    windowMs: number = SRE_THROTTLE.windowMs,
  ) {
    const slices = Math.max(1, Math.round(windowMs / SLICE_MS));
    this.requests = new Float64Array(slices);
    this.accepts = new Float64Array(slices);
  }

  /** The probability that a request at `now` is refused locally. */
  rejectProbability(now: number): number {
    this.roll(now);
    return Math.max(0, (this.requestSum - this.k * this.acceptSum) / (this.requestSum + 1));
  }

  /** A request is to be made at `now`: counts it, and says whether it may go (false: refused locally). */
  admit(now: number, random: Random): boolean {
    const p = this.rejectProbability(now);
    this.add(this.requests, 1);
    this.requestSum++;
    return p === 0 || random() >= p;
  }

  /** The backend accepted a request (it answered, and not to say it is overloaded or failing). */
  accepted(now: number): void {
    this.roll(now);
    this.add(this.accepts, 1);
    this.acceptSum++;
  }

  private add(slices: Float64Array, n: number): void {
    const i = this.slice % slices.length;
    slices[i] = (slices[i] as number) + n;
  }

  /** Moves the window to `now`'s slice, forgetting the slices that left it. */
  private roll(now: number): void {
    const slice = Math.floor(now / SLICE_MS);
    const n = this.requests.length;
    if (slice <= this.slice) return;
    for (let s = Math.max(this.slice + 1, slice - n + 1); s <= slice; s++) {
      const i = s % n;
      this.requestSum -= this.requests[i] as number;
      this.acceptSum -= this.accepts[i] as number;
      this.requests[i] = 0;
      this.accepts[i] = 0;
    }
    this.slice = slice;
  }
}
