/**
 * `@retryd/server/pg`: enqueue retryd tasks inside your own PostgreSQL transaction, from an application that runs no
 * service itself. The tasks commit or roll back with your writes; a retryd service on the same schema makes the calls.
 *
 * @example
 * ```ts
 * import { createPgEnqueuer } from '@retryd/server/pg';
 * const enqueuer = createPgEnqueuer({ schema: 'retryd' });
 * await client.query('BEGIN');
 * await enqueuer.enqueue(client, { targetUrl: 'https://api.example.com/charges', method: 'POST', idempotencyKey: 'charge-1042' });
 * await client.query('COMMIT');
 * ```
 * @packageDocumentation
 */
export { createPgEnqueuer, PgEnqueuer, type PgEnqueued, type EnqueueRequest } from './pg-enqueuer.js';
export type { PgEnqueuerOptions } from './pg-enqueuer-options.js';
export type { CallerClient } from '../backends/postgres/caller-transaction.js';
export { CallerTransactionError, CALLER_TRANSACTION_CODES, type CallerTransactionCode } from '../backends/postgres/caller-transaction-error.js';
export { RetrydError, type ErrorCode, type FieldError } from '../domain/errors.js';
export type { EnqueueContext } from '../tasks/task-preparer.js';
export type { PolicyCeilings } from '../policies/policy-ceilings.js';
