import { IllegalTransitionError, type RetryPolicy } from '@retryd/core';
import { seededRandom, sequenceRandom } from '@retryd/core/testing';
import { describe, expect, it } from 'vitest';
import type { RetryTask } from '../src/domain/task.js';
import type { AttemptResult } from '../src/engine/attempt-result.js';
import { permanentStatusReason } from '../src/domain/dead-letter-reason.js';
import { decideAttemptOutcome, decideBeforeAttempt, decideLeaseExpired } from '../src/engine/decide-outcome.js';
import { TargetBlockedError } from '../src/security/guarded-connector.js';
import { makeTask, T0 } from './fixtures/tasks.js';

const POLICY: RetryPolicy = {
  maxAttempts: 5,
  backoffType: 'EXPONENTIAL',
  initialDelayMs: 100,
  multiplier: 2,
  maxDelayMs: 10_000,
  jitterType: 'NONE',
};
const NOW = T0 + 25;
/** Three periods apart, so that each final status's expiresAt tells which one it took. */
const RETENTION = { succeededMs: 1_000_000, deadLettersMs: 2_000_000, cancelledMs: 3_000_000 };
const ctx = (overrides: Partial<{ policy: RetryPolicy; now: number; random: () => number; maxRetryAfterMs: number }> = {}) => ({
  policy: POLICY,
  now: NOW,
  random: seededRandom(1),
  workerId: 'w1',
  retention: RETENTION,
  ...overrides,
});

/** A task as `claimDue` hands it over: IN_FLIGHT under a lease, claimed at T0. */
function claimed(overrides: Partial<RetryTask> = {}): RetryTask {
  return makeTask({
    status: 'IN_FLIGHT',
    fencingToken: 3,
    leaseOwner: 'w1',
    leaseExpiresAt: T0 + 60_000,
    updatedAt: T0,
    ...overrides,
  });
}

const response = (status: number, headers: Record<string, string> = {}, bodySnippet: string | null = null): AttemptResult => ({
  kind: 'response',
  status,
  headers,
  bodySnippet,
});
const failure = (code: string, message: string): AttemptResult => ({
  kind: 'error',
  error: Object.assign(new Error(message), { code }),
  message,
});
const at = (result: AttemptResult, startedAt = T0) => ({ startedAt, result });

