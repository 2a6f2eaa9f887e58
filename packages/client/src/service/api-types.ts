// The shapes of the retryd HTTP API under short names, every one taken from the types generated from the service's
// OpenAPI document (generated/openapi.ts): a field added to a route's schema reaches these types with the next
// generation, and a test fails until it is generated (see packages/server/scripts/generate-client-types.mjs).
import type { components, operations } from './generated/openapi.js';

type Schemas = components['schemas'];

/** A task as the service shows it (secrets `[REDACTED]`). */
export type Task = Schemas['Task'];
/**
 * A task as listings show it (`listTasks`, `listDeadLetters`): every field of {@link Task} but `body`, which only
 * `getTask` shows.
 */
export type TaskSummary = Schemas['TaskSummary'];
/** A task's status. */
export type TaskStatus = Task['status'];
/** Why a PENDING task that is due is not running (on a task read by id). */
export type TaskWait = Schemas['TaskWait'];
/** Who is told when a task ends (a task's `callback`). */
export type TaskCallback = Schemas['TaskCallback'];
/** The body of a callback: what a task's `callback.url` receives when the task ends (see `TaskCallback`). */
export type TaskEndedEvent = Schemas['TaskEndedEvent'];
/** One attempt of a task's log. */
export type Attempt = Schemas['Attempt'];
/** A retry policy (the `@retryd/core` shape). */
export type RetryPolicy = Schemas['RetryPolicy'];
/** A registered policy: the policy fields plus its id and times. */
export type NamedPolicy = Schemas['NamedPolicy'];
/** The body of `POST /retry-policies`. */
export type PolicyRequest = Schemas['PolicyRequest'];
/** The body of `PUT /retry-policies/{policyId}`: the policy fields (`policyId` may be left out). */
export type PolicyReplaceRequest = Schemas['PolicyReplaceRequest'];
/**
 * The body of `POST /retry-tasks` (`RetrydClient.enqueueTask`): a call for the service to make until it succeeds
 * or its policy gives up. Named apart from the browser queue's `RetryQueueRequest`.
 */
export type EnqueueTaskRequest = Schemas['EnqueueRequest'];
/** The name of {@link EnqueueTaskRequest} inside this package (the OpenAPI schema's); the package's root exports the other. */
export type EnqueueRequest = EnqueueTaskRequest;
/** One entry of a batch's answer: `status` 201 or 200 with `task`, any other with `error`. */
export type BatchEntryResult = Schemas['BatchResult']['results'][number];
/** The body of `POST /retry-tasks/{taskId}/reschedule`: when the PENDING task is next due. */
export type RescheduleRequest = Schemas['RescheduleRequest'];
/** How long finished tasks are kept (the periods in force, what the level sets itself, where each comes from). */
export type Retention = Schemas['Retention'];
/** The body of `PUT /retry-policies/{policyId}/retention`: the policy's own periods, in ms. */
export type RetentionRequest = Schemas['RetentionRequest'];
/** A target (an origin) with its breaker, limits and settings. */
export type Target = Schemas['Target'];
/** A target's full protection settings. */
export type TargetSettings = Schemas['TargetSettings'];
/** A partial settings object for `PUT /targets/{targetKey}`; `null` lifts a limit. */
export type TargetSettingsPatch = Schemas['TargetSettingsPatch'];
/** What to do to a breaker by hand. */
export type BreakerAction = Schemas['BreakerRequest']['action'];
/** An API key as listed (never its secret part). */
export type ApiKey = Schemas['ApiKey'];
/** A key just created: `key` is the only time the secret is shown. */
export type CreatedApiKey = Schemas['CreatedApiKey'];
/** The body of `POST /api-keys`. */
export type ApiKeyRequest = Schemas['ApiKeyRequest'];
/** RFC 9457 problem details, as every error of the service is. */
export type Problem = Schemas['Problem'];
/** One broken rule of a problem: the field and the rule. */
export type FieldError = NonNullable<Problem['errors']>[number];

/** The filters of `GET /retry-tasks` (every query parameter but the page's). */
export type TaskFilter = Omit<NonNullable<operations['listTasks']['parameters']['query']>, 'cursor' | 'limit'>;

/** The filters of `GET /dead-letters` and of a bulk replay: one dead status, a policy, a target. */
export type DeadLetterFilter = Omit<NonNullable<operations['listDeadLetters']['parameters']['query']>, 'cursor' | 'limit'>;

/** One page of `POST /dead-letters/replay`: a result per dead letter replayed, and where the next page starts. */
export type BulkReplayAnswer = Schemas['BulkReplayResult'];

/** The filters of a bulk cancel (`POST /retry-tasks/cancel`): one live status, a policy, a target. */
export type LiveTaskFilter = Omit<operations['cancelTasks']['requestBody']['content']['application/json'], 'cursor' | 'limit'>;

/** One page of `POST /retry-tasks/cancel`: a result per live task, how many were cancelled, where the next page starts. */
export type BulkCancelAnswer = Schemas['BulkCancelResult'];

/**
 * The filters of a delete by hand (`DELETE /retry-tasks`): finished statuses, `finishedBefore` (epoch ms or ISO 8601
 * with a time zone; required), a target.
 */
export type FinishedTaskFilter = Omit<operations['deleteTasks']['parameters']['query'], 'cursor' | 'limit'>;

/** One page of `DELETE /retry-tasks`: how many tasks it deleted, which, and where the next page starts. */
export type DeletedTasksAnswer = Schemas['DeletedTasks'];

/** One page of a listing: `nextCursor` (opaque) is present while there are more. */
export interface Page<T> {
  items: T[];
  nextCursor?: string;
}

/** Which page to read: `limit` 1–1000 (the service's default 50), `cursor` the previous page's `nextCursor`. */
export interface PageRequest {
  cursor?: string;
  limit?: number;
}

/** The answer to an enqueue: `created` (201), or `replayed` (200, an identical earlier request made this task). */
export interface EnqueueAnswer {
  outcome: 'created' | 'replayed';
  task: Task;
}

/** The answer to a cancel: `cancelled` (200), or `cancel_requested` while its attempt runs (202). */
export interface CancelAnswer {
  outcome: 'cancelled' | 'cancel_requested';
  task: Task;
}

/** The answer to registering a policy: `created` (201), or `replaced` / `unchanged` (200). */
export interface PutPolicyAnswer {
  outcome: 'created' | 'replaced' | 'unchanged';
  policy: NamedPolicy;
}
