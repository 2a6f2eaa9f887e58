/**
 * The task lifecycle as an explicit state machine: statuses, events, the transition table and its checks.
 * @packageDocumentation
 */
export { TaskStatus, TaskEvent } from './task-status.js';
export { IllegalTransitionError } from './illegal-transition-error.js';
export {
  TASK_TRANSITIONS,
  TERMINAL_STATUSES,
  LIVE_STATUSES,
  DEAD_LETTER_STATUSES,
  statusesAllowing,
  isLive,
  canTransition,
  isTerminal,
  transition,
  type TaskTransitionTable,
} from './task-transitions.js';