describe('decideAttemptOutcome', () => {
  it('a 2xx succeeds, logs the attempt, and offers no cancel alternative (the call did happen)', () => {
    const task = claimed();
    const completion = decideAttemptOutcome(task, at(response(201, {}, 'created')), ctx());
    expect(completion).toEqual({
      tenantId: task.tenantId,
      taskId: task.taskId,
      fencingToken: 3,
      attempt: {
        tenantId: task.tenantId,
        taskId: task.taskId,
        attemptNumber: 1,
        startedAt: T0,
        durationMs: 25,
        responseStatus: 201,
        errorMessage: null,
        outcome: 'succeeded',
        responseBodySnippet: 'created',
        nextAttemptAt: null,
        workerId: 'w1',
        delayedBy: null,
        backoffAt: null,
      },
      next: {
        status: 'SUCCEEDED',
        attemptNumber: 1,
        nextAttemptAt: null,
        runStartedAt: T0,
        lastDelayMs: 0,
        lastError: null,
        lastResponseStatus: 201,
        deadLetterReason: null,
        expiresAt: NOW + RETENTION.succeededMs,
      },
    });
  });

  it('a retryable status schedules the next attempt after the backoff, with a CANCELLED alternative', () => {
    const completion = decideAttemptOutcome(claimed(), at(response(503, {}, 'busy')), ctx());
    expect(completion.next).toEqual({
      status: 'PENDING',
      attemptNumber: 1,
      nextAttemptAt: NOW + 100,
      runStartedAt: T0,
      lastDelayMs: 100,
      lastError: 'HTTP 503',
      lastResponseStatus: 503,
      deadLetterReason: null,
      expiresAt: null,
    });
    expect(completion.attempt).toMatchObject({ outcome: 'retry_scheduled', nextAttemptAt: NOW + 100, errorMessage: 'HTTP 503', responseBodySnippet: 'busy' });
    expect(completion.ifCancelRequested).toEqual({ ...completion.next, status: 'CANCELLED', nextAttemptAt: null, expiresAt: NOW + RETENTION.cancelledMs });
    // If the cancel is what the store applies, the log must not announce a retry that never comes.
    expect(completion.attemptIfCancelRequested).toEqual({ ...completion.attempt, outcome: 'cancelled', nextAttemptAt: null });
    expect(completion.requireLeaseExpiredBy).toBeUndefined();
  });

  it('counts attempts per run and measures the budget from the run start', () => {
    // Attempt 8 of the task's life is the 3rd of a run replayed after 5: retry n=3 → 100 × 2² = 400.
    const task = claimed({ attemptNumber: 7, runAttemptOffset: 5, runStartedAt: T0 - 1_000, lastDelayMs: 200 });
    const completion = decideAttemptOutcome(task, at(response(500)), ctx());
    expect(completion.next).toMatchObject({ status: 'PENDING', attemptNumber: 8, nextAttemptAt: NOW + 400, runStartedAt: T0 - 1_000 });
    expect(completion.attempt?.attemptNumber).toBe(8);
  });

  it('follows the schedule the policy gives the failure’s class: 429, 5xx, timeout, refused connection', () => {
    const policy: RetryPolicy = {
      ...POLICY,
      backoffByClass: {
        rateLimited: { initialDelayMs: 1_000 },
        serverError: { initialDelayMs: 200 },
        timeout: { initialDelayMs: 300 },
        connectionRefused: { initialDelayMs: 50 },
      },
    };
    const timeout: AttemptResult = { kind: 'error', error: Object.assign(new Error('no response within 10 ms'), { name: 'TimeoutError' }), message: 'timeout' };
    const delayOf = (result: AttemptResult) => (decideAttemptOutcome(claimed(), at(result), ctx({ policy })).next.nextAttemptAt ?? 0) - NOW;
    expect(delayOf(response(429))).toBe(1_000);
    expect(delayOf(response(504))).toBe(200);
    expect(delayOf(timeout)).toBe(300);
    expect(delayOf(failure('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:9'))).toBe(50);
    expect(delayOf(failure('ECONNRESET', 'read ECONNRESET'))).toBe(100);
    expect(delayOf(response(408))).toBe(100);
  });

  it('keeps runStartedAt (set at enqueue or replay); a task without one starts it at its first attempt', () => {
    expect(decideAttemptOutcome(claimed(), at(response(503), T0 + 3), ctx()).next.runStartedAt).toBe(T0 + 3);
    const later = claimed({ attemptNumber: 1, runStartedAt: T0 - 500 });
    expect(decideAttemptOutcome(later, at(response(503)), ctx()).next.runStartedAt).toBe(T0 - 500);
  });

  it('applies jitter with the injected random, exactly', () => {
    const policy = { ...POLICY, jitterType: 'FULL' as const };
    const expected = seededRandom(42)() * 100;
    const completion = decideAttemptOutcome(claimed(), at(response(503)), ctx({ policy, random: seededRandom(42) }));
    expect(completion.next.lastDelayMs).toBe(expected);
    expect(completion.next.nextAttemptAt).toBe(Math.ceil(NOW + expected));
  });

  it('feeds the previous delay to DECORRELATED jitter, but not across a replay', () => {
    const policy = { ...POLICY, jitterType: 'DECORRELATED' as const };
    const second = claimed({ attemptNumber: 1, runStartedAt: T0, lastDelayMs: 300 });
    // uniform(100, 300 × 3) at 0.5 = 500
    expect(decideAttemptOutcome(second, at(response(503)), ctx({ policy, random: sequenceRandom(0.5) })).next.lastDelayMs).toBe(500);
    const replayed = claimed({ attemptNumber: 4, runAttemptOffset: 4, lastDelayMs: 3_000 });
    // first retry of the new run: uniform(100, 100 × 3) at 0.5 = 200
    expect(decideAttemptOutcome(replayed, at(response(503)), ctx({ policy, random: sequenceRandom(0.5) })).next.lastDelayMs).toBe(200);
  });

  it('honours Retry-After (seconds and HTTP-date) instead of the backoff, keeping the backoff state', () => {
    const task = claimed({ attemptNumber: 1, runStartedAt: T0, lastDelayMs: 100 });
    const seconds = decideAttemptOutcome(task, at(response(429, { 'retry-after': '2' })), ctx());
    expect(seconds.next).toMatchObject({ status: 'PENDING', nextAttemptAt: NOW + 2_000, lastDelayMs: 100 });
    const date = new Date(T0 + 5_000).toUTCString();
    const dated = decideAttemptOutcome(task, at(response(503, { 'Retry-After': date })), ctx({ now: T0 }));
    expect(dated.next.nextAttemptAt).toBe(T0 + 5_000);
  });

  it('exhausts when Retry-After asks for a wait past the budget', () => {
    const policy = { ...POLICY, totalBudgetMs: 1_000 };
    const completion = decideAttemptOutcome(claimed(), at(response(503, { 'retry-after': '5' })), ctx({ policy }));
    expect(completion.next).toMatchObject({ status: 'EXHAUSTED', nextAttemptAt: null, deadLetterReason: 'retry_after_beyond_budget' });
    expect(completion.attempt).toMatchObject({ outcome: 'exhausted', nextAttemptAt: null });
  });

  it('ends a task whose Retry-After asks for more than the service allows, beyond its policy\'s own delays', () => {
    const task = claimed({ attemptNumber: 1, runStartedAt: T0, lastDelayMs: 100 });
    // No budget: without the limit, 999999999 s parked the task for 31 years.
    const decades = decideAttemptOutcome(task, at(response(429, { 'retry-after': '999999999' })), ctx({ maxRetryAfterMs: 3_600_000 }));
    expect(decades.next).toMatchObject({
      status: 'EXHAUSTED',
      nextAttemptAt: null,
      lastDelayMs: 100,
      deadLetterReason: 'retry_after_beyond_limit',
      lastError: 'HTTP 429: Retry-After asked for 999999999 s, more than the 3600 s allowed',
      expiresAt: NOW + RETENTION.deadLettersMs,
    });
    expect(decades.attempt).toMatchObject({ outcome: 'exhausted', errorMessage: 'HTTP 429', nextAttemptAt: null });
    // An HTTP-date far ahead is the same.
    const dated = decideAttemptOutcome(task, at(response(503, { 'retry-after': 'Fri, 01 Jan 2058 00:00:00 GMT' })), ctx({ maxRetryAfterMs: 3_600_000 }));
    expect(dated.next.deadLetterReason).toBe('retry_after_beyond_limit');
    // Up to the limit it is honoured as before.
    const hour = decideAttemptOutcome(task, at(response(429, { 'retry-after': '3600' })), ctx({ maxRetryAfterMs: 3_600_000 }));
    expect(hour.next).toMatchObject({ status: 'PENDING', nextAttemptAt: NOW + 3_600_000 });
    // A policy that backs off longer than the limit itself honours a Retry-After as long as its longest delay.
    const patient = { ...POLICY, maxDelayMs: 7_200_000 };
    const twoHours = decideAttemptOutcome(task, at(response(429, { 'retry-after': '7200' })), ctx({ policy: patient, maxRetryAfterMs: 3_600_000 }));
    expect(twoHours.next).toMatchObject({ status: 'PENDING', nextAttemptAt: NOW + 7_200_000 });
    expect(decideAttemptOutcome(task, at(response(429, { 'retry-after': '7201' })), ctx({ policy: patient, maxRetryAfterMs: 3_600_000 })).next.status).toBe('EXHAUSTED');
    // Out of attempts says so, whatever the Retry-After.
    const last = claimed({ attemptNumber: 4, runStartedAt: T0 });
    expect(decideAttemptOutcome(last, at(response(429, { 'retry-after': '999999999' })), ctx({ maxRetryAfterMs: 3_600_000 })).next.deadLetterReason).toBe('max_attempts');
  });

  it('exhausts after maxAttempts attempts of the run', () => {
    const task = claimed({ attemptNumber: 4, runStartedAt: T0, lastDelayMs: 800 });
    const completion = decideAttemptOutcome(task, at(response(503)), ctx());
    expect(completion.next).toEqual({
      status: 'EXHAUSTED',
      attemptNumber: 5,
      nextAttemptAt: null,
      runStartedAt: T0,
      lastDelayMs: 800,
      lastError: 'HTTP 503',
      lastResponseStatus: 503,
      deadLetterReason: 'max_attempts',
      expiresAt: NOW + RETENTION.deadLettersMs,
    });
    expect(completion.ifCancelRequested?.status).toBe('CANCELLED');
  });

  it('clips the delay to the budget, and exhausts once the budget has no room left', () => {
    const policy = { ...POLICY, totalBudgetMs: 1_000, estimatedCallMs: 100 };
    // latest start = 900; elapsed 850 → 50 ms left, less than the 100 ms backoff.
    const clipped = decideAttemptOutcome(claimed({ runStartedAt: NOW - 850 }), at(response(503)), ctx({ policy }));
    expect(clipped.next).toMatchObject({ status: 'PENDING', nextAttemptAt: NOW + 50 });
    const spent = decideAttemptOutcome(claimed({ runStartedAt: NOW - 950 }), at(response(503)), ctx({ policy }));
    expect(spent.next).toMatchObject({ status: 'EXHAUSTED', deadLetterReason: 'budget' });
  });

  it.each([400, 404, 409, 501, 302, 304, 101])('fails a %i at once, whatever attempts are left', (status) => {
    const completion = decideAttemptOutcome(claimed(), at(response(status)), ctx());
    expect(completion.next).toMatchObject({ status: 'FAILED', nextAttemptAt: null, deadLetterReason: `permanent_status:${status}` });
    expect(completion.attempt).toMatchObject({ outcome: 'failed', responseStatus: status, errorMessage: `HTTP ${status}` });
    expect(completion.ifCancelRequested?.status).toBe('CANCELLED');
  });

  it('retries the statuses the policy names, and only those', () => {
    const policy = { ...POLICY, retryableStatusCodes: [409] };
    expect(decideAttemptOutcome(claimed(), at(response(409)), ctx({ policy })).next.status).toBe('PENDING');
    expect(decideAttemptOutcome(claimed(), at(response(503)), ctx({ policy })).next).toMatchObject({
      status: 'FAILED',
      deadLetterReason: 'permanent_status:503',
    });
  });

  it.each([
    ['ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:9'],
    ['UND_ERR_SOCKET', 'other side closed'],
    ['UND_ERR_HEADERS_TIMEOUT', 'no response headers within 30000 ms'],
    ['UND_ERR_CONNECT_TIMEOUT', 'could not connect within 5000 ms'],
  ])('retries a network failure or timeout (%s) with its message logged', (code, message) => {
    const completion = decideAttemptOutcome(claimed(), at(failure(code, message)), ctx());
    expect(completion.next).toMatchObject({ status: 'PENDING', nextAttemptAt: NOW + 100, lastError: message, lastResponseStatus: null });
    expect(completion.attempt).toMatchObject({ responseStatus: null, errorMessage: message, responseBodySnippet: null });
  });

  it('fails on an error that is neither a network failure nor a timeout', () => {
    const result: AttemptResult = { kind: 'error', error: new TypeError('bad header'), message: 'bad header' };
    expect(decideAttemptOutcome(claimed(), at(result), ctx()).next).toMatchObject({ status: 'FAILED', deadLetterReason: 'permanent_error' });
  });

  it('fails a connection the target guard refused as target_blocked, never retried, with the guard’s sentence as lastError', () => {
    const error = new TargetBlockedError('169.254.169.254 is link-local (the cloud metadata service): blocked unless --allow-targets covers it');
    const message = `${error.message} (TARGET_BLOCKED)`;
    const completion = decideAttemptOutcome(claimed(), at({ kind: 'error', error, message }), ctx());
    expect(completion.next).toMatchObject({ status: 'FAILED', deadLetterReason: 'target_blocked', lastError: message, nextAttemptAt: null });
    expect(completion.attempt).toMatchObject({ outcome: 'failed', errorMessage: message, nextAttemptAt: null });
    // Whatever else the chain holds (undici wraps some connect errors): a refused address is not a network failure.
    const wrapped = Object.assign(new Error('connect failed'), { code: 'UND_ERR_SOCKET', cause: error });
    expect(decideAttemptOutcome(claimed(), at({ kind: 'error', error: wrapped, message }), ctx()).next).toMatchObject({
      status: 'FAILED',
      deadLetterReason: 'target_blocked',
    });
  });

  it('moves only through the lifecycle: a task that is not IN_FLIGHT cannot complete', () => {
    expect(() => decideAttemptOutcome(makeTask(), at(response(200)), ctx())).toThrow(IllegalTransitionError);
  });
});

