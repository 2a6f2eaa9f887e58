import type { RetryTask } from '../domain/task.js';

/** The statuses a task may be inserted in: PENDING, or IN_FLIGHT for the hand-off (see `Store.insertTasks`). */
export const NEW_TASK_STATUSES: ReadonlySet<RetryTask['status']> = new Set(['PENDING', 'IN_FLIGHT']);

/**
 * Refuses an `insertTasks` call holding a task that is not new (PENDING, or IN_FLIGHT for the hand-off): a task gets
 * to any other status only through the store's named transitions, so a store never holds an ended task that no
 * attempt ended. The service only makes new tasks; a caller that skips it can send another, and the whole call is
 * refused. Tests that need a task already ended insert it through their store harness (`insertStoredTasks`).
 *
 * @throws TypeError naming the task, the field and the rule
 */
export function checkNewTasks(tasks: readonly RetryTask[]): void {
  for (const task of tasks) {
    if (!NEW_TASK_STATUSES.has(task.status)) {
      throw new TypeError(`Expected \`status\` of task ${task.taskId} to be PENDING or IN_FLIGHT (insertTasks takes new tasks); got ${task.status}.`);
    }
  }
}
