import type { FastifyInstance } from 'fastify';
import { TaskStatus } from '@retryd/core';
import type { AttemptLog } from '../../domain/task.js';
import { ENQUEUE_LIMITS, IDEMPOTENCY_KEY_PATTERN } from '../../tasks/enqueue-input.js';
import { pageQuery, problemResponses } from '../schemas.js';
import { toAttemptView } from '../views.js';
import { DEFAULT_MAX_PAGE_BYTES, sendBoundedPage, type BoundedListing } from '../bounded-page.js';
import { pageOf, type PageQuery, type RouteDeps } from './route-deps.js';
import { json } from './route-responses.js';
import { targetRefOf } from './target-routes.js';
import { POLICY_ID_FILTER, TARGET_KEY_FILTER } from './task-filters.js';
import { pageQuerySchema, taskListing, taskParams, type TaskParams } from './task-route-schemas.js';

interface TaskListQuery extends PageQuery {
  status?: TaskStatus;
  policyId?: string;
  targetKey?: string;
  idempotencyKey?: string;
}
/** `GET /retry-tasks`: a page of tasks, newest first, by status, policy, target or idempotency key. */
export function registerTaskListRoute(app: FastifyInstance, { taskService, tenantOf, maxPageBytes = DEFAULT_MAX_PAGE_BYTES }: RouteDeps): void {
  app.get<{ Querystring: TaskListQuery }>(
    '/retry-tasks',
    {
      schema: {
        operationId: 'listTasks',
        summary: 'List tasks, newest first',
        tags: ['tasks'],
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            status: { type: 'string', enum: Object.values(TaskStatus) },
            policyId: POLICY_ID_FILTER,
            targetKey: TARGET_KEY_FILTER,
            idempotencyKey: {
              type: 'string',
              minLength: 1,
              maxLength: ENQUEUE_LIMITS.keyLength,
              pattern: IDEMPOTENCY_KEY_PATTERN.source,
              description: 'Only the task holding this idempotency key (at most one: keys are unique in a tenant).',
            },
            ...pageQuery,
          },
        },
        response: { 200: json('A page of tasks', 'TaskPage'), ...problemResponses(400, 503) },
      },
    },
    async (request, reply) => {
      const { status, policyId, targetKey, idempotencyKey } = request.query;
      const tenantId = tenantOf(request);
      const filter = {
        tenantId,
        ...(status === undefined ? {} : { status }),
        ...(policyId === undefined ? {} : { policyId }),
        ...(targetKey === undefined ? {} : { targetKey: targetRefOf(tenantId, targetKey).targetKey }),
        ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
      };
      return sendBoundedPage(reply, taskListing((page) => taskService.listTasks({ ...filter, ...page })), pageOf(request.query), maxPageBytes);
    },
  );
}

/** `GET /retry-tasks/{taskId}/attempts`: a page of a task's attempt log, oldest first. */
export function registerAttemptListRoute(app: FastifyInstance, { taskService, tenantOf, maxPageBytes = DEFAULT_MAX_PAGE_BYTES }: RouteDeps): void {
  app.get<{ Params: TaskParams; Querystring: PageQuery }>(
    '/retry-tasks/:taskId/attempts',
    {
      schema: {
        operationId: 'listAttempts',
        summary: "A task's attempt log, oldest first",
        tags: ['tasks'],
        params: taskParams,
        querystring: pageQuerySchema,
        response: { 200: json('A page of attempts', 'AttemptPage'), ...problemResponses(400, 404, 503) },
      },
    },
    async (request, reply) => {
      const tenantId = tenantOf(request);
      const { taskId } = request.params;
      const listing: BoundedListing<AttemptLog> = {
        read: (page) => taskService.listAttempts(tenantId, taskId, page),
        serialize: (attempt) => JSON.stringify(toAttemptView(attempt)),
      };
      return sendBoundedPage(reply, listing, pageOf(request.query), maxPageBytes);
    },
  );
}
