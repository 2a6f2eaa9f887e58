import { IllegalTransitionError } from './illegal-transition-error.js';
import { TaskEvent, TaskStatus } from './task-status.js';

/** Each status's legal events and where they lead; an event missing from a row is illegal there. */
export type TaskTransitionTable = {
  readonly [S in TaskStatus]: { readonly [E in TaskEvent]?: TaskStatus };
};

/**
 * The task lifecycle, the single source of truth for which moves are legal. Stores only apply the status
 * that {@link transition} returns; they never decide one.
 *
 * ```text
 *       ┌───────── retry, lease_expired ─────────┐
 *       ▼                                        │
 *    PENDING ─────────── claim ─────────────▶ IN_FLIGHT ── succeed ──▶ SUCCEEDED  (final)
 *     │  ▲                                     │ │ │
 *     │  │                                     │ │ └──── fail ──────▶ FAILED ─────┐
 *     │  │                                     │ └────── exhaust ───▶ EXHAUSTED ──┤
 *     │  └─────────────── replay ──────────────┼──────────────────────────────────┘
 *     │                                        │ cancel (applied when the attempt ends)
 *     └── cancel ────▶ CANCELLED (final) ◀─────┘
 *
 *    PENDING ── reschedule ──▶ PENDING   (an operator moves its due time: run now, or at a given time)
 * ```
 *
 * | from        | claim     | succeed   | retry   | fail   | exhaust   | cancel    | lease_expired | replay  | reschedule |
 * | ----------- | --------- | --------- | ------- | ------ | --------- | --------- | ------------- | ------- | ---------- |
 * | PENDING     | IN_FLIGHT |           |         |        |           | CANCELLED |               |         | PENDING    |
 * | IN_FLIGHT   |           | SUCCEEDED | PENDING | FAILED | EXHAUSTED | CANCELLED | PENDING       |         |            |
 * | SUCCEEDED   |           |           |         |        |           |           |               |         |            |
 * | FAILED      |           |           |         |        |           |           |               | PENDING |            |
 * | EXHAUSTED   |           |           |         |        |           |           |               | PENDING |            |
 * | CANCELLED   |           |           |         |        |           |           |               |         |            |
 *
 * A `cancel` requested while IN_FLIGHT cannot stop a request already on the wire; it is applied
 * (IN_FLIGHT —cancel→ CANCELLED) when the attempt ends. `lease_expired` hands back a task whose worker
 * went silent: its attempt may or may not have reached the server, which is why retried calls carry an
 * idempotency key.
 *
 * @example
 * ```ts
 * TASK_TRANSITIONS.IN_FLIGHT.retry; // 'PENDING'
 * TASK_TRANSITIONS.SUCCEEDED.retry; // undefined: illegal
 * ```
 */
export const TASK_TRANSITIONS: TaskTransitionTable = Object.freeze({
  [TaskStatus.PENDING]: Object.freeze({
    [TaskEvent.CLAIM]: TaskStatus.IN_FLIGHT,
    [TaskEvent.CANCEL]: TaskStatus.CANCELLED,
    [TaskEvent.RESCHEDULE]: TaskStatus.PENDING,
  }),
  [TaskStatus.IN_FLIGHT]: Object.freeze({
    [TaskEvent.SUCCEED]: TaskStatus.SUCCEEDED,
    [TaskEvent.RETRY]: TaskStatus.PENDING,
    [TaskEvent.FAIL]: TaskStatus.FAILED,
    [TaskEvent.EXHAUST]: TaskStatus.EXHAUSTED,
    [TaskEvent.CANCEL]: TaskStatus.CANCELLED,
    [TaskEvent.LEASE_EXPIRED]: TaskStatus.PENDING,
  }),
  [TaskStatus.SUCCEEDED]: Object.freeze({}),
  [TaskStatus.FAILED]: Object.freeze({ [TaskEvent.REPLAY]: TaskStatus.PENDING }),
  [TaskStatus.EXHAUSTED]: Object.freeze({ [TaskEvent.REPLAY]: TaskStatus.PENDING }),
  [TaskStatus.CANCELLED]: Object.freeze({}),
});

