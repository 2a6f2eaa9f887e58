// W7 e (slow under load, ../../../../shared/WORKLOADS.md): the figures of a run against ../downstream.mjs's slow mode
// (a target that serves `concurrency` requests at once, each `latencyMs`, and queues the rest), and the attempts of a
// run that ended in a timeout, from the service's attempt log.

import { inParallel, summarize } from './report.mjs';

/** Requests the slow target serves at once (WORKLOADS.md W7 e: "capacity 200 in flight"). */
export const SLOW_CONCURRENCY = 200;

/**
 * The slow target's latency with no line, in ms (w7.mjs --slow-latency): capacity 200 ÷ 200 ms = 1,000 requests/s.
 * Not WORKLOADS.md's example of 20 ms: 200 ÷ 20 ms = 10,000/s is about twice what retryd dispatches on a 2-core machine
 * with any store (W1's attempts/s, docs/benchmarks.md), so the service could never hold 200 in flight there
 * (at 4,500/s and 20 ms, about 90): the line would never form, the latency never grow, and the goodput would be the
 * machine's ceiling rather than what the protections leave of the target's. At 200 ms the capacity is under a third of
 * that ceiling, so the service has the CPU to keep the target full; 2,000 tasks (the CI size) are a backlog of 2 s, ten
 * loads of the target; and it is the latency of `retryd simulate w7`'s case e (`W7_SLOW_BASE_MS`), so the model's
 * figures and these compare.
 */
export const SLOW_LATENCY_DEFAULT_MS = 200;

/** A first success, in a timeline's `answers` (../downstream.mjs). */
const FIRST_SUCCESS = 2;

/**
 * The figures of a run from its slow-mode timeline:
 *
 * - `goodputPerSecond`: first successes the target served per second while the service had tasks it had not sent
 *   yet: from the target's first answer (before it, a dispatcher that knows nothing of the target may start slowly,
 *   and waits one latency to learn it is up) until the last task's first request arrived (after it, the target only
 *   finishes what it holds). Each first success counts in proportion to the part of its service inside that window:
 *   a target that serves 200 at a time answers in bursts of up to 200, which a count of answers would put in or out of
 *   the window whole. Undefined when the window is shorter than two latencies (too few tasks to tell);
 * - `goodputFromFirstPerSecond`: first successes answered ÷ the time from the first request to the last answer;
 * - `latencyMs`: each answered request's time at the target, arrival to answer, `{ n, p50, p99, max, ... }`: it grows
 *   with the requests in flight beyond the concurrency, which wait in line;
 * - `peakInFlight`, `abandoned`: the most requests the target held at once, and those whose client gave up (closed
 *   the connection) before their answer: an attempt timeout, or a client gone.
 *
 * @example
 * slowFigures(await ds.timeline()); // { goodputPerSecond: 1961, goodputFromFirstPerSecond: 1787, ... }
 */
export function slowFigures(timeline) {
  const { times, answers, startTimes, doneTimes, latencyMs } = timeline;
  const latencies = [];
  const served = [];
  let firstAnswer = Infinity;
  let lastAnswer = -Infinity;
  let lastFirstArrival = -Infinity;
  for (let i = 0; i < times.length; i++) {
    if (answers[i] === FIRST_SUCCESS) lastFirstArrival = Math.max(lastFirstArrival, times[i]);
    const done = doneTimes[i];
    if (done === null || done === undefined) continue;
    latencies.push(done - times[i]);
    firstAnswer = Math.min(firstAnswer, done);
    lastAnswer = Math.max(lastAnswer, done);
    if (answers[i] === FIRST_SUCCESS) served.push([startTimes[i], done]);
  }
  const from = firstAnswer;
  const to = lastFirstArrival;
  let goodputPerSecond;
  if (to - from >= 2 * latencyMs) {
    let count = 0;
    for (const [start, done] of served) {
      const inside = Math.min(done, to) - Math.max(start, from);
      if (inside > 0) count += done > start ? inside / (done - start) : 1;
    }
    goodputPerSecond = (count * 1000) / (to - from);
  }
  return {
    goodputPerSecond,
    goodputFromFirstPerSecond: served.length === 0 ? undefined : (served.length * 1000) / Math.max(lastAnswer, 1),
    goodputWindowMs: Number.isFinite(to - from) ? { from, to } : undefined,
    latencyMs: summarize(latencies),
    peakInFlight: timeline.peakInFlight,
    abandoned: timeline.abandoned,
  };
}

/** An attempt log entry that ended in a timeout: no status, and a message of the service's timeouts (or undici's). */
const TIMEOUT = /TIMEOUT|within \d+ ms|stalled for \d+ ms/;

/**
 * Attempts of the tasks `taskIds` (those with more than one attempt: where the downstream never fails, every attempt
 * but a task's last failed) that ended in a timeout, read from the attempt log (`GET /retry-tasks/{id}/attempts`), and
 * every failed attempt's error message, counted. The service's attempt timeout is 30 s unless `--attempt-timeout` says
 * otherwise (`DEFAULT_CONFIG.attemptTimeoutMs`), and it holds at most 256 attempts in flight (`--concurrency`), so none
 * waits in the slow target's line more than about one latency more: a timeout here is not the target's line but a
 * pile-up of the service's own (attempts waiting in its queues or for a connection past the timeout), or a stalled one.
 */
export async function timedOutAttempts(service, taskIds) {
  let timeouts = 0;
  const failures = {};
  await inParallel(taskIds.length, 8, async (j) => {
    const page = await service.call('GET', `/retry-tasks/${encodeURIComponent(taskIds[j])}/attempts?limit=1000`);
    for (const a of page.items) {
      if (a.outcome === 'succeeded') continue;
      const what = a.errorMessage ?? `status ${a.responseStatus}`;
      failures[what] = (failures[what] ?? 0) + 1;
      if (a.responseStatus === null && TIMEOUT.test(a.errorMessage ?? '')) timeouts += 1;
    }
  });
  return { timeouts, failures };
}
