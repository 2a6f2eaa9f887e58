import { W7_CAPACITY_PER_SECOND, W7_DEAD_CALLS_AIM, W7_SLOW_CAPACITY_PER_SECOND, W7Aim } from './w7-workload.js';

/** What an aim reads of a run. */
export interface AimFigures {
  finished: boolean;
  timeMs: number;
  calls: number;
  callsPerTask: number;
  goodputPerSecond: number | null;
  /** Attempts that ran out of the attempt timeout. */
  timeouts: number;
  /** Case g: the good targets' lag p99 ÷ theirs with the bad target answering at once; null for the other cases. */
  goodLagRatio: number | null;
}

/** Within this many times none's time (WORKLOADS.md W7, cases a and b). */
export const NEAR_NONE_TIME = 1.2;
/** Goodput of at least this share of the capacity, at most {@link OVERLOAD_CALLS_PER_TASK} calls per task (case d). */
export const OVERLOAD_GOODPUT_SHARE = 0.9;
export const OVERLOAD_CALLS_PER_TASK = 1.2;
/** Case e: goodput of at least this share of the slow downstream's capacity. */
export const SLOW_GOODPUT_SHARE = 0.9;
/**
 * Case g: the good targets' lag p99 within this many times theirs with the bad target answering at once like them. As
 * a and b's {@link NEAR_NONE_TIME}: a ratio, since the lag itself is the backlog's (every task due at 0), not a call's.
 */
export const OTHERS_LAG_RATIO = 1.2;

/** Each aim as the table states it. */
export const AIM_TEXT: Readonly<Record<W7Aim, string>> = Object.freeze({
  'near-none': `time ≤ ${NEAR_NONE_TIME}× none, calls/task ≤ none`,
  'sooner-with-fewer-calls': 'time ≤ none, calls/task < none',
  goodput: `goodput ≥ ${OVERLOAD_GOODPUT_SHARE * W7_CAPACITY_PER_SECOND}/s, calls/task ≤ ${OVERLOAD_CALLS_PER_TASK}`,
  'few-calls': `≤ ${W7_DEAD_CALLS_AIM} calls in the hour`,
  'goodput-no-timeouts': `goodput ≥ ${SLOW_GOODPUT_SHARE * W7_SLOW_CAPACITY_PER_SECOND}/s, no timeouts`,
  'others-unaffected': `good targets' lag p99 ≤ ${OTHERS_LAG_RATIO}× without the bad one`,
});

/**
 * Whether a run met its case's aim beside `none`'s run of the same case (as bench/service/w7.mjs judges it): true, false,
 * or null when it cannot be told (none did not finish, so there is no time to compare with).
 */
export function aimMet(aim: W7Aim, run: AimFigures, none: AimFigures): boolean | null {
  switch (aim) {
    case W7Aim.NEAR_NONE:
      if (!run.finished) return false;
      if (!none.finished) return null;
      return run.timeMs <= NEAR_NONE_TIME * none.timeMs && run.callsPerTask <= none.callsPerTask;
    case W7Aim.SOONER_WITH_FEWER_CALLS:
      if (!run.finished) return false;
      if (!none.finished) return null;
      return run.timeMs <= none.timeMs && run.callsPerTask < none.callsPerTask;
    case W7Aim.GOODPUT:
      return (run.goodputPerSecond ?? 0) >= OVERLOAD_GOODPUT_SHARE * W7_CAPACITY_PER_SECOND && run.callsPerTask <= OVERLOAD_CALLS_PER_TASK;
    case W7Aim.FEW_CALLS:
      return run.calls <= W7_DEAD_CALLS_AIM;
    case W7Aim.GOODPUT_NO_TIMEOUTS:
      return (run.goodputPerSecond ?? 0) >= SLOW_GOODPUT_SHARE * W7_SLOW_CAPACITY_PER_SECOND && run.timeouts === 0;
    case W7Aim.OTHERS_UNAFFECTED:
      return run.goodLagRatio === null ? null : run.goodLagRatio <= OTHERS_LAG_RATIO;
  }
}

/**
 * First successes per second while the backlog lasted (bench/service/w7.mjs's goodput): from the start until all but a
 * second's capacity of the tasks had succeeded, since the tail after that is the last tasks' backoff, not the
 * target's capacity. `successTimes` in ascending order.
 */
export function goodputPerSecond(successTimes: readonly number[], tasks: number, capacityPerSecond: number): number {
  const upTo = Math.min(successTimes.length, tasks > capacityPerSecond ? tasks - capacityPerSecond : tasks);
  if (upTo === 0) return 0;
  return (upTo * 1_000) / Math.max(successTimes[upTo - 1] as number, 1);
}

/** The nearest-rank 99th percentile of `values` (any order; null when empty). */
export function p99(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.ceil(0.99 * sorted.length) - 1] as number;
}
