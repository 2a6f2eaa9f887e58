import { MAX_DELETE_BATCH, type ListedTask } from './store.js';

/**
 * Refuses a `deleteFinishedTasks` call of more than {@link MAX_DELETE_BATCH} tasks (the service sends a page at a time,
 * so only a caller that skips it can).
 *
 * @throws Error naming the call and the bound
 */
export function checkDeleteBatch(tasks: readonly ListedTask[]): void {
  if (tasks.length > MAX_DELETE_BATCH) throw new Error(`deleteFinishedTasks takes at most ${MAX_DELETE_BATCH} tasks a call, got ${tasks.length}.`);
}
