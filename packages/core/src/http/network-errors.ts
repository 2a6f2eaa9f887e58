import { HttpOutcome } from './http-outcome.js';

/**
 * Codes of failures to reach or hear from the server that may well pass on a later attempt: the
 * connection was refused, reset or timed out, the route is down, the resolver had a temporary failure.
 *
 * ENOTFOUND is deliberately absent. Node reports it when DNS answers that the name does not exist
 * (NXDOMAIN, or no address of the wanted family): an authoritative "no", almost always a misspelt or
 * decommissioned host, which retrying for minutes only hides. A resolver that merely could not get an
 * answer (SERVFAIL, timeout) reports EAI_AGAIN, which is here. A deployment whose names appear late (a
 * fresh Kubernetes service) can treat ENOTFOUND as retryable in its own predicate.
 */
const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);

/** Codes that say the wait, not the connection, ran out. */
const TIMEOUT_ERROR_CODES: ReadonlySet<string> = new Set([
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/**
 * How far into `cause` and `AggregateError#errors` to look. Real chains are 2–3 deep (fetch's "fetch failed"
 * → undici's error → the socket's); the bound and the visited set keep a cyclic or hostile chain finite.
 */
const MAX_DEPTH = 8;
const MAX_VISITED = 64;

/** Whether `test` holds for `error` or anything in its cause chain (bounded). */
function someInChain(error: unknown, test: (link: object) => boolean): boolean {
  if (typeof error !== 'object' || error === null) return false;
  // Most errors have no chain: answer without allocating the walk's bookkeeping (this runs on every failure).
  const { cause, errors } = error as { cause?: unknown; errors?: unknown };
  if (cause === undefined && errors === undefined) return test(error);
  const visited = new Set<unknown>();
  let level: unknown[] = [error];
  for (let depth = 0; depth <= MAX_DEPTH && level.length > 0; depth++) {
    const next: unknown[] = [];
    for (const link of level) {
      if (typeof link !== 'object' || link === null || visited.has(link)) continue;
      if (visited.size >= MAX_VISITED) return false;
      visited.add(link);
      if (test(link)) return true;
      next.push((link as { cause?: unknown }).cause);
      // Node's happy-eyeballs connect (autoSelectFamily) fails with an AggregateError of one error per address.
      const errors: unknown = (link as { errors?: unknown }).errors;
      if (Array.isArray(errors)) next.push(...(errors as unknown[]));
    }
    level = next;
  }
  return false;
}

// DOMException's `code` is a number (23 for TimeoutError): only string codes are Node's and undici's.
const codeOf = (link: object): unknown => (link as { code?: unknown }).code;
const nameOf = (link: object): unknown => (link as { name?: unknown }).name;

/**
 * Whether `error` is a failure to connect to or hear from the server that is worth retrying: it, or an
 * error in its `cause` chain (bounded depth, `AggregateError`s included), has a code among ECONNRESET,
 * ECONNREFUSED, ECONNABORTED, ETIMEDOUT, EPIPE, EHOSTUNREACH, ENETUNREACH, ENETDOWN, EAI_AGAIN and undici's
 * UND_ERR_SOCKET, UND_ERR_CONNECT_TIMEOUT, UND_ERR_HEADERS_TIMEOUT, UND_ERR_BODY_TIMEOUT, UND_ERR_CLOSED.
 * `fetch`'s `TypeError: fetch failed` is one when its `cause` is. ENOTFOUND (no such host) is not.
 *
 * @example
 * ```ts
 * try { await fetch('http://127.0.0.1:1/'); } catch (e) { isNetworkError(e); } // true: ECONNREFUSED
 * ```
 */
export function isNetworkError(error: unknown): boolean {
  return someInChain(error, (link) => {
    const code = codeOf(link);
    return typeof code === 'string' && NETWORK_ERROR_CODES.has(code);
  });
}

/**
 * Whether `error` is a timeout: a `TimeoutError` (the `DOMException` that `AbortSignal.timeout()` aborts
 * with, or any error of that name), or an error with code ETIMEDOUT, UND_ERR_CONNECT_TIMEOUT,
 * UND_ERR_HEADERS_TIMEOUT or UND_ERR_BODY_TIMEOUT; the `cause` chain is searched too, so Node's
 * `AbortError` whose cause is a `TimeoutError` counts.
 *
 * @example
 * ```ts
 * try { await fetch(url, { signal: AbortSignal.timeout(1000) }); } catch (e) { isTimeoutError(e); }
 * ```
 */
export function isTimeoutError(error: unknown): boolean {
  return someInChain(error, (link) => {
    const code = codeOf(link);
    return nameOf(link) === 'TimeoutError' || (typeof code === 'string' && TIMEOUT_ERROR_CODES.has(code));
  });
}

/**
 * Whether `error` is a refused connection: it, or an error in its `cause` chain (bounded, `AggregateError`s
 * included, as Node's happy-eyeballs connect reports one error per address), has code ECONNREFUSED.
 *
 * @example
 * ```ts
 * try { await fetch('http://127.0.0.1:1/'); } catch (e) { isConnectionRefused(e); } // true
 * ```
 */
export function isConnectionRefused(error: unknown): boolean {
  return someInChain(error, (link) => codeOf(link) === 'ECONNREFUSED');
}

/** A caller's own abort: the `DOMException` of `AbortController#abort()`, or Node's `AbortError`. */
function isAbortError(error: unknown): boolean {
  return someInChain(error, (link) => nameOf(link) === 'AbortError' || codeOf(link) === 'ABORT_ERR');
}

/**
 * What a thrown error means for retrying the call:
 * - a timeout ({@link isTimeoutError}) → `retryable`; checked first, because an abort caused by
 *   `AbortSignal.timeout()` is a timeout (an overall deadline is the retry loop's to enforce, not this);
 * - a caller's abort (`AbortError`) → `permanent`: the caller asked to stop, retrying would defy it;
 * - a network failure ({@link isNetworkError}) → `retryable`;
 * - anything else (a `TypeError` from a bug, a failed `JSON.parse`, a thrown string) → `permanent`.
 *
 * Never returns `success`.
 *
 * @example
 * ```ts
 * classifyError(new DOMException('aborted', 'AbortError')); // 'permanent'
 * classifyError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })); // 'retryable'
 * ```
 */
export function classifyError(error: unknown): HttpOutcome {
  if (isTimeoutError(error)) return HttpOutcome.RETRYABLE;
  if (isAbortError(error)) return HttpOutcome.PERMANENT;
  return isNetworkError(error) ? HttpOutcome.RETRYABLE : HttpOutcome.PERMANENT;
}
