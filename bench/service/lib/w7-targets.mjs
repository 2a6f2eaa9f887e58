// W7 g (one bad target among good ones, ../../../../shared/WORKLOADS.md): ten targets, and the tasks spread over them.
// retryd keys a target by its URL's origin (packages/server/src/domain/target-key.ts), so ten targets are ten
// origins: ten downstreams (../downstream.mjs), each its own process listening on its own port of 127.0.0.1, as ten
// services would be. The first is the bad one (case d: 500 requests/s, 503 beyond).
//
// How the tasks are spread: the even ones (half) go to the bad target, all due at one instant, as in case d: a backlog
// it takes at least a second per 500 tasks to serve. The odd ones go round the nine good targets, due one after another
// at GOOD_PER_SECOND from that instant: a steady stream over the time the bad target needs at the least for its own
// tasks, so the good ones' tasks fall due while it is overloaded. Neither a round robin of the tasks nor all of them due
// at once, as in W7's other cases: while every target has tasks due, the fair share of claims among targets holds the
// bad one to about a tenth of the sends, under its capacity (measured, a round robin due at once: not one 503), and a
// good task's lag would be how long the service takes to send them all, a figure of the task count.

import { startDownstream } from './downstream-client.mjs';
import { summarize } from './report.mjs';

/** How many targets case g has: one bad, the others good. */
export const TARGETS = 10;

/**
 * The aim's slack: the good targets' lag p99 with the bad one at most 1.2× theirs without it, or this much more. Their
 * p50 is a few ms, their p99 about 100 ms, and that p99 moves by tens of ms from run to run on a 2-core machine
 * (docs/benchmarks-history.md has the runs), which 1.2× of it does not cover.
 */
export const LAG_SLACK_MS = 50;

/** Whether the good targets' lag with the bad one (`goodLag`'s) is as without it: p99 within 1.2×, or + {@link LAG_SLACK_MS}. */
export function lagUnaffected(withBad, without) {
  if (!(withBad?.n > 0) || !(without?.n > 0)) return false;
  return withBad.p99 <= Math.max(1.2 * without.p99, without.p99 + LAG_SLACK_MS);
}

/**
 * The good targets' tasks per second, all nine together (56 each): case d's capacity, so that their stream lasts as
 * long as the bad target needs at the least for as many tasks; under a sixth of what retryd dispatches on a 2-core
 * machine (W1's attempts/s), which leaves the service the room to serve them while the bad one is retried.
 */
export const GOOD_PER_SECOND = 500;

/** The target (0 the bad one) of task i: the even ones the bad target, the odd ones round the good ones. */
export const targetOf = (i) => (i % 2 === 0 ? 0 : 1 + (((i - 1) / 2) % (TARGETS - 1)));

/** When task i falls due, in ms after the run's first due time: the bad target's at once, the good ones' in a stream. */
export const dueOffsetOf = (i) => (i % 2 === 0 ? 0 : (((i - 1) / 2) * 1000) / GOOD_PER_SECOND);

/** How many of `tasks` tasks go to the good targets. */
export const goodTaskCount = (tasks) => Math.floor(tasks / 2);

/**
 * The index among all tasks of the j-th task of the good targets: the same tasks, the bad target's left out.
 *
 * @example
 * [0, 1, 2].map(goodTaskIndex); // [1, 3, 5]
 */
export const goodTaskIndex = (j) => 2 * j + 1;

/**
 * The ten downstreams: `first` (already running) as the bad target, and nine more started here. `close()` stops the
 * nine (the caller owns `first`).
 */
export async function startTargets(first) {
  const others = await Promise.all(Array.from({ length: TARGETS - 1 }, () => startDownstream()));
  return {
    all: [first, ...others],
    good: others,
    close: () => Promise.all(others.map((d) => d.close())),
  };
}

/**
 * The good targets' lag: from each task's due time (`dueAt`, the run's first, epoch ms, plus its {@link dueOffsetOf})
 * to its first success at its downstream (the arrival of the request that succeeded: the good targets answer at once),
 * in ms, `{ n, p50, p99, max, ... }` (n: the good tasks that succeeded). A task's index ends its idempotency key.
 */
export async function goodLag(good, dueAt) {
  const lags = [];
  for (const d of good) {
    for (const [key, at] of await d.arrivals()) lags.push(at - (dueAt + Math.round(dueOffsetOf(Number(key.slice(key.lastIndexOf('-') + 1))))));
  }
  return summarize(lags);
}

/**
 * The figures of several downstreams as one: their requests, first successes and duplicates summed, the first
 * request of any, and every request's arrival (epoch ms, sorted) for the busiest window. Each must be in a mode that
 * records its timeline (any but ok).
 */
export async function combinedFigures(downstreams) {
  /** @type {{ requests: number, firstSuccesses: number, duplicates: number, firstRequestAt: number | null }} */
  const figures = { requests: 0, firstSuccesses: 0, duplicates: 0, firstRequestAt: null };
  const arrivals = [];
  for (const d of downstreams) {
    const s = await d.stats();
    figures.requests += s.requests;
    figures.firstSuccesses += s.firstSuccesses;
    figures.duplicates += s.duplicates;
    if (s.firstRequestAt !== null) figures.firstRequestAt = Math.min(figures.firstRequestAt ?? Infinity, s.firstRequestAt);
    const tl = await d.timeline();
    if (tl?.startAt !== null && tl?.startAt !== undefined) for (const t of tl.times) arrivals.push(tl.startAt + t);
  }
  return { ...figures, arrivals: Float64Array.from(arrivals).sort() };
}
