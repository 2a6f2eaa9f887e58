import {
  BackoffType,
  FailureClass,
  GrpcStatus,
  JitterType,
  MAX_ATTEMPTS_LIMIT,
  MAX_POLICY_MS,
  type BACKOFF_SCHEDULE_FIELDS,
  type GrpcStatusName,
  type RETRY_POLICY_FIELDS,
} from '@retryd/core';
import { AttemptLogOutcome, RetryDelayReasons } from '../domain/task.js';
import { TaskWaitReasons } from '../protection/task-wait.js';
import { TASK_FIELDS, TASK_VIEW_FIELD_NAMES } from '../domain/task-fields.js';
import { TASK_SUMMARY_FIELD_NAMES } from './views.js';
import { ENQUEUE_LIMITS, HEADER_NAME_PATTERN, HEADER_VALUE_PATTERN, IDEMPOTENCY_KEY_PATTERN, MAX_EPOCH_MS, TARGET_METHODS } from '../tasks/enqueue-input.js';
import { MAX_BATCH_TASKS } from '../tasks/task-service.js';
import { POLICY_ID_SCHEMA } from '../policies/policy-id.js';
import { MAX_ATTEMPT_TIMEOUT_MS } from '../domain/attempt-timeouts.js';
import { CALLBACK_ENDS } from '../domain/task-callback.js';

/**
 * JSON schemas of the HTTP API, shared through `app.addSchema` so `/openapi.json` names them as components.
 *
 * Request bodies of enqueue and policies are not checked by these schemas but by the application layer
 * (`parseEnqueueInput`, core's `validatePolicy`): one validator, so an entry of a batch fails with exactly the
 * same field and rule as the same request sent alone. The schemas document those bodies (through each
 * route's `swaggerTransform`); params and query strings are checked by them.
 */
const nullable = (type: string) => ({ type: [type, 'null'] });

/** The fields of a backoff schedule: a policy's main schedule, and (each optional) the schedule of a failure class. */
const scheduleFields = {
  backoffType: { type: 'string', enum: Object.values(BackoffType) },
  initialDelayMs: { type: 'number', exclusiveMinimum: 0, maximum: MAX_POLICY_MS, description: 'Delay before the first retry.' },
  multiplier: { type: 'number', minimum: 1, description: 'Growth factor of EXPONENTIAL backoff.' },
  maxDelayMs: {
    type: 'number',
    exclusiveMinimum: 0,
    maximum: MAX_POLICY_MS,
    description: "No delay exceeds this; >= initialDelayMs (in a class's schedule: >= the merged initialDelayMs).",
  },
  jitterType: { type: 'string', enum: Object.values(JitterType) },
} as const satisfies Record<(typeof BACKOFF_SCHEDULE_FIELDS)[number], object>;

const classSchedule = (failures: string) => ({
  type: 'object',
  additionalProperties: false,
  properties: scheduleFields,
  description: `The schedule of retries after ${failures}: the fields given replace the main schedule's.`,
});

/** The gRPC status code names a policy may retry: every one but OK. */
const GRPC_FAILURE_CODES = (Object.keys(GrpcStatus) as GrpcStatusName[]).filter((name) => name !== 'OK');

