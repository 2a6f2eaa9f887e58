import type { FastifyInstance } from 'fastify';
import { TERMINAL_STATUSES, TaskStatus } from '@retryd/core';
import { parseFinishedBefore } from '../../tasks/finished-task-deletion.js';
import type { LiveTaskFilter } from '../../tasks/bulk-actions.js';
import { pageQuery, problemResponses } from '../schemas.js';
import { bulkResultsView, json, pageOf, POLICY_ID_FILTER, TARGET_KEY_FILTER, taskFilterOf, type PageQuery, type RouteDeps } from './task-routes.js';

/** The JSON schemas of the bulk task routes, named as components of `/openapi.json`. */
export const BULK_TASK_SCHEMAS = [
  {
    $id: 'BulkCancelResult',
    type: 'object',
    required: ['results', 'cancelled', 'cancelRequested'],
    properties: {
      results: {
        type: 'array',
        description:
          'One entry per live task of the page, newest first: cancelled (it was PENDING); cancel_requested (IN_FLIGHT: ' +
          'cancelled when its attempt ends, never retried); or error, with the problem that task got (it ended meanwhile).',
        items: {
          type: 'object',
          required: ['taskId', 'result'],
          properties: {
            taskId: { type: 'string' },
            result: { type: 'string', enum: ['cancelled', 'cancel_requested', 'error'] },
            error: { $ref: 'Problem#' },
          },
        },
      },
      cancelled: { type: 'integer', description: 'How many entries are cancelled.' },
      cancelRequested: { type: 'integer', description: 'How many entries are cancel_requested.' },
      nextCursor: { type: 'string', description: 'Where the next page starts: send it back as cursor, with the same filter.' },
    },
  },
  {
    $id: 'DeletedTasks',
    type: 'object',
    required: ['deleted', 'taskIds'],
    properties: {
      deleted: { type: 'integer', description: 'How many tasks this page deleted (maybe none: tasks that ended later are listed too).' },
      taskIds: { type: 'array', items: { type: 'string' }, description: 'The tasks deleted.' },
      nextCursor: { type: 'string', description: 'Present while more tasks may match: send it back as cursor, with the same filter.' },
    },
  },
] as const;

interface CancelBody extends PageQuery, LiveTaskFilter {}

interface DeleteQuery extends PageQuery {
  status?: TaskStatus[];
  finishedBefore: string;
  targetKey?: string;
}

/** A page of a bulk action: 100 tasks unless told. */
const bulkPage = { ...pageQuery, limit: { ...pageQuery.limit, default: 100 } } as const;

/** Bulk actions on a tenant's tasks: cancel the live ones matching a filter, delete finished ones by hand. */
export function registerBulkTaskRoutes(app: FastifyInstance, { taskService, tenantOf }: RouteDeps): void {
  app.post<{ Body: CancelBody }>(
    '/retry-tasks/cancel',
    {
      schema: {
        operationId: 'cancelTasks',
        summary: 'Cancel one page of the live tasks matching a filter',
        description:
          'Each listed task is cancelled as DELETE /retry-tasks/{taskId} would: a PENDING one at once, an IN_FLIGHT one ' +
          'when its attempt ends (never retried), with one result each. Repeat with nextCursor until there is none to ' +
          'cancel every task that matched. A task that ended meanwhile gets its own problem (409); the others go on.',
        tags: ['tasks'],
        body: {
          type: 'object',
          additionalProperties: false,
          properties: {
            status: { type: 'string', enum: [TaskStatus.PENDING, TaskStatus.IN_FLIGHT], description: 'One of the two live statuses; both when absent.' },
            policyId: POLICY_ID_FILTER,
            targetKey: TARGET_KEY_FILTER,
            ...bulkPage,
          },
        },
        response: { 200: json('One result per live task listed', 'BulkCancelResult'), ...problemResponses(400, 415, 503) },
      },
    },
    async (request) => {
      const tenantId = tenantOf(request);
      const body = request.body;
      const { results, nextCursor } = await taskService.cancelMatching(tenantId, pageOf(body), taskFilterOf(tenantId, body));
      return {
        results: bulkResultsView(request, results),
        cancelled: results.filter((entry) => entry.result === 'cancelled').length,
        cancelRequested: results.filter((entry) => entry.result === 'cancel_requested').length,
        ...(nextCursor === undefined ? {} : { nextCursor }),
      };
    },
  );

  app.delete<{ Querystring: DeleteQuery }>(
    '/retry-tasks',
    {
      schema: {
        operationId: 'deleteTasks',
        summary: 'Delete one page of finished tasks by hand (a tenant admin)',
        description:
          'Lists a page of the tenant\'s tasks in the finished statuses asked for (newest first) and deletes those that ' +
          'ended before finishedBefore, each with its attempts, its idempotency key (free for a new task from then on) ' +
          'and its body, as retention does. A live task (PENDING, IN_FLIGHT) is never deleted, nor one replayed after ' +
          'it was listed. A page may delete fewer than limit tasks, even none: repeat with nextCursor until there is none.',
        tags: ['tasks', 'retention'],
        querystring: {
          type: 'object',
          additionalProperties: false,
          required: ['finishedBefore'],
          properties: {
            status: {
              type: 'array',
              items: { type: 'string', enum: [...TERMINAL_STATUSES] },
              uniqueItems: true,
              description: 'Finished statuses only (repeat the parameter for several); all four when absent.',
            },
            finishedBefore: {
              type: 'string',
              minLength: 1,
              maxLength: 64,
              description: 'Only tasks that ended (their last change) before this time: epoch ms or ISO 8601 with a time zone.',
            },
            targetKey: TARGET_KEY_FILTER,
            ...bulkPage,
          },
        },
        response: { 200: json('The tasks this page deleted', 'DeletedTasks'), ...problemResponses(400, 503) },
      },
      config: { scope: 'admin' },
    },
    async (request) => {
      const tenantId = tenantOf(request);
      const { status, finishedBefore, targetKey } = request.query;
      const filter = {
        finishedBefore: parseFinishedBefore(finishedBefore),
        ...(status === undefined ? {} : { statuses: status }),
        ...(targetKey === undefined ? {} : { targetKey: taskFilterOf(tenantId, { targetKey }).targetKey as string }),
      };
      const report = (error: unknown, context: { operation: string }) =>
        request.log.warn({ event: 'delete_body_error', err: error, ...context }, 'the body of a deleted task could not be deleted; it stays in the blob store');
      const { deleted, nextCursor } = await taskService.deletion.deletePage(tenantId, pageOf(request.query), filter, report);
      return { deleted: deleted.length, taskIds: deleted.map((t) => t.taskId), ...(nextCursor === undefined ? {} : { nextCursor }) };
    },
  );
}
