import { TaskEvent, transition } from '@retryd/core';
import type { RetryTask } from '../domain/task.js';

/** Slots a {@link HandOff} promised, and the lease to write on the tasks that take them. */
export interface HandOffGrant {
  /** How many tasks may be inserted leased to the engine (0: none; they wait for a claim as usual). */
  count: number;
  workerId: string;
  leaseMs: number;
}

/**
 * The local engine, as the enqueue sees it: tasks due at once can be inserted already leased to it, in the
 * enqueue's own transaction, and handed over once that commits. Such a task skips a claim — a second commit, or a
 * round trip to a networked store — on its way to its first attempt. Implemented by `Engine`.
 *
 * Every grant is settled: each slot is either used by an adopted task or given back.
 */
export interface HandOff {
  /** Reserves up to `wanted` free slots (fewer, or none, when the engine is busy or not running). */
  reserve(wanted: number): HandOffGrant;
  /** Takes over tasks that were inserted with the grant's lease; each uses one reserved slot. */
  adopt(tasks: readonly RetryTask[]): void;
  /** Gives back reserved slots no task used (a duplicate key, a failed write). */
  giveBack(count: number): void;
}

/** `task` as a claim by the grant's worker at `now` leaves it: IN_FLIGHT, leased, its fencing token raised. */
export function leasedTo(task: RetryTask, grant: HandOffGrant, now: number): RetryTask {
  return {
    ...task,
    status: transition(task.status, TaskEvent.CLAIM),
    leaseOwner: grant.workerId,
    leaseExpiresAt: now + grant.leaseMs,
    fencingToken: task.fencingToken + 1,
  };
}
