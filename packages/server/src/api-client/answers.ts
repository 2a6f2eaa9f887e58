// What the retryd HTTP API answers, as its client reads it. The shapes are the service's own views, imported as
// types only (one definition: a field added to a view reaches the client's types with it), so that a later
// `@retryd/client` package can take this folder with a copy of these few types and nothing else of the server.
import type { RetryPolicy, TaskStatus } from '@retryd/core';
import type { FieldError, Problem } from '../domain/errors.js';
import type { AttemptView, PolicyView, TargetApiView, TaskView } from '../api/views.js';
import type { BreakerAction } from '../protection/target-control.js';
import type { TargetSettingsPatch } from '../protection/target-settings.js';

export type { AttemptView, BreakerAction, FieldError, PolicyView, Problem, RetryPolicy, TargetSettingsPatch, TaskStatus, TaskView };

/** A target as `GET /targets/{targetKey}` shows it (the `Target` schema of `/openapi.json`). */
export type TargetView = TargetApiView;

/** One page of a listing: `nextCursor` is present while there are more. */
export interface Page<T> {
  items: T[];
  nextCursor?: string;
}

/** Which page of a listing to read: `limit` 1–1000 (the service's default 50), `cursor` from the previous page. */
export interface PageRequest {
  cursor?: string;
  limit?: number;
}

/** The filters of `GET /retry-tasks`. */
export interface TaskFilter {
  status?: TaskStatus;
  policyId?: string;
}

/** The answer to `DELETE /retry-tasks/{taskId}`: `cancelled` (200), or `cancel_requested` while its attempt runs (202). */
export interface CancelAnswer {
  outcome: 'cancelled' | 'cancel_requested';
  task: TaskView;
}

/** The answer to `policies put`: `created` (it did not exist) or `replaced`. */
export interface PutPolicyAnswer {
  outcome: 'created' | 'replaced';
  policy: PolicyView;
}
