import type { TaskStatus } from '@retryd/core';
import {
  CANCEL_AT_ONCE_FROM,
  CANCEL_REQUEST_FROM,
  CANCELLED_STATUS,
  REPLAY_FROM,
  REPLAYED_STATUS,
  RESCHEDULE_FROM,
  RESCHEDULED_STATUS,
} from '../../store/transition-guards.js';

// The guards of the named transitions, as the scripts take them (see store/transition-guards.ts): a script refuses
// exactly the moves core refuses.

/** `from, to` pairs, flattened: every status of `from` leads to `to`. */
function movesTo(from: readonly TaskStatus[], to: TaskStatus): string[] {
  return from.flatMap((status) => [status, to]);
}

/** `cancel-task.lua`'s moves: a cancel applied at once, in the statuses with no attempt in flight (PENDING → CANCELLED). */
export const CANCEL_MOVES: readonly string[] = Object.freeze(movesTo(CANCEL_AT_ONCE_FROM, CANCELLED_STATUS));

/** `request-cancel.lua`'s statuses: a cancel that must wait for the attempt in flight to end (IN_FLIGHT). */
export const REQUEST_CANCEL_FROM: readonly string[] = Object.freeze([...CANCEL_REQUEST_FROM]);

/** `replay-task.lua`'s moves: the dead letters back to a fresh run (FAILED, EXHAUSTED → PENDING). */
export const REPLAY_MOVES: readonly string[] = Object.freeze(movesTo(REPLAY_FROM, REPLAYED_STATUS));

/** `reschedule-task.lua`'s moves: a waiting task due at another time (PENDING → PENDING). */
export const RESCHEDULE_MOVES: readonly string[] = Object.freeze(movesTo(RESCHEDULE_FROM, RESCHEDULED_STATUS));
