/**
 * The messages of the `TypeError` browsers reject `fetch` with when the request never got an answer (Chromium,
 * Firefox, WebKit). They carry no `cause` or code, so core's `isNetworkError` cannot tell them from a programming
 * error; a `TypeError` from `fetch` with one of these messages is a network failure worth retrying.
 */
const BROWSER_NETWORK_FAILURES: ReadonlySet<string> = new Set([
  'Failed to fetch',
  'NetworkError when attempting to fetch resource.',
  'Load failed',
  'network error',
]);

/** Whether `error` is a browser's `fetch` network failure (see {@link BROWSER_NETWORK_FAILURES}). */
export function isBrowserNetworkError(error: unknown): boolean {
  return error instanceof TypeError && error.cause === undefined && BROWSER_NETWORK_FAILURES.has(error.message);
}
