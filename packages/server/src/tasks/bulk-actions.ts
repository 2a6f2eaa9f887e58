import type { TaskStatus } from '@retryd/core';
import { RetrydError } from '../domain/errors.js';
import type { Page, RetryTask } from '../domain/task.js';

/** What became of one task of a bulk action (replay, cancel): what was done, or the problem it met. */
export type BulkEntry<K extends string> = { taskId: string; result: K } | { taskId: string; result: 'error'; error: RetrydError };

/** One page of a bulk action: a result per task listed, in listing order, and where the next page starts. */
export interface BulkPage<K extends string> {
  results: BulkEntry<K>[];
  nextCursor?: string;
}

/** Which live tasks a bulk cancel takes: one of the two live statuses (default both), one policy, one target. */
export interface LiveTaskFilter {
  status?: typeof TaskStatus.PENDING | typeof TaskStatus.IN_FLIGHT;
  policyId?: string;
  targetKey?: string;
}

/**
 * Acts on each task of a listed page in turn, one result each. A task that changed under the action (cancelled,
 * succeeded, gone) gets its own problem and the others go on; a store that is down (a 5xx) fails the whole call.
 */
export async function actOnPage<K extends string>(listed: Page<RetryTask>, act: (task: RetryTask) => Promise<K>): Promise<BulkPage<K>> {
  const results: BulkEntry<K>[] = [];
  for (const task of listed.items) {
    try {
      results.push({ taskId: task.taskId, result: await act(task) });
    } catch (error) {
      if (!(error instanceof RetrydError) || error.status >= 500) throw error;
      results.push({ taskId: task.taskId, result: 'error', error });
    }
  }
  return listed.nextCursor === undefined ? { results } : { results, nextCursor: listed.nextCursor };
}