const policyFields = {
  maxAttempts: { type: 'integer', minimum: 1, maximum: MAX_ATTEMPTS_LIMIT, description: 'Attempts in all, the first included.' },
  ...scheduleFields,
  totalBudgetMs: {
    type: 'number',
    exclusiveMinimum: 0,
    maximum: MAX_POLICY_MS,
    description: "Budget of a task's run, from its creation (or replay): time queued, held and waiting counts too.",
  },
  estimatedCallMs: {
    type: 'number',
    minimum: 0,
    maximum: MAX_POLICY_MS,
    description: 'Headroom kept in the budget for a call; < totalBudgetMs when both are given.',
  },
  retryableStatusCodes: {
    type: 'array',
    description:
      'The statuses worth retrying. For http and https targets, HTTP statuses instead of the default 408, 425, 429, 500, 502, 503, 504; ' +
      'never a 2xx (a success). For grpc and grpcs targets, gRPC status code names instead of the default UNAVAILABLE, ' +
      'RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED; never OK. One kind per list; a task is refused at enqueue when its policy ' +
      "names the other kind than its target's.",
    items: {
      anyOf: [
        { type: 'integer', minimum: 100, maximum: 599, not: { minimum: 200, maximum: 299 } },
        { type: 'string', enum: GRPC_FAILURE_CODES },
      ],
    },
  },
  successStatusCodes: {
    type: 'array',
    description:
      'Statuses besides 2xx that end the task as SUCCEEDED, e.g. a 409 from a downstream that already processed the key; never a 2xx, never one the policy retries.',
    items: { type: 'integer', minimum: 100, maximum: 599, not: { minimum: 200, maximum: 299 } },
  },
  backoffByClass: {
    type: 'object',
    additionalProperties: false,
    description:
      'Own schedules for some failures, each over the main schedule; a class not named follows the main schedule. ' +
      'The retry number counts every retry of the run, and DECORRELATED jitter reads the last delay, whatever its class.',
    properties: {
      [FailureClass.RATE_LIMITED]: classSchedule('a 429'),
      [FailureClass.SERVER_ERROR]: classSchedule('a 5xx'),
      [FailureClass.TIMEOUT]: classSchedule('a timeout'),
      [FailureClass.CONNECTION_REFUSED]: classSchedule('a refused connection (ECONNREFUSED)'),
    },
  },
} as const satisfies Record<(typeof RETRY_POLICY_FIELDS)[number], object>;
const policyRequired = ['maxAttempts', 'backoffType', 'initialDelayMs', 'multiplier', 'maxDelayMs', 'jitterType'];

/** A schema that refuses `a` and `b` together (`b` only when it is `true`, with `bIsFlag`): one field excludes the other. */
function notBoth(a: string, b: string, bIsFlag = false) {
  return {
    description: `Not both ${a} and ${b}${bIsFlag ? ': true' : ''}.`,
    not: { required: [a, b], properties: { [a]: {}, [b]: bIsFlag ? { const: true } : {} } },
  };
}

/** `nextCursor` of every page: present while there are more items. */
export const NEXT_CURSOR = {
  type: 'string',
  description:
    'Present while there are more items: pass it as cursor to read the next page. Opaque: never parse or build one. ' +
    'A page may hold fewer than limit items with a nextCursor: it ends before an item that would take the answer past ' +
    "the service's page size (4 MiB by default). Read on while there is a nextCursor, not until a page is short.",
} as const;

/** A policy's `callback` in a policy request: given to its tasks that name none. */
const POLICY_CALLBACK = {
  $ref: 'TaskCallback#',
  description: 'Given at enqueue to the tasks of this policy that name no callback of their own (a PUT reaches the tasks enqueued after it).',
} as const;

