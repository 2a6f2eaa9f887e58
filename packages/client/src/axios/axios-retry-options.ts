import type { RetryingFetchOptions } from '../fetch/retrying-fetch-options.js';

/** Options of {@link attachRetry}: those of the retrying fetch, and the bound on retries in flight. */
export interface AxiosRetryOptions extends Omit<RetryingFetchOptions, 'fetch'> {
  /**
   * Retries (second and later attempts) in flight at once, for the whole instance; the others wait their turn. A burst
   * of failures then reopens at most this many sockets instead of one per failed request. First attempts are not
   * held back. Default 10.
   */
  maxConcurrentRetries?: number;
}
