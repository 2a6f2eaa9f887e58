// The service-facing half of @retryd/client: the typed RetrydClient and what it answers.
export { RetrydClient, DEFAULT_SERVICE_URL, API_KEY_ENV, DEFAULT_WAIT_TIMEOUT_MS, MAX_WAIT_PER_REQUEST_MS, type RetrydClientOptions } from './retryd-client.js';
export { RetrydApiError, RetrydUnreachableError, TaskWaitTimeoutError } from './errors.js';
export { CLIENT_RETRY, REQUEST_TIMEOUT_MS } from './transport.js';
export { ITERATOR_PAGE_SIZE } from './paging.js';
export type * from './api-types.js';
export type { paths as RetrydPaths, components as RetrydComponents, operations as RetrydOperations } from './generated/openapi.js';
