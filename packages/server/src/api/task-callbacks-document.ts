import type { OpenApiDocument } from './common-problems.js';

/**
 * The OpenAPI `callbacks` of `POST /retry-tasks`: what a task's `callback.url` receives when the task ends (the
 * `TaskEndedEvent` schema), and what retryd reads of its answer. (A batch's tasks each name their own; a runtime
 * expression cannot point into an array, so the batch operation leaves it to this one.)
 */
const TASK_ENDED = {
  taskEnded: {
    '{$request.body#/callback/url}': {
      post: {
        summary: 'A task ended (its callback)',
        description:
          'Sent as a task of its own, retried under callback.policyId until a 2xx answer, signed per Standard Webhooks ' +
          "when the URL's target signs; the same Idempotency-Key and webhook-id (retryd-callback:<taskId>:<n>) on every attempt.",
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/TaskEndedEvent' } } } },
        responses: {
          '2XX': { description: 'Told: the callback task succeeds' },
          '4XX': { description: "Decided by the callback's policy, as for any task: most 4xx statuses are final (the callback is a dead letter); 408 and 429 are retried" },
          default: { description: "Retried under the callback's policy" },
        },
      },
    },
  },
};

/** Adds the `taskEnded` callback to `POST /retry-tasks` of `document`; changes the document only. */
export function withTaskCallbacks(document: OpenApiDocument): OpenApiDocument {
  const post = document.paths?.['/retry-tasks']?.post as (Record<string, unknown> & { callbacks?: unknown }) | undefined;
  if (post !== undefined) post.callbacks = TASK_ENDED;
  return document;
}
