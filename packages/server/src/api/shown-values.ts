import type { RetryTask } from '../domain/task.js';
import { REDACTED, redactUrlQuery } from '../secrets/redaction.js';

// How the task fields that may hold secrets are shown by the API's views (generated/task-views.ts).

/** A sensitive body as shown: {@link REDACTED}; any other as it is. */
export function shownBody(task: RetryTask): string | null {
  return task.sensitiveBody && task.body !== null ? REDACTED : task.body;
}

/** A callback as shown: its URL's query values redacted, as `targetUrl`'s (a callback URL often carries a token). */
export function shownCallback(callback: RetryTask['callback']): RetryTask['callback'] {
  return callback === null ? null : { url: redactUrlQuery(callback.url), on: callback.on, policyId: callback.policyId };
}
