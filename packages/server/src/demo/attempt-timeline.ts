import { textTable } from '../terminal/text-table.js';

/** The fields of an attempt (the API's `Attempt`) the timeline shows. */
export interface TimelineAttempt {
  attemptNumber: number;
  startedAt: number;
  durationMs: number;
  responseStatus: number | null;
  errorMessage: string | null;
  outcome: string;
  nextAttemptAt: number | null;
}

/** `1.25 s` under a minute, `312 ms` under a second. */
function span(ms: number): string {
  return ms < 1_000 ? `${Math.round(ms)} ms` : `${(ms / 1_000).toFixed(2)} s`;
}

/** `20:14:03.118` UTC: the clock time of an attempt, to the millisecond. */
function clockTime(ms: number): string {
  return new Date(ms).toISOString().slice(11, 23);
}

/**
 * A task's attempts as a table: when each started (clock time, UTC, and since `origin`, the enqueue), how long it took,
 * what the target answered, and what came next (the retry's delay, or the end).
 *
 * @example
 * ```text
 * attempt  at (UTC)      since enqueue  took  answer  then
 * -------  ------------  -------------  ----  ------  -----------------
 *       1  20:14:03.118          12 ms  4 ms     503  retry in 312 ms
 * ```
 */
export function attemptTimeline(attempts: readonly TimelineAttempt[], origin: number): string {
  const rows = attempts.map((a) => [
    String(a.attemptNumber),
    clockTime(a.startedAt),
    span(Math.max(0, a.startedAt - origin)),
    span(a.durationMs),
    a.responseStatus === null ? (a.errorMessage ?? 'no answer') : String(a.responseStatus),
    a.nextAttemptAt === null ? a.outcome.toLowerCase() : `retry in ${span(Math.max(0, a.nextAttemptAt - a.startedAt - a.durationMs))}`,
  ]);
  const headers = ['attempt', 'at (UTC)', 'since enqueue', 'took', 'answer', 'then'];
  // Numbers right-aligned under their headers; the last column is words, left-aligned.
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const aligned = rows.map((r) => r.map((cell, i) => (i < r.length - 1 ? cell.padStart(widths[i] as number) : cell)));
  return textTable(headers, aligned, headers.length);
}
