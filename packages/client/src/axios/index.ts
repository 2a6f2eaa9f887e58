/**
 * `@retryd/client/axios`: retries for an axios instance ({@link attachRetry}). The only part of the package that
 * loads axios, an optional peer dependency.
 *
 * @packageDocumentation
 */
export { attachRetry } from './attach-retry.js';
export { isRetryableAxiosError } from './retrying-adapter.js';
export type { AxiosRetryOptions } from './axios-retry-options.js';
