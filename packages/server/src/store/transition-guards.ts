import { DEAD_LETTER_STATUSES, TERMINAL_STATUSES, TaskEvent, type TaskStatus, statusesAllowing, transition } from '@retryd/core';

// The statuses each named transition of the port starts from and leads to, read from core's lifecycle table and
// never typed out: every store writes its guards (SQL `WHERE`, Lua checks) from these, so a change to the lifecycle
// changes every guard with it, and a store refuses exactly the moves core refuses.

/** The one status claims take tasks from (PENDING): the statuses that allow `claim`. */
export const DUE_STATUS: TaskStatus = onlyStatus(statusesAllowing(TaskEvent.CLAIM), TaskEvent.CLAIM);

/** What a claim makes of a task (IN_FLIGHT): the one status that holds a lease, which completions are fenced by. */
export const LEASED_STATUS: TaskStatus = transition(DUE_STATUS, TaskEvent.CLAIM);

/** Where `releaseLeases` hands a leased task back to (PENDING), as a lapsed lease would go. */
export const RELEASED_STATUS: TaskStatus = transition(LEASED_STATUS, TaskEvent.LEASE_EXPIRED);

/** `cancelTask` starts from every status that allows `cancel` without an attempt running (PENDING)… */
export const CANCEL_AT_ONCE_FROM: readonly TaskStatus[] = Object.freeze(
  statusesAllowing(TaskEvent.CANCEL).filter((s) => s !== LEASED_STATUS),
);
/** …and leads to CANCELLED. */
export const CANCELLED_STATUS: TaskStatus = commonTarget(CANCEL_AT_ONCE_FROM, TaskEvent.CANCEL);

/** `requestCancel` starts from the leased status when it allows `cancel` (IN_FLIGHT; the cancel applies later). */
export const CANCEL_REQUEST_FROM: readonly TaskStatus[] = Object.freeze(
  statusesAllowing(TaskEvent.CANCEL).filter((s) => s === LEASED_STATUS),
);

/** `replayTask` starts from the dead letters (FAILED, EXHAUSTED)… */
export const REPLAY_FROM: readonly TaskStatus[] = DEAD_LETTER_STATUSES;
/** …and leads to PENDING. */
export const REPLAYED_STATUS: TaskStatus = commonTarget(REPLAY_FROM, TaskEvent.REPLAY);

/** `rescheduleTask` starts from the statuses that allow `reschedule` (PENDING: a task waiting for its attempt)… */
export const RESCHEDULE_FROM: readonly TaskStatus[] = Object.freeze(statusesAllowing(TaskEvent.RESCHEDULE));
/** …and leaves it in the status it leads to (PENDING), due at another time. */
export const RESCHEDULED_STATUS: TaskStatus = commonTarget(RESCHEDULE_FROM, TaskEvent.RESCHEDULE);

/** `deleteFinishedTasks` deletes the finished tasks only (SUCCEEDED, FAILED, EXHAUSTED, CANCELLED): no attempt will run. */
export const FINISHED_STATUSES: readonly TaskStatus[] = TERMINAL_STATUSES;

function onlyStatus(statuses: readonly TaskStatus[], event: TaskEvent): TaskStatus {
  const [status, ...others] = statuses;
  if (status === undefined || others.length > 0) {
    throw new Error(`The store port expects exactly one status to allow "${event}", not [${statuses.join(', ')}].`);
  }
  return status;
}

/** Where `event` leads from each of `from`, which must be one status for all (a guard sets one status). */
function commonTarget(from: readonly TaskStatus[], event: TaskEvent): TaskStatus {
  return onlyStatus([...new Set(from.map((status) => transition(status, event)))], event);
}
