/**
 * Most attempts of a target in flight while no success of it is remembered (no ready attempt): a target never seen to
 * answer, or not for a breaker window, gets this many calls at once, not the whole dispatch concurrency, so that one
 * that is down costs its first wave of calls and no more before its breaker opens.
 */
export const SLOW_START_IN_FLIGHT = 10;

/** Attempts past this one are all counted as this one: a key that needs more tries than that is not "not ready yet". */
export const MAX_READY_ATTEMPT = 8;

/**
 * The fewest attempts (of a task's run) that recently sufficed for one target's tasks to succeed: its **ready attempt**.
 *
 * A downstream that answers `503` to each key's first call ("not ready yet", a read after a write that has not
 * replicated, a payment still settling) and `200` to the next has a ready attempt of 2; one that fails a share of calls
 * at random, or none, has 1. A failure of an attempt earlier than the ready attempt says the key was not ready, not that
 * the target is down or overloaded: it is exactly what the target does when it works. Protection counts such a failure
 * for nothing (the breaker, the retry budget, storm detection), so a target that answers its retries is never starved
 * by the failures of its first attempts, while a failure at or past the ready attempt counts as before.
 *
 * Unknown (null) until a success is seen, so a target that has never answered is judged on every failure (an outage
 * from the start is found within the breaker's first failures); a success at an attempt is remembered for `memoryMs`,
 * after which the next lowest attempt still remembered takes over, or none. O(1) memory and time.
 */
export class ReadyAttempt {
  /** When a success was last seen at each attempt number (index 0: attempt 1). */
  private readonly lastSuccessAt = new Float64Array(MAX_READY_ATTEMPT).fill(-Infinity);

  /** @param memoryMs - how long a success at an attempt number keeps it the ready attempt, in ms */
  constructor(private readonly memoryMs: number) {}

  /** A task succeeded on `attempt` (1-based, within its run) at `now`. */
  succeeded(attempt: number, now: number): void {
    const i = Math.min(Math.max(1, attempt), MAX_READY_ATTEMPT) - 1;
    if (now > (this.lastSuccessAt[i] as number)) this.lastSuccessAt[i] = now;
  }

  /** The ready attempt at `now`, or null when no success is remembered. */
  at(now: number): number | null {
    for (let i = 0; i < MAX_READY_ATTEMPT; i++) {
      if (now - (this.lastSuccessAt[i] as number) <= this.memoryMs) return i + 1;
    }
    return null;
  }

  /** Whether a failure of `attempt` at `now` came before the ready attempt: the key was not ready yet. */
  notReady(attempt: number, now: number): boolean {
    const ready = this.at(now);
    return ready !== null && attempt < ready;
  }
}
