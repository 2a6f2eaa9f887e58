import { describe, expect, it } from 'vitest';
import { scheduleFor } from '../src/backoff/schedule-for.js';
import { FailureClass, failureClassOf, failureClassOfError, failureClassOfStatus } from '../src/http/failure-class.js';
import { DEFAULT_POLICY, type RetryPolicy } from '../src/policy/retry-policy.js';
import { RETRY_POLICY_FIELDS, validatePolicy } from '../src/policy/validate-policy.js';
import { planRetry } from '../src/retry/plan-retry.js';
import { retry } from '../src/retry/retry.js';
import { RetryExhaustedError } from '../src/retry/retry-errors.js';
import { ManualClock } from '../src/testing/manual-clock.js';
import { seededRandom, sequenceRandom } from '../src/testing/seeded-random.js';

const messages = (input: unknown, path?: string) => {
  const r = validatePolicy(input, path);
  return r.ok ? [] : r.violations.map((v) => v.message);
};

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
const reset = () => Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
const timedOut = () => new DOMException('The operation was aborted due to timeout', 'TimeoutError');

describe('failure classes', () => {
  it('class statuses: 429 is rate limited, every 5xx a server error, the rest none', () => {
    expect(failureClassOfStatus(429)).toBe('rateLimited');
    expect([500, 502, 503, 504, 599].map(failureClassOfStatus)).toEqual(Array(5).fill('serverError'));
    expect([408, 425, 404, 200, 301].map(failureClassOfStatus)).toEqual(Array(5).fill(undefined));
  });

  it('class errors: timeouts, refused connections (in the cause chain too), the rest none', () => {
    expect(failureClassOfError(timedOut())).toBe('timeout');
    expect(failureClassOfError(Object.assign(new Error('x'), { code: 'UND_ERR_HEADERS_TIMEOUT' }))).toBe('timeout');
    expect(failureClassOfError(new TypeError('fetch failed', { cause: refused() }))).toBe('connectionRefused');
    expect(failureClassOfError(new AggregateError([refused(), refused()]))).toBe('connectionRefused');
    expect(failureClassOfError(reset())).toBeUndefined();
    expect(failureClassOfError(new Error('boom'))).toBeUndefined();
  });

  it('failureClassOf reads an HTTP status where there is one (a Response, an HTTP client error), else the error', () => {
    expect(failureClassOf(new Response(null, { status: 429 }))).toBe('rateLimited');
    expect(failureClassOf(Object.assign(new Error('HTTP 503'), { statusCode: 503 }))).toBe('serverError');
    expect(failureClassOf({ response: { status: 502 } })).toBe('serverError');
    expect(failureClassOf({ status: 408 })).toBeUndefined();
    expect(failureClassOf(refused())).toBe('connectionRefused');
    expect(failureClassOf('a string')).toBeUndefined();
  });
});

