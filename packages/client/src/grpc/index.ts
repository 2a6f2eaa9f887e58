/**
 * `@retryd/client/grpc`: retries for grpc-js clients ({@link retryInterceptor}), with an optional hand-off of the
 * calls that still fail to the retryd service. The only part of the package that loads `@grpc/grpc-js`, an optional
 * peer dependency.
 *
 * @packageDocumentation
 */
export { retryInterceptor } from './retry-interceptor.js';
export type { GrpcRetryOptions } from './retry-interceptor-options.js';
// The policy names the codes it retries by these names: here for callers that depend on this package alone.
export { DEFAULT_RETRYABLE_GRPC_CODES, type GrpcStatusName } from '@retryd/core';
export { IDEMPOTENCY_KEY_METADATA, RETRYD_TASK_ID_METADATA, retrydTaskIdOf, type GrpcHandoffOptions } from './grpc-handoff.js';
export { PUSHBACK_METADATA } from './pushback.js';