describe('decideBeforeAttempt', () => {
  it('lets a task with room in its run and budget go ahead', () => {
    expect(decideBeforeAttempt(claimed(), { ...POLICY, totalBudgetMs: 1_000 }, NOW, RETENTION)).toBeNull();
  });

  it('exhausts a task whose budget is spent, with no attempt made or counted', () => {
    const policy = { ...POLICY, totalBudgetMs: 1_000, estimatedCallMs: 200 };
    const task = claimed({ attemptNumber: 2, runStartedAt: NOW - 801, lastError: 'HTTP 503', lastResponseStatus: 503, lastDelayMs: 200 });
    const completion = decideBeforeAttempt(task, policy, NOW, RETENTION);
    expect(completion).toEqual({
      tenantId: task.tenantId,
      taskId: task.taskId,
      fencingToken: 3,
      next: {
        status: 'EXHAUSTED',
        attemptNumber: 2,
        nextAttemptAt: null,
        runStartedAt: NOW - 801,
        lastDelayMs: 200,
        lastError: 'HTTP 503',
        lastResponseStatus: 503,
        deadLetterReason: 'budget',
        expiresAt: NOW + RETENTION.deadLettersMs,
      },
      ifCancelRequested: {
        status: 'CANCELLED',
        attemptNumber: 2,
        nextAttemptAt: null,
        runStartedAt: NOW - 801,
        lastDelayMs: 200,
        lastError: 'HTTP 503',
        lastResponseStatus: 503,
        deadLetterReason: null,
        expiresAt: NOW + RETENTION.cancelledMs,
      },
    });
    expect(decideBeforeAttempt({ ...task, runStartedAt: NOW - 800 }, policy, NOW, RETENTION)).toBeNull();
  });

  it('counts the budget from the run’s start, not its first attempt: a task that waited too long makes none', () => {
    const policy = { ...POLICY, totalBudgetMs: 300 };
    const completion = decideBeforeAttempt(claimed({ runStartedAt: NOW - 301 }), policy, NOW, RETENTION);
    expect(completion?.next).toMatchObject({ status: 'EXHAUSTED', attemptNumber: 0, deadLetterReason: 'budget', runStartedAt: NOW - 301 });
    expect(completion?.attempt).toBeUndefined();
    expect(decideBeforeAttempt(claimed({ runStartedAt: NOW - 300 }), policy, NOW, RETENTION)).toBeNull();
  });

  it('exhausts before the first attempt when the call alone exceeds the budget', () => {
    const completion = decideBeforeAttempt(claimed(), { ...POLICY, totalBudgetMs: 100, estimatedCallMs: 101 }, NOW, RETENTION);
    expect(completion?.next).toMatchObject({ status: 'EXHAUSTED', deadLetterReason: 'budget', runStartedAt: null });
  });

  it('exhausts a run that already made maxAttempts attempts (the policy was lowered)', () => {
    const completion = decideBeforeAttempt(claimed({ attemptNumber: 6, runAttemptOffset: 2 }), { ...POLICY, maxAttempts: 4 }, NOW, RETENTION);
    expect(completion?.next).toMatchObject({ status: 'EXHAUSTED', attemptNumber: 6, deadLetterReason: 'max_attempts' });
    expect(decideBeforeAttempt(claimed({ attemptNumber: 5, runAttemptOffset: 2 }), { ...POLICY, maxAttempts: 4 }, NOW, RETENTION)).toBeNull();
  });

  it('cancels a claimed task on which a cancel was requested, without an attempt', () => {
    const completion = decideBeforeAttempt(claimed({ cancelRequested: true }), POLICY, NOW, RETENTION);
    expect(completion?.next).toMatchObject({ status: 'CANCELLED', nextAttemptAt: null, deadLetterReason: null });
    expect(completion?.attempt).toBeUndefined();
    expect(completion?.ifCancelRequested).toBeUndefined();
  });
});