describe('backoffByClass: validation', () => {
  it('is a known policy field, normalised to the classes and fields given, in a fixed order', () => {
    expect(RETRY_POLICY_FIELDS).toContain('backoffByClass');
    const r = validatePolicy({
      ...DEFAULT_POLICY,
      backoffByClass: { timeout: { jitterType: 'NONE', initialDelayMs: 50 }, rateLimited: { maxDelayMs: 60_000, initialDelayMs: 5_000 } },
    });
    expect(r.ok).toBe(true);
    const { backoffByClass } = (r as { policy: RetryPolicy }).policy;
    expect(JSON.stringify(backoffByClass)).toBe('{"rateLimited":{"initialDelayMs":5000,"maxDelayMs":60000},"timeout":{"initialDelayMs":50,"jitterType":"NONE"}}');
  });

  it.each([
    [5, 'backoffByClass must be an object of schedules keyed by failure class (rateLimited, serverError, timeout, connectionRefused) when present, got 5'],
    [{ gatewayTimeout: {} }, 'backoffByClass.gatewayTimeout is not a failure class (known: rateLimited, serverError, timeout, connectionRefused)'],
    [{ timeout: 100 }, 'backoffByClass.timeout must be a backoff schedule (an object with some of backoffType, initialDelayMs, multiplier, maxDelayMs, jitterType), got 100'],
    [{ timeout: { maxAttempts: 2 } }, 'backoffByClass.timeout.maxAttempts is not a backoff schedule field (known: backoffType, initialDelayMs, multiplier, maxDelayMs, jitterType)'],
    [{ serverError: { backoffType: 'SLOW' } }, 'backoffByClass.serverError.backoffType must be one of EXPONENTIAL, LINEAR, FIXED, got "SLOW"'],
    [{ serverError: { initialDelayMs: 0 } }, 'backoffByClass.serverError.initialDelayMs must be a number > 0, got 0'],
    [{ serverError: { multiplier: 0.5 } }, 'backoffByClass.serverError.multiplier must be a finite number >= 1, got 0.5'],
    [{ serverError: { maxDelayMs: 1e15 } }, 'backoffByClass.serverError.maxDelayMs must be <= 315360000000, got 1000000000000000'],
    [{ serverError: { jitterType: null } }, 'backoffByClass.serverError.jitterType must be one of NONE, FULL, EQUAL, DECORRELATED, got null'],
    [{ rateLimited: { initialDelayMs: 500, maxDelayMs: 400 } }, 'backoffByClass.rateLimited.maxDelayMs must be >= initialDelayMs (500), got 400'],
    // Merged over the main schedule (initialDelayMs 100, maxDelayMs 10,000): the bound it inherits is named.
    [{ rateLimited: { maxDelayMs: 50 } }, "backoffByClass.rateLimited.maxDelayMs must be >= initialDelayMs (100, the main schedule's), got 50"],
    [
      { rateLimited: { initialDelayMs: 30_000 } },
      "backoffByClass.rateLimited.initialDelayMs must be <= maxDelayMs (10000, the main schedule's; or give this class its own maxDelayMs), got 30000",
    ],
  ])('refuses backoffByClass %j with a message naming the field and the rule', (backoffByClass, message) => {
    expect(messages({ ...DEFAULT_POLICY, backoffByClass })).toEqual([message]);
  });

  it('reports every violation at once, main fields and classes alike, under the path', () => {
    expect(
      messages({ ...DEFAULT_POLICY, maxAttempts: 0, backoffByClass: { timeout: { multiplier: 0 }, connectionRefused: { initialDelayMs: -1, foo: 1 } } }, 'policy'),
    ).toEqual([
      'policy.maxAttempts must be an integer >= 1, got 0',
      'policy.backoffByClass.timeout.multiplier must be a finite number >= 1, got 0',
      'policy.backoffByClass.connectionRefused.foo is not a backoff schedule field (known: backoffType, initialDelayMs, multiplier, maxDelayMs, jitterType)',
      'policy.backoffByClass.connectionRefused.initialDelayMs must be a number > 0, got -1',
    ]);
  });

  it('a class that sets neither bound is not blamed for the main schedule breaking its own', () => {
    expect(messages({ ...DEFAULT_POLICY, maxDelayMs: 50, backoffByClass: { timeout: { jitterType: 'NONE' } } })).toEqual([
      'maxDelayMs must be >= initialDelayMs (100), got 50',
    ]);
  });
});

const classPolicy: RetryPolicy = {
  maxAttempts: 10,
  backoffType: 'EXPONENTIAL',
  initialDelayMs: 100,
  multiplier: 2,
  maxDelayMs: 10_000,
  jitterType: 'FULL',
  backoffByClass: {
    rateLimited: { initialDelayMs: 1_000, maxDelayMs: 60_000 },
    serverError: { backoffType: 'FIXED', initialDelayMs: 250, jitterType: 'NONE' },
    timeout: { initialDelayMs: 400, jitterType: 'EQUAL' },
    connectionRefused: { backoffType: 'LINEAR', initialDelayMs: 50, jitterType: 'NONE' },
  },
};

