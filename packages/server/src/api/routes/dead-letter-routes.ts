import type { FastifyInstance } from 'fastify';
import { TaskStatus } from '@retryd/core';
import type { DeadLetterFilter } from '../../tasks/task-service.js';
import { pageQuery, problemResponses } from '../schemas.js';
import { DEFAULT_MAX_PAGE_BYTES, sendBoundedPage } from '../bounded-page.js';
import { bulkResultsView } from './bulk-results-view.js';
import { admitEveryTask, pageOf, type PageQuery, type RouteDeps } from './route-deps.js';
import { json } from './route-responses.js';
import { POLICY_ID_FILTER, TARGET_KEY_FILTER, taskFilterOf } from './task-filters.js';
import { taskListing } from './task-route-schemas.js';

interface DeadLetterQuery extends PageQuery {
  status?: typeof TaskStatus.FAILED | typeof TaskStatus.EXHAUSTED;
  policyId?: string;
  targetKey?: string;
}

const DEAD_LETTER_FILTER = {
  status: { type: 'string', enum: [TaskStatus.FAILED, TaskStatus.EXHAUSTED], description: 'One of the two dead statuses; both when absent.' },
  policyId: POLICY_ID_FILTER,
  targetKey: TARGET_KEY_FILTER,
} as const;

/** Dead letters: a page of them (`GET /dead-letters`) and the replay of a page matching a filter (`POST /dead-letters/replay`). */
export function registerDeadLetterRoutes(app: FastifyInstance, { taskService, tenantOf, admitTasks = admitEveryTask, maxPageBytes = DEFAULT_MAX_PAGE_BYTES }: RouteDeps): void {
  app.get<{ Querystring: DeadLetterQuery }>(
    '/dead-letters',
    {
      schema: {
        operationId: 'listDeadLetters',
        summary: 'FAILED and EXHAUSTED tasks with their deadLetterReason, newest first',
        tags: ['dead letters'],
        querystring: { type: 'object', additionalProperties: false, properties: { ...DEAD_LETTER_FILTER, ...pageQuery } },
        response: { 200: json('A page of dead tasks', 'TaskPage'), ...problemResponses(400, 503) },
      },
    },
    async (request, reply) => {
      const tenantId = tenantOf(request);
      const filter = taskFilterOf(tenantId, request.query);
      return sendBoundedPage(reply, taskListing((page) => taskService.listDeadLetters(tenantId, page, filter)), pageOf(request.query), maxPageBytes);
    },
  );

  app.post<{ Body: DeadLetterQuery }>(
    '/dead-letters/replay',
    {
      schema: {
        operationId: 'replayDeadLetters',
        summary: 'Re-drive one page of the dead letters matching a filter',
        description:
          'Each listed task is replayed as POST /retry-tasks/{taskId}/replay would (same idempotency key, a fresh ' +
          'attempt budget), with one result each. Replayed tasks leave the dead letters: repeat with nextCursor until ' +
          'there is none to replay every task that matched, each once. A task that changed meanwhile gets its own ' +
          'problem; the others go on.',
        tags: ['dead letters'],
        body: {
          type: 'object',
          additionalProperties: false,
          properties: { ...DEAD_LETTER_FILTER, ...pageQuery, limit: { ...pageQuery.limit, default: 100 } },
        },
        response: { 200: json('One result per dead letter replayed', 'BulkReplayResult'), ...problemResponses(400, 415, 429, 503) },
      },
    },
    async (request) => {
      const tenantId = tenantOf(request);
      const body = request.body;
      const filter: DeadLetterFilter = taskFilterOf(tenantId, body);
      const admit = (count: number) => admitTasks(request, count);
      const { results, nextCursor } = await taskService.replayDeadLetters(tenantId, pageOf(body), filter, admit);
      return {
        results: bulkResultsView(request, results),
        replayed: results.filter((entry) => entry.result === 'replayed').length,
        ...(nextCursor === undefined ? {} : { nextCursor }),
      };
    },
  );
}