describe('decideLeaseExpired', () => {
  it('counts and logs the lost attempt as lease_expired, then retries after the backoff', () => {
    const task = claimed({ leaseOwner: 'dead-worker', leaseExpiresAt: T0 + 50, updatedAt: T0 });
    const completion = decideLeaseExpired(task, ctx({ now: T0 + 70 }));
    expect(completion).toEqual({
      tenantId: task.tenantId,
      taskId: task.taskId,
      fencingToken: 3,
      requireLeaseExpiredBy: T0 + 70,
      attempt: {
        tenantId: task.tenantId,
        taskId: task.taskId,
        attemptNumber: 1,
        startedAt: T0,
        durationMs: 50,
        responseStatus: null,
        errorMessage: `lease expired at ${new Date(T0 + 50).toISOString()}: worker dead-worker did not report the attempt's result`,
        outcome: 'lease_expired',
        responseBodySnippet: null,
        nextAttemptAt: T0 + 170,
        workerId: 'dead-worker',
        delayedBy: null,
        backoffAt: null,
      },
      next: {
        status: 'PENDING',
        attemptNumber: 1,
        nextAttemptAt: T0 + 170,
        runStartedAt: T0,
        lastDelayMs: 100,
        lastError: completion.attempt?.errorMessage,
        lastResponseStatus: null,
        deadLetterReason: null,
        expiresAt: null,
      },
      ifCancelRequested: { ...completion.next, status: 'CANCELLED', nextAttemptAt: null, expiresAt: T0 + 70 + RETENTION.cancelledMs },
      // Still `lease_expired` (the result is unknown), but no next time.
      attemptIfCancelRequested: { ...completion.attempt, nextAttemptAt: null },
    });
  });

  it('exhausts when the lost attempt was the run’s last', () => {
    const task = claimed({ attemptNumber: 4, runStartedAt: T0 - 1_000, leaseExpiresAt: T0 + 50 });
    const completion = decideLeaseExpired(task, ctx({ now: T0 + 60 }));
    expect(completion.next).toMatchObject({ status: 'EXHAUSTED', attemptNumber: 5, deadLetterReason: 'max_attempts', nextAttemptAt: null });
    expect(completion.attempt).toMatchObject({ outcome: 'lease_expired', attemptNumber: 5, nextAttemptAt: null });
  });
});

