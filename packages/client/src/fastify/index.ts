/**
 * `@retryd/client/fastify`: hands a route handler's failed downstream call to the retryd service and answers
 * `202 { status: 'queued', taskId }` instead of an error. Fastify 5 is an optional peer dependency: only this entry
 * point loads it.
 *
 * @packageDocumentation
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { handoffFetch, isRetrydQueued, queuedAnswer, type HandoffOptions, type RequestRetryd } from '../handoff/handoff-fetch.js';
import { isRetrydSpooled, spooledAnswer } from '../handoff/retryd-spooled.js';

export { RetrydQueued, isRetrydQueued, type HandoffOptions, type RequestRetryd } from '../handoff/handoff-fetch.js';
export { RetrydSpooled, isRetrydSpooled } from '../handoff/retryd-spooled.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by `retrydFastify`: make downstream calls through `request.retryd.fetch`. */
    retryd: RequestRetryd;
  }
}

/**
 * The Fastify 5 integration, on the root instance: every request gets `request.retryd.fetch(url, init)`; when its
 * first try succeeds (or fails for good) the handler gets the answer; when it fails in a way worth retrying, the call
 * is enqueued to the service (same idempotency key, credentials stripped or replaced by `{{secret:NAME}}` references)
 * and the request is answered `202 { status: 'queued', taskId }` (with a `spool`, one retryd cannot take is kept on
 * disk and answered `202 { status: 'spooled', idempotencyKey }`). The instance's error handler is wrapped: call this
 * after your own `setErrorHandler`, which still gets every other error.
 *
 * @example
 * ```ts
 * retrydFastify(app, { client: new RetrydClient({ url: 'http://127.0.0.1:8080' }) });
 * app.post('/checkout', async (request) => {
 *   const answer = await request.retryd.fetch('https://orders.example.com/orders', { method: 'POST', body: JSON.stringify(request.body) });
 *   return answer.json();
 * });
 * ```
 */
export function retrydFastify(app: FastifyInstance, options: HandoffOptions): void {
  const retryd: RequestRetryd = { fetch: handoffFetch(options) };
  app.decorateRequest('retryd', {
    getter: () => retryd,
  });
  const previous = app.errorHandler;
  app.setErrorHandler(function retrydErrorHandler(this: FastifyInstance, error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    if (isRetrydQueued(error)) return reply.code(202).send(queuedAnswer(error));
    if (isRetrydSpooled(error)) return reply.code(202).send(spooledAnswer(error));
    return previous.call(this, error, request, reply);
  });
}
