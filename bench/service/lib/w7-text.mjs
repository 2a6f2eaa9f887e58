// A W7 run's figures in words (../w7.mjs): the line printed as a run ends, and what a run measured for its case's aim.

import { fmt, ratioText } from './report.mjs';

/** A figure, or `–` when it was not measured. */
const figure = (x) => (x === undefined || x === null ? '–' : fmt(x));

/** A lag's p50 and p99, in ms (`–` when nothing was measured). */
export const lagText = (lag) => (lag === undefined || !(lag.n > 0) ? '–' : `${fmt(lag.p50)} / ${fmt(lag.p99)} ms`);

/**
 * What a run measured for its case's aim, in words, from the figures it has, or undefined when it has none of them:
 * g's lag of the good targets with the bad one, with it healthy and without its tasks (`goodLag`), e's goodput, timeouts and latency at the
 * target (`latencyMs`), d's goodput (`goodputPerSecond`).
 */
export function measuredText(r) {
  if (r.goodLag !== undefined) {
    const { with: withBad, healthy, without } = r.goodLag;
    // Results from before the healthy reference have none: their ratio is to the run without the bad target's tasks.
    const reference = healthy ?? without;
    const ratio = withBad.p99 / reference.p99;
    return (
      `good targets' lag p50 / p99 ${lagText(withBad)} with the bad one` +
      `${healthy === undefined ? '' : `, ${lagText(healthy)} with it healthy`}, ${lagText(without)} without its tasks (p99 ${ratioText(ratio)} ${healthy === undefined ? 'without' : 'healthy'})`
    );
  }
  if (r.latencyMs !== undefined) {
    return (
      `goodput ${r.goodputPerSecond === undefined ? '– (too few tasks to tell)' : `${fmt(r.goodputPerSecond)}/s`}, ` +
      `${figure(r.goodputFromFirstPerSecond)}/s first request to last answer; ${figure(r.timeouts)} timeouts, ${figure(r.abandoned)} abandoned; ` +
      `at the target ≤ ${figure(r.peakInFlight)} in flight, latency p50 / p99 ${figure(r.latencyMs.p50)} / ${figure(r.latencyMs.p99)} ms`
    );
  }
  if (r.goodputPerSecond !== undefined) return `goodput ${fmt(r.goodputPerSecond)}/s, ${r.callsPerTask?.toFixed(2)} calls/task`;
  return undefined;
}

/** A run's figures in one line, as it ends (`label`: its case and run). */
export function runLine(r, label) {
  const outcome = r.finished ? `ended after ${fmt((r.doneMs ?? NaN) / 1000, 2)} s` : `not finished (stopped)`;
  const measured = measuredText(r);
  return (
    `${label}: ${outcome}, ${fmt(r.succeeded)} of ${fmt(r.tasks)} succeeded, ${fmt(r.requests)} requests ` +
    `(${r.callsPerTask?.toFixed(2)} a task), busiest 100 ms ${fmt(r.busiest100ms)}, duplicates ${fmt(r.duplicates)}` +
    `${measured === undefined ? '' : `, ${measured}`}, ${JSON.stringify(r.statuses ?? {})}${r.error ? ` — ${r.error}` : ''}`
  );
}
