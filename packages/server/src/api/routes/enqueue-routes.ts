import type { FastifyInstance, FastifyRequest } from 'fastify';
import { RetrydError } from '../../domain/errors.js';
import { logProblem } from '../problem-handler.js';
import { prefersMinimal } from '../prefer-header.js';
import { documentBody, problemResponses } from '../schemas.js';
import { toTaskView } from '../views.js';
import { admitEveryTask, type RouteDeps } from './route-deps.js';
import { json, LOCATION_HEADER } from './route-responses.js';

function traceparentOf(request: FastifyRequest): string | undefined {
  const value = request.headers.traceparent;
  return typeof value === 'string' ? value : undefined;
}

/** Enqueue: one task (`POST /retry-tasks`) or up to 1,000 in one transaction (`POST /retry-tasks/batch`). */
export function registerEnqueueRoutes(app: FastifyInstance, { taskService, tenantOf, admitTasks = admitEveryTask }: RouteDeps): void {
  app.post(
    '/retry-tasks',
    {
      schema: {
        operationId: 'enqueueTask',
        summary: 'Enqueue a task',
        description:
          'Idempotent by idempotencyKey: the same key with the same request answers 200 with the existing task and ' +
          '`Idempotent-Replayed: true`; with a different request, 422.',
        tags: ['tasks'],
        response: {
          201: json('Created', 'Task', LOCATION_HEADER),
          200: json('An identical earlier request created this task (Idempotent-Replayed: true)', 'Task', {
            'Idempotent-Replayed': { type: 'string', enum: ['true'], description: 'This answer is the task an earlier identical request created.' },
          }),
          ...problemResponses(400, 413, 415, 422, 503),
        },
      },
      config: documentBody('EnqueueRequest'),
    },
    async (request, reply) => {
      await admitTasks(request, 1);
      const result = await taskService.enqueue(tenantOf(request), request.body, { traceparent: traceparentOf(request) });
      if (result.kind === 'replayed') reply.code(200).header('idempotent-replayed', 'true');
      else reply.code(201).header('location', `/retry-tasks/${result.task.taskId}`);
      return toTaskView(result.task);
    },
  );

  app.post(
    '/retry-tasks/batch',
    {
      schema: {
        operationId: 'enqueueTasks',
        summary: 'Enqueue up to 1,000 tasks in one transaction',
        description: 'One result per task, in order; an invalid entry gets its own problem and the others are still enqueued.',
        tags: ['tasks'],
        headers: {
          type: 'object',
          properties: {
            prefer: {
              type: 'string',
              description:
                'RFC 7240. `return=minimal`: each created or replayed entry carries its `taskId` instead of the whole ' +
                'task (about a tenth of the bytes, for callers that load a backlog and keep only the ids).',
            },
          },
        },
        response: {
          200: json('One result per task', 'BatchResult', {
            'Preference-Applied': { type: 'string', enum: ['return=minimal'], description: 'Present when the answer honours Prefer: return=minimal.' },
          }),
          ...problemResponses(400, 413, 415, 503),
        },
      },
      config: documentBody('BatchRequest'),
    },
    async (request, reply) => {
      const body = request.body;
      if (typeof body !== 'object' || body === null || Array.isArray(body) || Object.keys(body).some((k) => k !== 'tasks')) {
        const rule = 'a JSON object with the single field tasks';
        throw RetrydError.validation([{ field: 'body', rule, message: `body must be ${rule}` }]);
      }
      const tasks = (body as { tasks?: unknown }).tasks;
      if (Array.isArray(tasks)) await admitTasks(request, tasks.length);
      const results = await taskService.enqueueBatch(tenantOf(request), tasks, { traceparent: traceparentOf(request) });
      const minimal = prefersMinimal(request.headers.prefer);
      if (minimal) reply.header('preference-applied', 'return=minimal');
      return {
        results: results.map((r) =>
          r.kind === 'error'
            ? // An entry's fault gets its log line as a whole request's would.
              { status: r.error.status, error: logProblem(request, r.error, r.error.toProblem()) }
            : minimal
              ? { status: r.kind === 'created' ? 201 : 200, taskId: r.task.taskId }
              : { status: r.kind === 'created' ? 201 : 200, task: toTaskView(r.task) },
        ),
      };
    },
  );
}
