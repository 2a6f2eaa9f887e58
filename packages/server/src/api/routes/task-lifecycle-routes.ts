import type { FastifyInstance } from 'fastify';
import { problemResponses } from '../schemas.js';
import { toTaskView } from '../views.js';
import { admitEveryTask, type RouteDeps } from './route-deps.js';
import { json } from './route-responses.js';
import { taskParams, type TaskParams } from './task-route-schemas.js';

/** `DELETE /retry-tasks/{taskId}`: cancel a task, at once or when its attempt in flight ends. */
export function registerCancelTaskRoute(app: FastifyInstance, { taskService, tenantOf, waiters }: RouteDeps): void {
  app.delete<{ Params: TaskParams }>(
    '/retry-tasks/:taskId',
    {
      schema: {
        operationId: 'cancelTask',
        summary: 'Cancel a task',
        description: 'PENDING: cancelled (200). IN_FLIGHT: cancelled when its attempt ends and never retried (202). Final: 409.',
        tags: ['tasks'],
        params: taskParams,
        response: {
          200: json('Cancelled', 'Task'),
          202: json('Will be cancelled when the attempt in flight ends', 'Task'),
          ...problemResponses(404, 409, 503),
        },
      },
    },
    async (request, reply) => {
      const tenantId = tenantOf(request);
      const result = await taskService.cancel(tenantId, request.params.taskId);
      if (result.kind === 'cancelled') waiters?.ended(tenantId, request.params.taskId);
      reply.code(result.kind === 'cancelled' ? 200 : 202);
      return toTaskView(result.task);
    },
  );
}

/** `POST /retry-tasks/{taskId}/replay`: re-drive a dead letter with a fresh attempt budget. */
export function registerReplayTaskRoute(app: FastifyInstance, { taskService, tenantOf, admitTasks = admitEveryTask }: RouteDeps): void {
  app.post<{ Params: TaskParams }>(
    '/retry-tasks/:taskId/replay',
    {
      schema: {
        operationId: 'replayTask',
        summary: 'Re-drive a FAILED or EXHAUSTED task',
        description:
          'Same idempotency key, a fresh attempt budget, history kept. A task already running again is returned as ' +
          'is, so replaying twice runs it once. SUCCEEDED and CANCELLED: 409.',
        tags: ['dead letters'],
        params: taskParams,
        response: { 200: json('The re-driven task', 'Task'), ...problemResponses(404, 409, 503) },
      },
    },
    async (request) => {
      await admitTasks(request, 1);
      return toTaskView((await taskService.replay(tenantOf(request), request.params.taskId)).task);
    },
  );
}
