import { TaskEvent, transition } from '@retryd/core';
import type { RetryTask } from '../domain/task.js';
import type { TargetRef } from '../store/store.js';

/** Slots a {@link HandOff} promised, and the lease to write on the tasks that take them. */
export interface HandOffGrant {
  /**
   * Which of the tasks asked about may be inserted leased to the engine: their positions in the list given to
   * `reserve`, ascending, one slot each (none: they all wait for a claim as usual).
   */
  indices: readonly number[];
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
  /**
   * Reserves a free slot for each of these due tasks' targets it takes, in order (fewer, or none, when the engine is
   * busy or not running, or a target is held, limited or behind a breaker that is not closed: those go through the
   * claim gate). O(1) per task.
   */
  reserve(targets: readonly TargetRef[]): HandOffGrant;
  /** Takes over tasks that were inserted with the grant's lease; each uses one reserved slot. */
  adopt(tasks: readonly RetryTask[]): void;
  /** Gives back the reserved slots of these tasks' targets, which no task used (a duplicate key, a failed write). */
  giveBack(targets: readonly TargetRef[]): void;
  /**
   * Gets the targets ready before their tasks are written: undefined when they are (the common case, no promise made),
   * else a promise of it. A target this instance never met gets its protection read and its gate set first (a slow
   * start), so that the first claims of its tasks obey it.
   */
  prepare?(targets: readonly TargetRef[]): Promise<void> | undefined;
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
