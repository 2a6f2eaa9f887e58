import type { FastifyInstance } from 'fastify';
import type { RetryTask } from '../../domain/task.js';
import { taskWaitOf } from '../../protection/task-wait.js';
import { MAX_RESCHEDULE_AHEAD_MS, parseRescheduleBody, type RescheduleTime } from '../../tasks/reschedule.js';
import { documentBody, problemResponses } from '../schemas.js';
import { toTaskView } from '../views.js';
import { json, type RouteDeps } from './task-routes.js';

/** The JSON schemas of the reschedule routes, named as components of `/openapi.json`. */
export const RESCHEDULE_SCHEMAS = [
  {
    $id: 'RescheduleRequest',
    description:
      "When a PENDING task is next due. A time already past means now. At most the end of the task's time budget " +
      '(runStartedAt + policy.totalBudgetMs − policy.estimatedCallMs, when its policy has a budget) and at most ' +
      `${MAX_RESCHEDULE_AHEAD_MS} ms (10 years) after now: a later time answers 422 RESCHEDULE_OUT_OF_RANGE.`,
    type: 'object',
    additionalProperties: false,
    required: ['nextAttemptAt'],
    properties: {
      nextAttemptAt: {
        description: 'Epoch milliseconds, or an ISO 8601 date-time with a time zone (2030-01-01T09:00:00Z).',
        oneOf: [
          { type: 'integer', minimum: 0 },
          { type: 'string', format: 'date-time' },
        ],
      },
    },
  },
] as const;

interface TaskParams {
  taskId: string;
}
const taskParams = {
  type: 'object',
  required: ['taskId'],
  properties: { taskId: { type: 'string', minLength: 1, maxLength: 128 } },
} as const;

const PENDING_ONLY =
  'Only a PENDING task: IN_FLIGHT answers 409 TASK_RUNNING (its attempt decides what comes next), a finished one 409 ' +
  'TASK_NOT_PENDING. The attempt count and the time budget stay as they were: no attempt is spent, none is given back. ' +
  "The task becomes due; its target's protections still apply (an open breaker, a Retry-After, a rate or in-flight " +
  'limit keep it waiting, and `waiting` in the answer says why).';

/** Run a PENDING task now, or reschedule it to a given time. */
export function registerRescheduleRoutes(app: FastifyInstance, { taskService, tenantOf, targetControl }: RouteDeps): void {
  /** The task view, with `waiting` when it is due and something holds it (as `GET /retry-tasks/{taskId}` shows it). */
  const answer = async (tenantId: string, task: RetryTask) => {
    const view = toTaskView(task);
    const now = Date.now();
    if (targetControl === undefined || taskWaitOf(task, undefined, now) === null) return view;
    // One more read, only for a task that is due and not running: what holds its target.
    const status = await targetControl.getTarget({ tenantId, targetKey: task.targetKey });
    return { ...view, waiting: taskWaitOf(task, status, now) };
  };
  const reschedule = async (tenantId: string, taskId: string, at: RescheduleTime) =>
    answer(tenantId, (await taskService.reschedule(tenantId, taskId, at)).task);

  app.post<{ Params: TaskParams }>(
    '/retry-tasks/:taskId/run',
    {
      schema: {
        operationId: 'runTask',
        summary: 'Run a PENDING task now',
        description: `Makes the task due now (a task already due keeps its place). ${PENDING_ONLY}`,
        tags: ['tasks'],
        params: taskParams,
        response: { 200: json('The task, due now', 'Task'), ...problemResponses(404, 409, 503) },
      },
    },
    async (request) => reschedule(tenantOf(request), request.params.taskId, 'now'),
  );

  app.post<{ Params: TaskParams }>(
    '/retry-tasks/:taskId/reschedule',
    {
      schema: {
        operationId: 'rescheduleTask',
        summary: 'Make a PENDING task due at a given time',
        description:
          `Moves the task's next attempt to nextAttemptAt, earlier or later; a time already past means now. ${PENDING_ONLY}`,
        tags: ['tasks'],
        params: taskParams,
        response: { 200: json('The task, due at its new time', 'Task'), ...problemResponses(400, 404, 409, 413, 415, 422, 503) },
      },
      config: documentBody('RescheduleRequest'),
    },
    async (request) => reschedule(tenantOf(request), request.params.taskId, parseRescheduleBody(request.body)),
  );
}
