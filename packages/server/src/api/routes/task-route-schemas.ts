import type { RetryTask } from '../../domain/task.js';
import { pageQuery } from '../schemas.js';
import { toTaskSummaryView } from '../views.js';
import type { BoundedListing } from '../bounded-page.js';

/** The path parameters of a task's routes. */
export interface TaskParams {
  taskId: string;
}

/** The `{taskId}` of a task's path. */
export const taskParams = {
  type: 'object',
  required: ['taskId'],
  properties: { taskId: { type: 'string', minLength: 1, maxLength: 128 } },
} as const;

/** The query of a page of a listing with no filter. */
export const pageQuerySchema = { type: 'object', additionalProperties: false, properties: pageQuery } as const;

/** A listing of tasks as pages show them: without their bodies, which the store read all the same. */
export function taskListing(read: BoundedListing<RetryTask>['read']): BoundedListing<RetryTask> {
  return { read, serialize: (task) => JSON.stringify(toTaskSummaryView(task)), unsentBytes: (task) => task.body?.length ?? 0 };
}