/**
 * The statuses in which a task is finished: no worker will attempt it again on its own. FAILED and
 * EXHAUSTED are terminal but not final (an operator may `replay` them); SUCCEEDED and CANCELLED are both.
 */
export const TERMINAL_STATUSES: readonly TaskStatus[] = Object.freeze([
  TaskStatus.SUCCEEDED,
  TaskStatus.FAILED,
  TaskStatus.EXHAUSTED,
  TaskStatus.CANCELLED,
]);

/**
 * The statuses in which a task is live: waiting for an attempt or in one. Every other status is terminal.
 * Stores index live tasks apart from ended ones through this set (and nowhere else).
 */
export const LIVE_STATUSES: readonly TaskStatus[] = Object.freeze([TaskStatus.PENDING, TaskStatus.IN_FLIGHT]);

/**
 * The dead letters: terminal statuses that an operator may `replay` (FAILED and EXHAUSTED). The dead-letter
 * listing and the store's replay guard both read this set.
 */
export const DEAD_LETTER_STATUSES: readonly TaskStatus[] = Object.freeze(
  (Object.keys(TASK_TRANSITIONS) as TaskStatus[]).filter((s) => Object.hasOwn(TASK_TRANSITIONS[s], TaskEvent.REPLAY)),
);

/**
 * The statuses in which `event` is legal, in table order: what a store's guard for that move must allow.
 *
 * @example
 * ```ts
 * statusesAllowing('replay'); // ['FAILED', 'EXHAUSTED']
 * statusesAllowing('claim');  // ['PENDING']
 * ```
 */
export function statusesAllowing(event: TaskEvent): readonly TaskStatus[] {
  return (Object.keys(TASK_TRANSITIONS) as TaskStatus[]).filter((s) => Object.hasOwn(TASK_TRANSITIONS[s], event));
}

/** Whether a task in `status` is live (see {@link LIVE_STATUSES}): PENDING or IN_FLIGHT. */
export function isLive(status: TaskStatus): boolean {
  return status === TaskStatus.PENDING || status === TaskStatus.IN_FLIGHT;
}

// Statuses and events often come from a database row or a request body. Looking them up with hasOwn
// keeps a value such as "constructor" or "__proto__" from finding Object.prototype's members.
function nextStatus(status: TaskStatus, event: TaskEvent): TaskStatus | undefined {
  if (!Object.hasOwn(TASK_TRANSITIONS, status)) return undefined;
  const row = TASK_TRANSITIONS[status];
  return Object.hasOwn(row, event) ? row[event] : undefined;
}

/**
 * The status a task moves to when `event` happens in `status`. Pure.
 *
 * @throws IllegalTransitionError (code `ILLEGAL_TRANSITION`) when the table has no such move
 * @example
 * ```ts
 * transition('IN_FLIGHT', 'retry'); // 'PENDING'
 * transition('SUCCEEDED', 'retry'); // throws: cannot apply event "retry" to a task in status SUCCEEDED
 * ```
 */
export function transition(status: TaskStatus, event: TaskEvent): TaskStatus {
  const next = nextStatus(status, event);
  if (next === undefined) throw new IllegalTransitionError(status, event);
  return next;
}

/**
 * Whether `event` is legal in `status`, i.e. whether {@link transition} would return rather than throw.
 *
 * @example
 * ```ts
 * canTransition('PENDING', 'cancel'); // true
 * canTransition('CANCELLED', 'replay'); // false
 * ```
 */
export function canTransition(status: TaskStatus, event: TaskEvent): boolean {
  return nextStatus(status, event) !== undefined;
}

/**
 * Whether a task in `status` is finished (see {@link TERMINAL_STATUSES}): true for SUCCEEDED, FAILED,
 * EXHAUSTED and CANCELLED; false for PENDING and IN_FLIGHT.
 *
 * @example
 * ```ts
 * isTerminal('EXHAUSTED'); // true (though `replay` may restart it)
 * ```
 */
export function isTerminal(status: TaskStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}