it('names permanent statuses in dead-letter reasons', () => {
  expect(permanentStatusReason(400)).toBe('permanent_status:400');
});

describe('expiresAt: when a final outcome is deleted', () => {
  it('is now plus the retention of how the task ended, and null for a retry', () => {
    const at0 = ctx({ policy: { ...POLICY, maxAttempts: 1 } });
    expect(decideAttemptOutcome(claimed(), at(response(200)), ctx()).next.expiresAt).toBe(NOW + RETENTION.succeededMs);
    expect(decideAttemptOutcome(claimed(), at(response(400)), ctx()).next).toMatchObject({ status: 'FAILED', expiresAt: NOW + RETENTION.deadLettersMs });
    expect(decideAttemptOutcome(claimed(), at(response(503)), at0).next).toMatchObject({ status: 'EXHAUSTED', expiresAt: NOW + RETENTION.deadLettersMs });
    expect(decideAttemptOutcome(claimed(), at(response(503)), ctx()).next).toMatchObject({ status: 'PENDING', expiresAt: null });
  });

  it('gives the cancel alternative the retention of a cancelled task, whatever the attempt would have done', () => {
    const completion = decideAttemptOutcome(claimed(), at(response(503)), ctx());
    expect(completion.ifCancelRequested).toMatchObject({ status: 'CANCELLED', expiresAt: NOW + RETENTION.cancelledMs });
    expect(decideBeforeAttempt(claimed({ cancelRequested: true }), POLICY, NOW, RETENTION)?.next).toMatchObject({
      status: 'CANCELLED',
      expiresAt: NOW + RETENTION.cancelledMs,
    });
  });

  it('ends a lost attempt that was the last with the retention of a dead letter', () => {
    const task = claimed({ leaseExpiresAt: T0 + 50 });
    const completion = decideLeaseExpired(task, ctx({ now: T0 + 70, policy: { ...POLICY, maxAttempts: 1 } }));
    expect(completion.next).toMatchObject({ status: 'EXHAUSTED', expiresAt: T0 + 70 + RETENTION.deadLettersMs });
  });
});

describe("a policy's successStatusCodes", () => {
  it('ends the task SUCCEEDED on such a status, dated as a success, where it would have failed', () => {
    const policy = { ...POLICY, successStatusCodes: [409] };
    const completion = decideAttemptOutcome(claimed(), at(response(409, {}, 'already processed')), ctx({ policy }));
    expect(completion.next).toMatchObject({ status: 'SUCCEEDED', lastResponseStatus: 409, lastError: null, expiresAt: NOW + RETENTION.succeededMs });
    expect(completion.attempt).toMatchObject({ outcome: 'succeeded', responseStatus: 409, errorMessage: null });
    expect(decideAttemptOutcome(claimed(), at(response(409)), ctx()).next).toMatchObject({ status: 'FAILED', deadLetterReason: 'permanent_status:409' });
  });
});
