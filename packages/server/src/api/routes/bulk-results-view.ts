import type { FastifyRequest } from 'fastify';
import type { Problem } from '../../domain/errors.js';
import type { BulkEntry } from '../../tasks/bulk-actions.js';
import { logProblem } from '../problem-handler.js';

/** The results of a page of a bulk action as the API shows them: each problem as problem details, logged as a whole request's would be. */
export function bulkResultsView<K extends string>(request: FastifyRequest, results: readonly BulkEntry<K>[]): { taskId: string; result: K | 'error'; error?: Problem }[] {
  return results.map((entry) =>
    'error' in entry
      ? { taskId: entry.taskId, result: 'error', error: logProblem(request, entry.error, entry.error.toProblem()) }
      : { taskId: entry.taskId, result: entry.result },
  );
}
