import { deriveSeed } from './seeded-random.js';
import type { W7Downstream } from './w7-workload.js';

/** A W7 downstream: whether the `request`-th request (1 for the first) of task `task`'s key, reaching it at `now`, gets a `200`. */
export type DownstreamAnswer = (task: number, request: number, now: number) => boolean;

// Mixed into the seed of the random cases' draws, so that they are not any other stream of the model.
const RANDOM_TAG = 0xb7d0;

/**
 * The answers of a case's downstream. A random case draws each answer from `(seed, task, request)` alone, not from one
 * stream in arrival order: every design then meets the same answer for the same key's same request (common random
 * numbers), so that a difference between designs is theirs, not the draw's. The overload case's bucket must see
 * requests in the order they arrive, which the model's event queue guarantees.
 */
export function downstreamAnswer(downstream: W7Downstream, seed: number): DownstreamAnswer {
  switch (downstream.kind) {
    case 'not-ready':
      return (_task, request) => request > downstream.failFirst;
    case 'random': {
      const base = deriveSeed(seed, RANDOM_TAG);
      return (task, request) => deriveSeed(base, task, request) / 4294967296 >= downstream.failShare;
    }
    case 'overload': {
      const { perSecond, burst } = downstream;
      let tokens = burst;
      let filledAt = 0;
      return (_task, _request, now) => {
        tokens = Math.min(burst, tokens + ((now - filledAt) * perSecond) / 1_000);
        filledAt = now;
        if (tokens < 1) return false;
        tokens -= 1;
        return true;
      };
    }
    case 'dead':
      return () => false;
    case 'ok':
    case 'slow':
      return () => true;
  }
}

/** How long a request reaching a W7 downstream at `now` spends in it before its answer leaves, in ms. */
export type DownstreamServiceTime = (now: number) => number;

/**
 * The time each request spends in a case's downstream: 0 for those that answer at once; for `slow`, its wait for one of
 * the `inFlight` places, then `baseMs`. The places are taken first come first served and each is held `baseMs`, so
 * they free in the order they were taken: the place a request gets is the one taken `inFlight` requests before it.
 * Requests must come in the order they arrive, which the model's event queue guarantees.
 */
export function downstreamServiceTime(downstream: W7Downstream): DownstreamServiceTime {
  if (downstream.kind !== 'slow') return () => 0;
  const { inFlight, baseMs } = downstream;
  // When each place frees: the request `inFlight` before this one frees the place this one gets.
  const freeAt = new Float64Array(inFlight);
  let next = 0;
  return (now) => {
    const done = Math.max(now, freeAt[next] as number) + baseMs;
    freeAt[next] = done;
    next = (next + 1) % inFlight;
    return done - now;
  };
}