describe('backoffByClass: the schedule a failure follows', () => {
  it('scheduleFor merges the class over the main schedule, and is the policy itself for no class', () => {
    expect(scheduleFor(classPolicy, 'rateLimited')).toEqual({
      backoffType: 'EXPONENTIAL',
      initialDelayMs: 1_000,
      multiplier: 2,
      maxDelayMs: 60_000,
      jitterType: 'FULL',
    });
    expect(scheduleFor(classPolicy, undefined)).toBe(classPolicy);
    const { serverError: _, ...others } = classPolicy.backoffByClass ?? {};
    const without = { ...classPolicy, backoffByClass: others };
    expect(scheduleFor(without, 'serverError')).toBe(without);
    expect(scheduleFor(DEFAULT_POLICY, 'timeout')).toBe(DEFAULT_POLICY);
  });

  it('planRetry computes the delay on the class schedule, for the run-wide retry number', () => {
    const plan = (failureClass: FailureClass | undefined, attemptsMade: number) =>
      planRetry({ policy: { ...classPolicy, jitterType: 'NONE' }, attemptsMade, elapsedMs: 0, previousDelayMs: 0, random: () => 0.5, failureClass });
    expect(plan('rateLimited', 3)).toMatchObject({ retry: true, delayMs: 4_000 });
    expect(plan('serverError', 3)).toMatchObject({ retry: true, delayMs: 250 });
    expect(plan('timeout', 3)).toMatchObject({ retry: true, delayMs: 1_200 }); // EQUAL: 800 + 0.5 × 800
    expect(plan('connectionRefused', 3)).toMatchObject({ retry: true, delayMs: 150 });
    expect(plan(undefined, 3)).toMatchObject({ retry: true, delayMs: 400 });
  });

  it('DECORRELATED reads the run\'s previous delay, whichever class chose it', () => {
    const policy: RetryPolicy = {
      ...classPolicy,
      jitterType: 'DECORRELATED',
      backoffByClass: { rateLimited: { initialDelayMs: 1_000, maxDelayMs: 30_000 } },
    };
    const random = sequenceRandom(0.5);
    let previousDelayMs = 0;
    const delays: number[] = [];
    for (const [n, failureClass] of [[1, 'rateLimited'], [2, 'serverError'], [3, 'rateLimited']] as const) {
      const plan = planRetry({ policy, attemptsMade: n, elapsedMs: 0, previousDelayMs, random, failureClass });
      if (!plan.retry) throw new Error('expected a retry');
      previousDelayMs = plan.previousDelayMs;
      delays.push(plan.delayMs);
    }
    // uniform(1000, 3 × max(1000, 0)); then the main schedule: uniform(100, 3 × 2000); then uniform(1000, 3 × 3050).
    expect(delays).toEqual([2_000, 3_050, 5_075]);
  });

  it('retry() waits each class its own delay, exactly, with a seeded random', async () => {
    const clock = new ManualClock();
    const outcomes: (() => { status: number })[] = [
      () => ({ status: 429 }),
      () => ({ status: 503 }),
      () => {
        throw timedOut();
      },
      () => {
        throw refused();
      },
      () => {
        throw reset();
      },
      () => ({ status: 429 }),
      () => ({ status: 200 }),
    ];
    const promise = retry(({ attempt }) => (outcomes[attempt - 1] as () => { status: number })(), classPolicy, {
      clock,
      random: seededRandom(1),
      retryOnResult: (r) => r.status !== 200,
    });
    await clock.runAll();
    expect(await promise).toEqual({ status: 200 });
    // Seed 1 draws 0.6270739…, 0.0027357…, 0.5274470…, 0.9810509…; FIXED and NONE schedules draw nothing.
    expect(clock.sleeps).toEqual([
      627.0739405881613, // 429, retry 1: rateLimited, FULL over min(60 s, 1 s × 2^0)
      250, // 503: serverError, FIXED 250 ms without jitter
      802.1885769441724, // timeout, retry 3: EQUAL over 400 ms × 2^2 = 1,600: 800 + 0.0027357… × 800
      200, // ECONNREFUSED, retry 4: LINEAR 50 ms × 4
      843.9152639359236, // ECONNRESET is no class: the main schedule, retry 5: FULL over 100 ms × 2^4 = 1,600
      31_393.63095909357, // 429 again, retry 6: FULL over 1 s × 2^5 = 32 s
    ]);
  });

  it('retry() asks a custom classifier, only when the policy has classes', async () => {
    const seen: unknown[] = [];
    const failureClass = (failure: unknown) => {
      seen.push(failure);
      return FailureClass.RATE_LIMITED;
    };
    const run = async (policy: Partial<RetryPolicy>) => {
      const clock = new ManualClock();
      const promise = retry(() => Promise.reject(new Error('slow down')), { ...policy, maxAttempts: 2, jitterType: 'NONE' }, { clock, failureClass });
      const settled = promise.catch((error: unknown) => error);
      await clock.runAll();
      expect(await settled).toBeInstanceOf(RetryExhaustedError);
      return clock.sleeps;
    };
    expect(await run({ backoffByClass: { rateLimited: { initialDelayMs: 3_000 } } })).toEqual([3_000]);
    // Asked once per failure: the last one too, before planRetry finds attempts spent.
    expect(seen).toHaveLength(2);
    expect(await run({})).toEqual([100]);
    expect(seen).toHaveLength(2);
  });
});
