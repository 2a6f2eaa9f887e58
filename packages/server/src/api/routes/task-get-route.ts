import type { FastifyInstance } from 'fastify';
import { isTerminal } from '@retryd/core';
import { problemResponses } from '../schemas.js';
import { toTaskView } from '../views.js';
import { taskWaitOf } from '../../protection/task-wait.js';
import { MAX_WAIT_MS } from '../../tasks/task-waiters.js';
import type { RouteDeps } from './route-deps.js';
import { json } from './route-responses.js';
import { taskParams, type TaskParams } from './task-route-schemas.js';

/** `GET /retry-tasks/{taskId}`: a task, why a due one waits, and long polling until it ends (`waitMs`). */
export function registerGetTaskRoute(app: FastifyInstance, { taskService, tenantOf, targetControl, waiters }: RouteDeps): void {
  app.get<{ Params: TaskParams; Querystring: { waitMs?: number } }>(
    '/retry-tasks/:taskId',
    {
      schema: {
        operationId: 'getTask',
        summary: 'Read a task: status, attempts made, next attempt, last error, dead-letter reason, why a due task waits',
        description:
          'A PENDING task whose next attempt is due also carries `waiting`: why it is not running (its target held by ' +
          'the breaker or a Retry-After until a time, probing, paced, at its in-flight limit, or queued for a worker). ' +
          `With \`waitMs\` (long polling, at most ${MAX_WAIT_MS} ms), a task that has not ended is answered when it ends ` +
          'or when the wait passes, whichever comes first: read its `status` to tell which. Waiting costs the service a ' +
          'connection and no store read per waiter per millisecond (a task ended elsewhere is noticed within a second).',
        tags: ['tasks'],
        params: taskParams,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            waitMs: {
              type: 'integer',
              minimum: 0,
              maximum: MAX_WAIT_MS,
              description: `Wait up to this many ms for the task to end (SUCCEEDED, FAILED, EXHAUSTED or CANCELLED) before answering. Default 0: answer at once.`,
            },
          },
        },
        response: { 200: json('The task', 'Task'), ...problemResponses(400, 404, 503) },
      },
    },
    async (request, reply) => {
      const tenantId = tenantOf(request);
      const { taskId } = request.params;
      let task = await taskService.getTask(tenantId, taskId);
      const waitMs = request.query.waitMs ?? 0;
      if (waitMs > 0 && waiters !== undefined && !isTerminal(task.status)) {
        // The caller hanging up ends the wait: nothing is left waiting for an answer nobody reads.
        const left = new AbortController();
        const onClose = () => left.abort();
        reply.raw.once('close', onClose);
        const outcome = await waiters.wait(tenantId, taskId, waitMs, left.signal);
        reply.raw.off('close', onClose);
        if (left.signal.aborted) {
          // The caller hung up (a client's abort may leave the connection half-open): nobody reads an answer, and a
          // connection left with its request unanswered would hold a stopping server until the client drops it.
          reply.hijack();
          request.raw.socket.destroy();
          return reply;
        }
        // Ended by the service stopping: this connection closes after the answer, for the same reason.
        if (outcome === 'aborted') reply.header('connection', 'close');
        task = await taskService.getTask(tenantId, taskId);
      }
      const view = toTaskView(task);
      const now = Date.now();
      if (targetControl === undefined || taskWaitOf(task, undefined, now) === null) return view;
      // One more read, only for a task that is due and not running: what holds its target.
      const waiting = taskWaitOf(task, await targetControl.getTarget({ tenantId, targetKey: task.targetKey }), now);
      return { ...view, waiting };
    },
  );
}
