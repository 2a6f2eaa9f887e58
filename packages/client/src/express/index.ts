/**
 * `@retryd/client/express`: hands a request handler's failed downstream call to the retryd service and answers
 * `202 { status: 'queued', taskId }` instead of an error. Express (4.21 or later, or 5) is an optional peer dependency:
 * only this entry point loads it.
 *
 * @packageDocumentation
 */
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { handoffFetch, isRetrydQueued, queuedAnswer, type HandoffOptions, type RequestRetryd } from '../handoff/handoff-fetch.js';
import { isRetrydSpooled, spooledAnswer } from '../handoff/retryd-spooled.js';

export { RetrydQueued, isRetrydQueued, type HandoffOptions, type RequestRetryd } from '../handoff/handoff-fetch.js';
export { RetrydSpooled, isRetrydSpooled } from '../handoff/retryd-spooled.js';

declare module 'express-serve-static-core' {
  interface Request {
    /** Set by `retrydExpress().middleware`: make downstream calls through `req.retryd.fetch`. */
    retryd: RequestRetryd;
  }
}

/** The two halves of the Express integration: one before the routes, one after them. */
export interface RetrydExpress {
  /** Gives every request `req.retryd.fetch`. `app.use` it before the routes. */
  middleware: RequestHandler;
  /**
   * Answers `202 { status: 'queued', taskId }` when a handler's call was handed to the service, and
   * `202 { status: 'spooled', idempotencyKey }` when it was spooled for later; passes every other error on (a
   * `SpoolFullError` among them). `app.use` it after the routes, before your own error handlers.
   */
  errorHandler: ErrorRequestHandler;
}

/**
 * The Express integration (Express 4.21 or later, or 5): a handler makes its downstream call with `req.retryd.fetch(url, init)`; when the first
 * try succeeds (or fails for good) the handler gets the answer and responds as usual; when it fails in a way worth
 * retrying, the call is enqueued to the service (same idempotency key, credentials stripped or replaced by
 * `{{secret:NAME}}` references) and the request is answered `202 { status: 'queued', taskId }`. With a `spool`, a call
 * retryd cannot take is kept on disk and answered `202 { status: 'spooled', idempotencyKey }`.
 *
 * The hand-off reaches `errorHandler` as the handler's rejection. Express 5 passes an async handler's rejection on by
 * itself; Express 4 does not, so there end each async handler with `.catch(next)`
 * (`(req, res, next) => void handle(req, res).catch(next)`), or the request is never answered.
 *
 * @example
 * ```ts
 * const retryd = retrydExpress({ client: new RetrydClient({ url: 'http://127.0.0.1:8080' }), secrets: { authorization: 'ORDERS_TOKEN' } });
 * app.use(retryd.middleware);
 * app.post('/checkout', async (req, res) => {
 *   const answer = await req.retryd.fetch('https://orders.example.com/orders', { method: 'POST', body: JSON.stringify(req.body) });
 *   res.status(answer.status).json(await answer.json());
 * });
 * app.use(retryd.errorHandler);
 * ```
 */
export function retrydExpress(options: HandoffOptions): RetrydExpress {
  const retryd: RequestRetryd = { fetch: handoffFetch(options) };
  return {
    middleware: (req, _res, next) => {
      req.retryd = retryd;
      next();
    },
    errorHandler: (error: unknown, _req, res, next) => {
      if (res.headersSent || !(isRetrydQueued(error) || isRetrydSpooled(error))) {
        next(error);
        return;
      }
      res.status(202).json(isRetrydQueued(error) ? queuedAnswer(error) : spooledAnswer(error));
    },
  };
}
