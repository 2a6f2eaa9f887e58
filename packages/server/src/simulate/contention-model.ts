import type { Random } from '@retryd/core';
import { CONTENTION_STRATEGIES, contentionSleep, type ContentionStrategy } from './contention-strategies.js';
import { EventQueue } from './event-queue.js';
import { networkDelay } from './network-delay.js';
import { DEFAULT_SIMULATION_SEED, deriveSeed, xoshiro128 } from './seeded-random.js';

/** What {@link simulateContention} runs. */
export interface ContentionOptions {
  /** Client counts, one row each. Default 10, 20 … 190. */
  clients?: readonly number[];
  /** Runs averaged per strategy and client count. Default 100. */
  runs?: number;
  /** The strategies, in output order. Default all of {@link CONTENTION_STRATEGIES}. */
  strategies?: readonly ContentionStrategy[];
  /** Seed of every draw. Default {@link DEFAULT_SIMULATION_SEED}. */
  seed?: number;
}

/** One strategy at one client count, averaged over the runs. */
export interface ContentionResult {
  strategy: ContentionStrategy;
  clients: number;
  runs: number;
  /** Conditional writes per run, successful and conflicting (the post's "calls"). */
  meanCalls: number;
  /** Virtual ms from the start until the last client has its successful write acknowledged. */
  meanTimeMs: number;
}

/** The default client counts: 10 to 190 in steps of 10, as in the post. */
export const DEFAULT_CONTENTION_CLIENTS: readonly number[] = Object.freeze(Array.from({ length: 19 }, (_, i) => 10 * (i + 1)));

/** The default number of runs per strategy and client count, as in the post. */
export const DEFAULT_CONTENTION_RUNS = 100;

/**
 * The optimistic-concurrency model of the AWS Architecture Blog post "Exponential Backoff And Jitter" (2015):
 * `clients` clients start together; each reads the row's version, then writes it conditionally; a write whose
 * version is stale is a conflict, and after the n-th conflict the client sleeps per `strategy`, then reads again.
 * Every message takes `|Normal(10, 2)|` ms. A client stops after its first successful write. Pure: each
 * (strategy, client count) draws from its own stream, derived from the seed, so a row does not depend on which
 * other rows are run.
 *
 * @example
 * ```ts
 * simulateContention({ clients: [100], runs: 10, strategies: ['full'] });
 * // [{ strategy: 'full', clients: 100, runs: 10, meanCalls: …, meanTimeMs: … }]
 * ```
 */
export function simulateContention(options: ContentionOptions = {}): ContentionResult[] {
  const clientCounts = options.clients ?? DEFAULT_CONTENTION_CLIENTS;
  const runs = options.runs ?? DEFAULT_CONTENTION_RUNS;
  const strategies = options.strategies ?? CONTENTION_STRATEGIES;
  const seed = options.seed ?? DEFAULT_SIMULATION_SEED;
  const queue = new EventQueue();
  const results: ContentionResult[] = [];
  for (const clients of clientCounts) {
    for (const strategy of strategies) {
      const random = xoshiro128(deriveSeed(seed, CONTENTION_STRATEGIES.indexOf(strategy), clients));
      let calls = 0;
      let time = 0;
      for (let run = 0; run < runs; run++) {
        const outcome = runOnce(queue, clients, strategy, random);
        calls += outcome.calls;
        time += outcome.timeMs;
      }
      results.push({ strategy, clients, runs, meanCalls: calls / runs, meanTimeMs: time / runs });
    }
  }
  return results;
}

/** One run: the writes made and the time the last client's success reached it. */
function runOnce(queue: EventQueue, clients: number, strategy: ContentionStrategy, random: Random): { calls: number; timeMs: number } {
  const delay = networkDelay(random);
  // A read changes nothing, so it needs no event of its own: a write succeeds when no write succeeded since the
  // client's read reached the server, which the time of the last success tells once events run in time order.
  const readAt = new Float64Array(clients);
  const conflicts = new Int32Array(clients);
  const lastSleep = new Float64Array(clients);
  let lastSuccessAt = -1;
  let calls = 0;
  let doneAt = 0;
  // The read reaches the server; the version travels back; the conditional write travels to the server.
  const scheduleWrite = (client: number, readArrives: number) => {
    readAt[client] = readArrives;
    queue.push(readArrives + delay() + delay(), client);
  };
  queue.clear();
  for (let client = 0; client < clients; client++) scheduleWrite(client, delay());
  while (queue.size > 0) {
    const client = queue.pop();
    const now = queue.time;
    calls++;
    if (lastSuccessAt < (readAt[client] as number)) {
      lastSuccessAt = now;
      doneAt = Math.max(doneAt, now + delay());
      continue;
    }
    const conflict = (conflicts[client] as number) + 1;
    conflicts[client] = conflict;
    const sleep = contentionSleep(strategy, conflict, lastSleep[client] as number, random);
    lastSleep[client] = sleep;
    // The conflict travels back, the client sleeps, then its next read travels to the server.
    scheduleWrite(client, now + delay() + sleep + delay());
  }
  return { calls, timeMs: doneAt };
}
