import { CircuitState, TaskStatus } from '@retryd/core';
import { DUE_COUNT_CAP } from '../store/store.js';
import { SLOW_START_IN_FLIGHT } from './ready-attempt.js';
import type { TargetStatus } from './target-control.js';

/** Why a task that is due is not running. */
export const TaskWaitReasons = {
  /** Its target's breaker is open: no attempt goes until `until`, then probes. */
  BREAKER_OPEN: 'breaker_open',
  /** Its target's breaker is half-open: only probes go until one succeeds; the rest wait their turn. */
  BREAKER_PROBING: 'breaker_probing',
  /** Its target answered with a `Retry-After`: no attempt goes until `until`. */
  RETRY_AFTER: 'retry_after',
  /** Its target's rate (configured or lowered by adaptive throttling) lets the next attempt go at `until`. */
  RATE_LIMIT: 'rate_limit',
  /** Its target has as many attempts in flight as its `maxInFlight` allows. */
  MAX_IN_FLIGHT: 'max_in_flight',
  /** Its target is in slow start (no success of it remembered): 10 attempts in flight until one succeeds. */
  SLOW_START: 'slow_start',
  /** Nothing holds its target: it waits for a free worker, behind the tasks due before it. */
  QUEUED: 'queued',
} as const;
export type TaskWaitReason = (typeof TaskWaitReasons)[keyof typeof TaskWaitReasons];

/** Why a due task waits (see {@link taskWaitOf}). */
export interface TaskWait {
  reason: TaskWaitReason;
  /** When the wait ends, if it is known (epoch ms), or null. */
  until: number | null;
  /** The same in words, with the figures that explain it. */
  detail: string;
}

/** What {@link taskWaitOf} reads of a task. */
export interface WaitingTask {
  status: TaskStatus;
  nextAttemptAt: number | null;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Why a task that is due at `now` is not running, from its target's status as `TargetControl.getTarget` gives it;
 * null for a task that is not PENDING or not due yet (its `nextAttemptAt` says when it runs). The first cause that
 * applies is given: a hold (the breaker's or a `Retry-After`'s, whichever ends later), half-open probing, the
 * in-flight limit, the rate; with none, the task is queued for a worker.
 *
 * Without it, a task held by its target's breaker shows a "next attempt" in the past and nothing saying why.
 */
export function taskWaitOf(task: WaitingTask, status: TargetStatus | undefined, now: number): TaskWait | null {
  if (task.status !== TaskStatus.PENDING || task.nextAttemptAt === null || task.nextAttemptAt > now) return null;
  const queued: TaskWait = { reason: TaskWaitReasons.QUEUED, until: null, detail: 'due; waiting for a free worker' };
  if (status === undefined) return queued;
  const { target, breaker } = status;
  const breakerUntil = breaker.state === CircuitState.OPEN && breaker.openUntil !== null && breaker.openUntil > now ? breaker.openUntil : null;
  const heldUntil = target.heldUntil !== null && target.heldUntil > now ? target.heldUntil : null;
  if (heldUntil !== null && (breakerUntil === null || heldUntil > breakerUntil)) {
    // Holds only extend: a store hold past the breaker's is a Retry-After (or another instance's later opening).
    return { reason: TaskWaitReasons.RETRY_AFTER, until: heldUntil, detail: `target paused by a Retry-After until ${iso(heldUntil)}` };
  }
  if (breakerUntil !== null) {
    return { reason: TaskWaitReasons.BREAKER_OPEN, until: breakerUntil, detail: `target's circuit breaker open until ${iso(breakerUntil)}, then probes` };
  }
  if (breaker.state === CircuitState.HALF_OPEN) {
    return {
      reason: TaskWaitReasons.BREAKER_PROBING,
      until: null,
      detail: `target's circuit breaker half-open: only probes go (${target.inFlight} in flight) until one succeeds`,
    };
  }
  // Before the rate: a store may give a target at its in-flight limit a throttledUntil too (its earliest lease expiry).
  if (target.maxInFlight !== null && target.inFlight >= target.maxInFlight) {
    const configured = status.settings.maxInFlight;
    if (target.maxInFlight === SLOW_START_IN_FLIGHT && (configured === null || configured > SLOW_START_IN_FLIGHT)) {
      return {
        reason: TaskWaitReasons.SLOW_START,
        until: null,
        detail: `target in slow start: ${SLOW_START_IN_FLIGHT} attempts in flight until one of its calls succeeds`,
      };
    }
    return { reason: TaskWaitReasons.MAX_IN_FLIGHT, until: null, detail: `target at its limit of ${target.maxInFlight} attempts in flight` };
  }
  if (target.throttledUntil !== null && target.throttledUntil > now) {
    const rate = status.allowedRatePerSecond ?? target.ratePerSecond;
    const paced = rate === null ? 'paced' : `paced at ${rate}/s`;
    return { reason: TaskWaitReasons.RATE_LIMIT, until: target.throttledUntil, detail: `target ${paced}; next attempt allowed at ${iso(target.throttledUntil)}` };
  }
  const behind = target.dueTasks > 1 ? `; ${target.dueTasks >= DUE_COUNT_CAP ? `at least ${DUE_COUNT_CAP}` : target.dueTasks} tasks due on its target` : '';
  return { ...queued, detail: `${queued.detail}${behind}` };
}
