/**
 * The task lifecycle as an explicit state machine: statuses, events, the transition table and its checks.
 * @packageDocumentation
 */
export { TaskStatus, TaskEvent } from './task-status.js';
export { IllegalTransitionError } from './illegal-transition-error.js';
export {
  TASK_TRANSITIONS,
  TERMINAL_STATUSES,
  canTransition,
  isTerminal,
  transition,
  type TaskTransitionTable,
} from './task-transitions.js';