/** Shared schemas, added to the app in this order (later ones refer to earlier ones). */
export const SHARED_SCHEMAS = [
  {
    $id: 'Problem',
    description: 'RFC 9457 problem details (application/problem+json).',
    type: 'object',
    required: ['type', 'title', 'status', 'detail', 'code'],
    properties: {
      type: { type: 'string' },
      title: { type: 'string' },
      status: { type: 'integer' },
      detail: { type: 'string' },
      code: { type: 'string', description: 'Stable error code, e.g. VALIDATION_FAILED.' },
      instance: { type: 'string' },
      errors: {
        type: 'array',
        items: {
          type: 'object',
          required: ['field', 'rule', 'message'],
          properties: { field: { type: 'string' }, rule: { type: 'string' }, message: { type: 'string' } },
        },
      },
    },
  },
  {
    $id: 'RetryPolicy',
    description: 'A retry policy (the @retryd/core shape).',
    type: 'object',
    additionalProperties: false,
    required: policyRequired,
    properties: policyFields,
  },
  {
    $id: 'TaskCallback',
    description:
      'Who is told when a task ends: a POST of a task.ended event to url, made as a task of its own (durable, retried ' +
      "under policyId, signed when url's target signs, the same webhook-id on every attempt). A callback has no callback.",
    type: 'object',
    additionalProperties: false,
    required: ['url'],
    properties: {
      url: {
        type: 'string',
        format: 'uri',
        maxLength: ENQUEUE_LIMITS.urlLength,
        description: 'http or https, checked like targetUrl (private addresses refused unless --allow-targets covers them).',
      },
      on: {
        type: 'array',
        minItems: 1,
        maxItems: CALLBACK_ENDS.length,
        uniqueItems: true,
        items: { type: 'string', enum: [...CALLBACK_ENDS] },
        description: 'Which ends are told: succeeded, failed (FAILED or EXHAUSTED), cancelled. Default: all three.',
      },
      policyId: {
        anyOf: [POLICY_ID_SCHEMA, { type: 'null' }],
        description: "The registered policy of the callback's own task; absent or null: \"default\".",
      },
    },
  },
  {
    $id: 'TaskEndedEvent',
    description:
      "The body of a callback (a task's callback.url is POSTed this when the task ends). The same on every attempt of " +
      'the callback, whose Idempotency-Key and webhook-id are retryd-callback:<taskId>:<n>: treat a repeat as the same event.',
    type: 'object',
    additionalProperties: false,
    required: ['type', 'taskId', 'idempotencyKey', 'status', 'reason', 'attempts', 'endedAt', 'lastResponse', 'lastError'],
    properties: {
      type: { type: 'string', enum: ['task.ended'] },
      taskId: { type: 'string', format: 'uuid' },
      idempotencyKey: { type: 'string', description: "The ended task's own key." },
      status: { type: 'string', enum: ['SUCCEEDED', 'FAILED', 'EXHAUSTED', 'CANCELLED'] },
      reason: { ...nullable('string'), description: 'Why a dead letter died (deadLetterReason), or null.' },
      attempts: { type: 'integer', description: "Attempts made over the task's life." },
      endedAt: { type: 'integer', description: 'When it ended (epoch ms).' },
      lastResponse: {
        anyOf: [
          {
            type: 'object',
            additionalProperties: false,
            required: ['status', 'excerpt'],
            properties: { status: nullable('integer'), excerpt: { ...nullable('string'), description: 'The first 1,024 characters of its body.' } },
          },
          { type: 'null' },
        ],
        description: "The last attempt's answer, or null when the task made no attempt.",
      },
      lastError: { ...nullable('string'), description: "The task's last error (HTTP 503, a timeout, a refused connection), or null after a success." },
    },
  },
  {
    $id: 'NamedPolicy',
    description: 'A registered policy: the policy fields plus its id and times (epoch ms).',
    type: 'object',
    required: ['policyId', ...policyRequired, 'callback', 'createdAt', 'updatedAt'],
    properties: {
      policyId: { type: 'string' },
      ...policyFields,
      callback: {
        anyOf: [{ $ref: 'TaskCallback#' }, { type: 'null' }],
        description: "The callback given to the policy's tasks that name none (copied at enqueue), or null.",
      },
      createdAt: { type: 'integer' },
      updatedAt: { type: 'integer' },
    },
  },
  {
    $id: 'PolicyRequest',
    description: 'A policy to register (POST): the policy fields plus its policyId.',
    type: 'object',
    additionalProperties: false,
    required: ['policyId', ...policyRequired],
    properties: { policyId: POLICY_ID_SCHEMA, ...policyFields, callback: POLICY_CALLBACK },
  },
  {
    $id: 'PolicyReplaceRequest',
    description: 'The new definition of a registered policy (PUT): the policy fields; policyId may be left out, the path names it.',
    type: 'object',
    additionalProperties: false,
    required: policyRequired,
    properties: { policyId: { ...POLICY_ID_SCHEMA, description: 'Absent, or equal to the policyId of the path.' }, ...policyFields, callback: POLICY_CALLBACK },
  },
  {
    $id: 'EnqueueRequest',
    description: 'A call for retryd to make until it succeeds or its policy gives up.',
    type: 'object',
    additionalProperties: false,
    required: ['targetUrl', 'method'],
    properties: {
      targetUrl: {
        type: 'string',
        format: 'uri',
        maxLength: ENQUEUE_LIMITS.urlLength,
        description:
          'http or https; or a unary gRPC method, grpc://host:port/package.Service/Method (grpcs:// for TLS), the port required. ' +
          'Private addresses are refused unless --allow-targets covers them.',
      },
      method: { type: 'string', enum: [...TARGET_METHODS], description: 'POST for a gRPC target (a gRPC call is an HTTP/2 POST; the service also takes it absent there).' },
      headers: {
        type: 'object',
        maxProperties: ENQUEUE_LIMITS.headers,
        propertyNames: { type: 'string', maxLength: ENQUEUE_LIMITS.headerNameLength, pattern: HEADER_NAME_PATTERN.source },
        additionalProperties: { type: 'string', maxLength: ENQUEUE_LIMITS.headerValueLength, pattern: HEADER_VALUE_PATTERN.source },
        description:
          'Sent on every attempt (as metadata to a gRPC target: a name ending in -bin takes a base64 value, sent as bytes; ' +
          'grpc-* and content-type are refused). Hop-by-hop and framing headers (Host, Content-Length, Connection, ...) are refused; an ' +
          `Idempotency-Key entry is taken as the key. At most ${ENQUEUE_LIMITS.headers} headers, names of at most ` +
          `${ENQUEUE_LIMITS.headerNameLength} bytes, values of at most ${ENQUEUE_LIMITS.headerValueLength} bytes, ` +
          `${ENQUEUE_LIMITS.headerBytes} bytes in all.`,
      },
      body: {
        description:
          'A string, sent as is; or any other JSON value, sent as JSON (content-type application/json unless given), nested at ' +
          `most ${ENQUEUE_LIMITS.bodyDepth} levels deep. For a gRPC target: the request message, already serialised, in ` +
          'standard base64 (with = padding); the reply is kept as base64 in the attempt log. Not with bodyRef.',
      },
      bodyRef: {
        type: 'string',
        maxLength: ENQUEUE_LIMITS.bodyRefLength,
        description:
          'Instead of body: s3://<bucket>/<key> of an object the caller put in the bucket --blobs names, under <prefix>/<tenant>/; ' +
          'checked to exist at enqueue, read at each attempt, never deleted by retryd. Set content-type in headers. For a gRPC ' +
          'target the object holds the raw bytes of the request message.',
      },
      policyId: { ...POLICY_ID_SCHEMA, description: 'A registered policy; default "default". Not with policy.' },
      policy: { $ref: 'RetryPolicy#' },
      idempotencyKey: {
        type: 'string',
        minLength: 1,
        maxLength: ENQUEUE_LIMITS.keyLength,
        pattern: IDEMPOTENCY_KEY_PATTERN.source,
        description:
          'Visible ASCII characters only. Sent as Idempotency-Key on every attempt; generated when absent. The same key ' +
          "answers the existing task for as long as that task is kept: until its retention ends after it finished (7 days " +
          'for a success, 30 for a dead letter by default; GET /retention). After that, the same key makes a new task.',
      },
      delayMs: { type: 'integer', minimum: 0, maximum: MAX_POLICY_MS, description: 'First attempt this long after enqueue. Not with notBefore.' },
      notBefore: {
        oneOf: [
          { type: 'integer', minimum: 0, maximum: MAX_EPOCH_MS },
          { type: 'string', format: 'date-time' },
        ],
        description: 'First attempt not before this time (epoch ms or ISO 8601 with a time zone). Not with delayMs.',
      },
      secretHeaders: {
        type: 'array',
        maxItems: ENQUEUE_LIMITS.headers,
        items: { type: 'string' },
        description: 'Names of headers in headers to keep secret like credential headers: stored encrypted (or as {{secret:NAME}}), shown as [REDACTED].',
      },
      sensitiveBody: { type: 'boolean', description: 'Store the body encrypted and show it as [REDACTED]; needs RETRYD_ENCRYPTION_KEY. Not with bodyRef.' },
      attemptTimeoutMs: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_ATTEMPT_TIMEOUT_MS,
        description:
          "Most time each attempt may take, from sending the request to the end of the response snippet (Cloud Tasks' " +
          "dispatchDeadline), at most 30 minutes. Default: the target's attemptTimeoutMs, else the service's --attempt-timeout (30 s).",
      },
      connectTimeoutMs: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_ATTEMPT_TIMEOUT_MS,
        description:
          'Most time each attempt may spend opening its connection (name resolution, TCP, TLS); <= attemptTimeoutMs when both ' +
          "are given. Default: the target's connectTimeoutMs, else the service's --connect-timeout (5 s).",
      },
      callback: { $ref: 'TaskCallback#' },
    },
    // The pairs the application layer refuses together: at most one of each.
    allOf: [notBoth('policy', 'policyId'), notBoth('delayMs', 'notBefore'), notBoth('body', 'bodyRef'), notBoth('bodyRef', 'sensitiveBody', true)],
  },
  {
    $id: 'Task',
    description:
      'A task as the API shows it. Internal fields are left out on purpose: the request hash, the lease owner, ' +
      'fencing token and version (concurrency internals), the run bookkeeping and the tenant. Secrets are shown as ' +
      '[REDACTED] (credential and marked headers, a sensitive body); query values of targetUrl as REDACTED.',
    type: 'object',
    required: [...TASK_VIEW_FIELD_NAMES],
    properties: {
      ...Object.fromEntries(TASK_VIEW_FIELD_NAMES.map((name) => [name, TASK_FIELDS[name].api.schema])),
      waiting: { $ref: 'TaskWait#' },
    },
  },
  {
    $id: 'TaskSummary',
    description:
      'A task as listings show it: every field of Task but body, which only the task itself shows ' +
      '(GET /retry-tasks/{taskId}), so that a page of large tasks stays small.',
    type: 'object',
    required: [...TASK_SUMMARY_FIELD_NAMES],
    properties: Object.fromEntries(TASK_SUMMARY_FIELD_NAMES.map((name) => [name, TASK_FIELDS[name].api.schema])),
  },
  {
    $id: 'TaskWait',
    description:
      'Why a PENDING task that is due is not running; only on GET /retry-tasks/{taskId}. breaker_open and retry_after: ' +
      'its target is held until `until`; breaker_probing: only probes go until one succeeds; rate_limit: the target is ' +
      'paced, its next attempt allowed at `until`; max_in_flight: the target is at its in-flight limit; slow_start: ' +
      'no success of the target is known yet, and it gets 10 attempts in flight until one; queued: nothing ' +
      'holds the target, the task waits for a free worker.',
    type: 'object',
    required: ['reason', 'until', 'detail'],
    properties: {
      reason: { type: 'string', enum: Object.values(TaskWaitReasons) },
      until: nullable('integer'),
      detail: { type: 'string' },
    },
  },
  {
    $id: 'TaskPage',
    type: 'object',
    required: ['items'],
    properties: { items: { type: 'array', items: { $ref: 'TaskSummary#' } }, nextCursor: NEXT_CURSOR },
  },
  {
    $id: 'Attempt',
    type: 'object',
    required: [
      'attemptNumber',
      'startedAt',
      'durationMs',
      'responseStatus',
      'errorMessage',
      'outcome',
      'responseBodySnippet',
      'nextAttemptAt',
      'delayedBy',
      'backoffAt',
    ],
    properties: {
      attemptNumber: { type: 'integer' },
      startedAt: { type: 'integer' },
      durationMs: { type: 'number' },
      responseStatus: nullable('integer'),
      errorMessage: nullable('string'),
      outcome: { type: 'string', enum: Object.values(AttemptLogOutcome) },
      responseBodySnippet: {
        ...nullable('string'),
        description: 'The first 4 KiB of the response body, with every secret the attempt sent (revealed headers, references, a sensitive body) replaced by [REDACTED].',
      },
      nextAttemptAt: nullable('integer'),
      delayedBy: {
        type: ['string', 'null'],
        enum: [...Object.values(RetryDelayReasons), null],
        description:
          "Why nextAttemptAt is later than the retry's backoff said, or null (it is not, or no retry follows). retry_budget: " +
          "the target's retry budget was spent, and the retry took the next slot of its pacer (minRetriesPerSecond).",
      },
      backoffAt: { ...nullable('integer'), description: 'When the backoff alone would have run the retry, when delayedBy is set; else null.' },
    },
  },
  {
    $id: 'AttemptPage',
    type: 'object',
    required: ['items'],
    properties: { items: { type: 'array', items: { $ref: 'Attempt#' } }, nextCursor: NEXT_CURSOR },
  },
  {
    $id: 'PolicyPage',
    type: 'object',
    required: ['items'],
    properties: { items: { type: 'array', items: { $ref: 'NamedPolicy#' } }, nextCursor: NEXT_CURSOR },
  },
  {
    $id: 'BatchRequest',
    type: 'object',
    additionalProperties: false,
    required: ['tasks'],
    properties: { tasks: { type: 'array', maxItems: MAX_BATCH_TASKS, items: { $ref: 'EnqueueRequest#' } } },
  },
  {
    $id: 'BatchResult',
    type: 'object',
    required: ['results'],
    properties: {
      results: {
        type: 'array',
        description: 'One entry per task, in order: 201 created, 200 replayed, or the error that entry got.',
        items: {
          type: 'object',
          required: ['status'],
          description:
            'status 201 or 200 with task (with Prefer: return=minimal, with taskId instead); any other status with error (never both).',
          properties: {
            status: { type: 'integer', description: "The status this entry would have had alone: 201, 200 (an identical earlier request's task), or the error's." },
            task: { $ref: 'Task#' },
            taskId: { type: 'string', description: 'The id of the task created or replayed, in place of task when the request sent Prefer: return=minimal.' },
            error: { $ref: 'Problem#' },
          },
        },
      },
    },
  },
  {
    $id: 'BulkReplayResult',
    type: 'object',
    required: ['results', 'replayed'],
    properties: {
      results: {
        type: 'array',
        description:
          'One entry per dead letter of the page, newest first: replayed; already_live (replayed meanwhile by someone ' +
          'else, left as it is); or error, with the problem that task got (it changed meanwhile).',
        items: {
          type: 'object',
          required: ['taskId', 'result'],
          properties: {
            taskId: { type: 'string' },
            result: { type: 'string', enum: ['replayed', 'already_live', 'error'] },
            error: { $ref: 'Problem#' },
          },
        },
      },
      replayed: { type: 'integer', description: 'How many entries are replayed.' },
      nextCursor: { type: 'string', description: 'Where the next page starts: send it back as cursor, with the same filter.' },
    },
  },
] as const;

/** `?cursor=&limit=` of every listing. */
export const pageQuery = {
  cursor: {
    type: 'string',
    maxLength: 1024,
    description: 'The nextCursor of the previous page, as it was given: an opaque string, never parsed or built by a client.',
  },
  limit: { type: 'integer', minimum: 1, maximum: 1000, default: 50 },
} as const;

/** Error responses, documented with the problem media type. */
export function problemResponses(...statuses: number[]): Record<number, unknown> {
  const out: Record<number, unknown> = {};
  for (const status of statuses) {
    out[status] = { description: 'Problem details', content: { 'application/problem+json': { schema: { $ref: 'Problem#' } } } };
  }
  return out;
}

/** The route option that documents a body the application layer validates (see the note at the top). */
export function documentBody(ref: string): { swaggerTransform: (input: { schema: object; url: string }) => { schema: object; url: string } } {
  return {
    swaggerTransform: ({ schema, url }) => ({ schema: { ...schema, body: { $ref: `${ref}#` } }, url }),
  };
}
