import { RetrydApiError, RetrydUnreachableError } from '../service/errors.js';

/**
 * Statuses of `POST /retry-tasks` that say this request will never be taken, whenever it is sent again: 400 (a field
 * breaks a rule, the target is not allowed, the policy is not registered), 409, 413 (too large), 415 and 422 (its
 * idempotency key already belongs to a different request). Any other refusal (401, 403, 404, 429, 5xx) is about the
 * service or the client's settings, not the entry, and would refuse every entry alike.
 */
const REFUSED_FOR_GOOD: ReadonlySet<number> = new Set([400, 409, 413, 415, 422]);

/** Whether the service refused this request for good (see {@link REFUSED_FOR_GOOD}): a spool sets the entry aside. */
export function refusedForGood(error: unknown): error is RetrydApiError {
  return error instanceof RetrydApiError && REFUSED_FOR_GOOD.has(error.status);
}

/**
 * Whether the service could not take a request for now: no answer at all, 408, 429 or a 5xx (a restart, a store
 * outage, a shutdown). A call that failed so is worth spooling; one refused for any other reason is the caller's to fix.
 */
export function serviceUnavailable(error: unknown): boolean {
  if (error instanceof RetrydUnreachableError) return true;
  return error instanceof RetrydApiError && (error.status >= 500 || error.status === 408 || error.status === 429);
}
