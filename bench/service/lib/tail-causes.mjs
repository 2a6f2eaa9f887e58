// What W4's slowest tasks waited behind (`w4.mjs --stalls`): the service's stalls and GCs that ./stall-probe.mjs
// recorded, set against each task's lag.

import { constants } from 'node:perf_hooks';

/**
 * Of the tasks whose lag is at or past `p99` (the run's, as summarize() gives it): how many had a GC of the service within their lag (`gc`; `major`
 * of them a mark-compact), how many only a stall of its event loop with no GC in it (`stall`), and how many neither.
 * A task's lag spans from its `nextAttemptAt` to its arrival at the downstream. Also the stalls and GCs of the
 * measured span (from the first task's due time to the last arrival), by count and ms.
 *
 * @param {{ idempotencyKey: string, nextAttemptAt: number }[]} created
 * @param {Map<string, number>} arrivals
 * @param {{ stalls: [number, number][], gcs: [number, number, number | null][] }} probe
 * @param {number} p99
 */
export function tailCauses(created, arrivals, probe, p99) {
  const tasks = [];
  for (const task of created) {
    const at = arrivals.get(task.idempotencyKey);
    if (at !== undefined) tasks.push({ from: task.nextAttemptAt, to: at, lag: at - task.nextAttemptAt });
  }
  if (tasks.length === 0) return undefined;
  // A loop, not Math.min(...): a 60 s run's 120,000 tasks are more arguments than a call takes.
  let start = Infinity;
  let end = -Infinity;
  for (const t of tasks) {
    if (t.from < start) start = t.from;
    if (t.to > end) end = t.to;
  }
  const within = (/** @type {(number | null)[]} */ [at, ms]) => Number(at) < end && Number(at) + Number(ms) > start;
  const stalls = probe.stalls.filter(within);
  const gcs = probe.gcs.filter(within);
  const overlaps = (/** @type {{ from: number, to: number }} */ t, /** @type {(number | null)[]} */ [at, ms]) =>
    Number(at) < t.to && Number(at) + Number(ms) > t.from;
  const tail = { tasks: 0, gc: 0, major: 0, stall: 0, neither: 0 };
  for (const t of tasks) {
    if (t.lag < p99) continue;
    tail.tasks += 1;
    const hit = gcs.filter((g) => overlaps(t, g));
    if (hit.length > 0) {
      tail.gc += 1;
      if (hit.some((g) => g[2] === constants.NODE_PERFORMANCE_GC_MAJOR)) tail.major += 1;
    } else if (stalls.some((s) => overlaps(t, s))) tail.stall += 1;
    else tail.neither += 1;
  }
  const sum = (/** @type {(number | null)[][]} */ list) => list.reduce((a, e) => a + Number(e[1] ?? 0), 0);
  const minor = gcs.filter((g) => g[2] === constants.NODE_PERFORMANCE_GC_MINOR);
  const major = gcs.filter((g) => g[2] === constants.NODE_PERFORMANCE_GC_MAJOR);
  return {
    p99,
    tail,
    stalls: { count: stalls.length, ms: sum(stalls), longestMs: stalls.reduce((a, s) => Math.max(a, s[1]), 0) },
    scavenges: { count: minor.length, ms: sum(minor) },
    markCompacts: { count: major.length, ms: sum(major) },
  };
}
