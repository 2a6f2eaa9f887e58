import { DEFAULT_POLICY, type RetryPolicy } from '@retryd/core';
import { copyWith } from './copy-with.js';

/**
 * The deadline (`totalBudgetMs`) of a call that `retryingFetch` or `attachRetry` retries when its policy names none:
 * 30 s.
 *
 * A call retried in process holds up whoever made it, most often a request to your own service, whose caller, proxies
 * and load balancers stop waiting after a few tens of seconds (Heroku's router at 30 s, AWS API Gateway at 29 s):
 * retries past that do work that no one reads, and a `Retry-After` of an hour would hold the request for an hour. So
 * a hint that lands past the deadline gives up at once (`retry_after_beyond_budget`), and an attempt still waiting
 * for its answer at the deadline is aborted. Give a longer `totalBudgetMs` (at most core's `MAX_POLICY_MS`) for calls
 * that may take longer.
 */
export const IN_REQUEST_DEADLINE_MS = 30_000;

/**
 * The deadline (`totalBudgetMs`, counted from the enqueue) of a `RetryQueue` call when the queue's policy names none:
 * 24 hours.
 *
 * No one waits on a queued call, so the queue honours a long `Retry-After` (an hour's is kept), but its calls outlive
 * the page in IndexedDB: without a deadline, a page opened again a week later would send last week's calls into a
 * world that has moved on. A day covers an outage, or a night with the laptop shut.
 */
export const QUEUE_DEADLINE_MS = 24 * 3600 * 1000;

const defaults = new Map<number, Partial<RetryPolicy>>();

/**
 * `policy` with `deadlineMs` as its `totalBudgetMs` when it names none. No policy at all gives one object per deadline,
 * made once, so that `retry()`'s validation of it is cached across calls.
 */
export function withDefaultDeadline(policy: Partial<RetryPolicy> | undefined, deadlineMs: number): Partial<RetryPolicy> {
  if (policy === undefined) {
    let made = defaults.get(deadlineMs);
    if (made === undefined) {
      made = Object.freeze(copyWith<Partial<RetryPolicy>>(DEFAULT_POLICY, { totalBudgetMs: deadlineMs }));
      defaults.set(deadlineMs, made);
    }
    return made;
  }
  // copyWith, not a spread: `retry()` reads the policy's fields on every call (see copyWith).
  return policy.totalBudgetMs === undefined ? copyWith(policy, { totalBudgetMs: deadlineMs }) : policy;
}
