import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isTerminal, TaskStatus } from '@retryd/core';
import { RetrydError, type Problem } from '../../domain/errors.js';
import type { AttemptLog, RetryTask } from '../../domain/task.js';
import type { BulkEntry } from '../../tasks/bulk-actions.js';
import type { DeadLetterFilter, TaskService } from '../../tasks/task-service.js';
import { ENQUEUE_LIMITS, IDEMPOTENCY_KEY_PATTERN } from '../../tasks/enqueue-input.js';
import { TARGET_KEY_MAX_LENGTH } from '../target-schemas.js';
import { targetRefOf } from './target-routes.js';
import { POLICY_ID_SCHEMA } from '../../policies/policy-id.js';
import { logProblem } from '../problem-handler.js';
import { prefersMinimal } from '../prefer-header.js';
import { documentBody, pageQuery, problemResponses } from '../schemas.js';
import { toAttemptView, toTaskSummaryView, toTaskView } from '../views.js';
import { DEFAULT_MAX_PAGE_BYTES, sendBoundedPage, type BoundedListing } from '../bounded-page.js';
import type { TargetControl } from '../../protection/target-control.js';
import { taskWaitOf } from '../../protection/task-wait.js';
import { MAX_WAIT_MS, type TaskWaiters } from '../../tasks/task-waiters.js';

/** What every route module needs. */
export interface RouteDeps {
  taskService: TaskService;
  /** The tenant a request acts for. */
  tenantOf: (request: FastifyRequest) => string;
  /**
   * Admits `count` new pending tasks for the request's tenant (enqueue, batch, replay), or throws the 429 of its
   * most pending tasks. Absent: no such limit.
   */
  admitTasks?: ((request: FastifyRequest, count: number) => Promise<void>) | undefined;
  /** Per-target protection, to say why a due task waits (`waiting` on `GET /retry-tasks/{taskId}`). Absent: never said. */
  targetControl?: TargetControl | undefined;
  /** Requests waiting for tasks to end (`GET /retry-tasks/{taskId}?waitMs=`). Absent: `waitMs` answers at once. */
  waiters?: TaskWaiters | undefined;
  /** Most bytes of one page of a listing. Default `DEFAULT_MAX_PAGE_BYTES` (4 MiB). */
  maxPageBytes?: number | undefined;
}

interface TaskParams {
  taskId: string;
}
export interface PageQuery {
  cursor?: string;
  limit: number;
}
interface TaskListQuery extends PageQuery {
  status?: TaskStatus;
  policyId?: string;
  targetKey?: string;
  idempotencyKey?: string;
}
interface DeadLetterQuery extends PageQuery {
  status?: typeof TaskStatus.FAILED | typeof TaskStatus.EXHAUSTED;
  policyId?: string;
  targetKey?: string;
}

/** The `targetKey` filter of a listing or a bulk action. */
export const TARGET_KEY_FILTER = {
  type: 'string',
  minLength: 1,
  maxLength: TARGET_KEY_MAX_LENGTH,
  description: "Only the tasks of this target: an origin exactly as tasks record it, e.g. https://api.example.com. Pages may be shorter than limit, even empty, with a nextCursor (no index leads by target: a page examines a bounded number of tasks).",
} as const;
/** The `policyId` filter of a listing or a bulk action. */
export const POLICY_ID_FILTER = {
  ...POLICY_ID_SCHEMA,
  description: 'Only the tasks of this named policy. On a Redis store pages may be shorter than limit, even empty, with a nextCursor (no index leads by policy there: a page examines a bounded number of tasks).',
} as const;
const DEAD_LETTER_FILTER = {
  status: { type: 'string', enum: [TaskStatus.FAILED, TaskStatus.EXHAUSTED], description: 'One of the two dead statuses; both when absent.' },
  policyId: POLICY_ID_FILTER,
  targetKey: TARGET_KEY_FILTER,
} as const;

/** The store's filter of a query or bulk action (dead letters, live tasks): the target key checked as the target routes check it. */
export function taskFilterOf<S extends TaskStatus>(tenantId: string, query: { status?: S; policyId?: string; targetKey?: string }): { status?: S; policyId?: string; targetKey?: string } {
  const { status, policyId, targetKey } = query;
  return {
    ...(status === undefined ? {} : { status }),
    ...(policyId === undefined ? {} : { policyId }),
    ...(targetKey === undefined ? {} : { targetKey: targetRefOf(tenantId, targetKey).targetKey }),
  };
}

/** The results of a page of a bulk action as the API shows them: each problem as problem details, logged as a whole request's would be. */
export function bulkResultsView<K extends string>(request: FastifyRequest, results: readonly BulkEntry<K>[]): { taskId: string; result: K | 'error'; error?: Problem }[] {
  return results.map((entry) =>
    'error' in entry
      ? { taskId: entry.taskId, result: 'error', error: logProblem(request, entry.error, entry.error.toProblem()) }
      : { taskId: entry.taskId, result: entry.result },
  );
}

/** A JSON response documented as a shared schema, with the headers it carries (documented in the OpenAPI document). */
export const json = (description: string, ref: string, headers?: Record<string, object>) => ({
  description,
  ...(headers === undefined ? {} : { headers }),
  content: { 'application/json': { schema: { $ref: `${ref}#` } } },
});

/** The `Location` header of a 201: the path of what was created. */
export const LOCATION_HEADER = { Location: { type: 'string', description: 'The path of what was created, e.g. /retry-tasks/{taskId}.' } };

const taskParams = {
  type: 'object',
  required: ['taskId'],
  properties: { taskId: { type: 'string', minLength: 1, maxLength: 128 } },
} as const;
const pageQuerySchema = { type: 'object', additionalProperties: false, properties: pageQuery } as const;

/** A page request without an absent cursor (the store's optional field must not be `undefined`). */
export function pageOf(query: PageQuery): { cursor?: string; limit: number } {
  return query.cursor === undefined ? { limit: query.limit } : { cursor: query.cursor, limit: query.limit };
}

function traceparentOf(request: FastifyRequest): string | undefined {
  const value = request.headers.traceparent;
  return typeof value === 'string' ? value : undefined;
}

/** A listing of tasks as pages show them: without their bodies, which the store read all the same. */
function taskListing(read: BoundedListing<RetryTask>['read']): BoundedListing<RetryTask> {
  return { read, serialize: (task) => JSON.stringify(toTaskSummaryView(task)), unsentBytes: (task) => task.body?.length ?? 0 };
}

/** Tasks: enqueue (single and batch), read, list, cancel, attempts, replay, and dead letters. */
export function registerTaskRoutes(
  app: FastifyInstance,
  { taskService, tenantOf, admitTasks = async () => {}, targetControl, waiters, maxPageBytes = DEFAULT_MAX_PAGE_BYTES }: RouteDeps,
): void {
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
