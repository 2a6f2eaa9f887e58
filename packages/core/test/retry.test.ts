import { describe, expect, it } from 'vitest';
import { BrokenCircuitError, CircuitBreaker } from '../src/breaker/index.js';
import { RetryBudget } from '../src/budget/index.js';
import { InvalidPolicyError } from '../src/policy/validate-policy.js';
import type { RetryPolicy } from '../src/policy/retry-policy.js';
import { retry, type AttemptEvent, type RetryOptions } from '../src/retry/retry.js';
import { RetryableResultError, RetryExhaustedError } from '../src/retry/retry-errors.js';
import { ManualClock } from '../src/testing/manual-clock.js';
import { seededRandom } from '../src/testing/seeded-random.js';

const noJitter: Partial<RetryPolicy> = { maxAttempts: 3, initialDelayMs: 100, multiplier: 2, maxDelayMs: 10_000, jitterType: 'NONE' };

/** Runs `retry` on a manual clock, firing each sleep as soon as it is requested. */
async function run<T>(fn: (attempt: number, clock: ManualClock) => T | Promise<T>, policy: Partial<RetryPolicy>, options: RetryOptions<T> = {}) {
  const clock = options.clock instanceof ManualClock ? options.clock : new ManualClock(1_000);
  const events: AttemptEvent[] = [];
  const calls: number[] = [];
  const promise = retry(
    ({ attempt, elapsedMs }) => {
      calls.push(elapsedMs);
      return fn(attempt, clock);
    },
    policy,
    { clock, random: seededRandom(1), onAttempt: (e) => events.push(e), ...options },
  );
  const settled = promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  await clock.runAll();
  return { result: await settled, clock, events, calls };
}

const failTimes = (n: number, error: () => unknown = () => new Error('boom')) => (attempt: number) => {
  if (attempt <= n) throw error();
  return `ok after ${attempt}`;
};

describe('retry: attempts and delays', () => {
  it('succeeds on the first try without sleeping', async () => {
    const { result, clock, events } = await run(() => 42, noJitter);
    expect(result).toEqual({ ok: true, value: 42 });
    expect(clock.sleeps).toEqual([]);
    expect(events.map((e) => e.outcome)).toEqual(['success_first_try']);
  });

  it('asks retryOnResult once per attempt and classifies a thrown and a rejected first attempt alike, with and without a budget', async () => {
    for (const policy of [noJitter, { ...noJitter, totalBudgetMs: 60_000 }]) {
      const asked: number[] = [];
      const { result, events } = await run((attempt) => ({ attempt }), policy, {
        retryOnResult: (r, context) => {
          asked.push(r.attempt);
          expect(context.attempt).toBe(r.attempt);
          return r.attempt < 3;
        },
      });
      expect(result).toEqual({ ok: true, value: { attempt: 3 } });
      expect(asked).toEqual([1, 2, 3]);
      expect(events.map((e) => e.outcome)).toEqual(['retry_scheduled', 'retry_scheduled', 'success_after_retry']);
      for (const fail of [() => { throw new Error('boom'); }, () => Promise.reject(new Error('boom'))]) {
        const classified: number[] = [];
        const { result: failed } = await run((attempt) => (attempt === 1 ? fail() : 'ok'), policy, {
          retryOnError: (_error, context) => classified.push(context.attempt) > 0,
        });
        expect(failed).toEqual({ ok: true, value: 'ok' });
        expect(classified).toEqual([1]);
      }
    }
  });

  it('treats a retryOnResult that throws as a failed attempt, classified like any error, with and without a budget', async () => {
    for (const policy of [noJitter, { ...noJitter, totalBudgetMs: 60_000 }]) {
      const { result } = await run((attempt) => attempt, policy, {
        retryOnResult: (attempt) => {
          if (attempt === 1) throw new Error('hook failed');
          return false;
        },
        retryOnError: (error) => (error as Error).message === 'hook failed',
      });
      expect(result).toEqual({ ok: true, value: 2 });
    }
  });

  it('retries with the exact backoff delays, then succeeds', async () => {
    const { result, clock, events, calls } = await run(failTimes(2), noJitter);
    expect(result).toEqual({ ok: true, value: 'ok after 3' });
    expect(clock.sleeps).toEqual([100, 200]);
    expect(calls).toEqual([0, 100, 300]);
    expect(events.map((e) => [e.attempt, e.outcome, e.delayMs])).toEqual([
      [1, 'retry_scheduled', 100],
      [2, 'retry_scheduled', 200],
      [3, 'success_after_retry', undefined],
    ]);
  });

  it('asserts exact jittered delays with a seeded random', async () => {
    const { clock } = await run(failTimes(2), { ...noJitter, jitterType: 'FULL' });
    const random = seededRandom(1);
    expect(clock.sleeps).toEqual([random() * 100, random() * 200]);
  });

  it('exhausts after maxAttempts and never sleeps after the final attempt', async () => {
    const { result, clock, events } = await run(failTimes(10), noJitter);
    expect(result.ok).toBe(false);
    const error = (result as { error: RetryExhaustedError }).error;
    expect(error).toBeInstanceOf(RetryExhaustedError);
    expect(error).toMatchObject({ attempts: 3, elapsedMs: 300, reason: 'max_attempts', code: 'RETRY_EXHAUSTED' });
    expect(error.lastError).toBeInstanceOf(Error);
    expect(error.cause).toBe(error.lastError);
    expect(error.message).toBe('gave up after 3 attempts in 300 ms (max_attempts): Error: boom');
    expect(clock.sleeps).toEqual([100, 200]);
    expect(events.at(-1)).toMatchObject({ attempt: 3, outcome: 'exhausted', reason: 'max_attempts' });
  });

  it('maxAttempts 1 means one attempt and no retry', async () => {
    const { result, clock } = await run(failTimes(10), { ...noJitter, maxAttempts: 1 });
    expect((result as { error: RetryExhaustedError }).error.attempts).toBe(1);
    expect(clock.sleeps).toEqual([]);
  });

  it('re-validates a reused policy object that changed since its last use', async () => {
    const policy: Record<string, unknown> = { maxAttempts: 2 };
    await expect(retry(() => 1, policy)).resolves.toBe(1);
    policy.maxAttempts = 0;
    await expect(retry(() => 1, policy)).rejects.toThrow('maxAttempts must be an integer >= 1, got 0');
    await expect(retry(() => 1, { maxAttempts: 2, maxAttempt: 3 } as Record<string, unknown>)).rejects.toThrow(/maxAttempt is not a policy field/);
  });

  it('refuses an invalid policy before the first attempt, naming the field', async () => {
    await expect(retry(() => 1, { maxAttempts: 0 })).rejects.toThrow(new InvalidPolicyError([{ field: 'maxAttempts', rule: 'an integer >= 1', message: 'maxAttempts must be an integer >= 1, got 0' }]));
  });
});

describe('retry: what is retryable', () => {
  it('rethrows a non-retryable error at once, unchanged', async () => {
    const error = new TypeError('x is not a function');
    const { result, events } = await run(() => {
      throw error;
    }, noJitter);
    expect(result).toEqual({ ok: false, error });
    expect(events.map((e) => e.outcome)).toEqual(['non_retryable']);
  });

  const cases: [string, () => unknown, boolean][] = [
    ['RangeError', () => new RangeError('bad'), false],
    ['SyntaxError', () => new SyntaxError('bad'), false],
    ['AbortError', () => new DOMException('stop', 'AbortError'), false],
    ['a network error', () => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), true],
    ['fetch failed', () => new TypeError('fetch failed', { cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) }), true],
    ['a timeout', () => new DOMException('timed out', 'TimeoutError'), true],
    ['an HTTP 503 error', () => Object.assign(new Error('Service Unavailable'), { status: 503 }), true],
    ['an HTTP 400 error', () => Object.assign(new Error('Bad Request'), { statusCode: 400 }), false],
    ['an error marked retryable: false', () => Object.assign(new Error('no'), { retryable: false }), false],
    ['a plain Error', () => new Error('flaky'), true],
  ];
  it.each(cases.map(([name, make, retryable]) => ({ name, make, retryable })))('by default, $name is retryable: $retryable', async ({ make, retryable }) => {
    const { calls } = await run(failTimes(1, make), noJitter);
    expect(calls.length).toBe(retryable ? 2 : 1);
  });

  it('uses a custom error predicate', async () => {
    const { calls } = await run(failTimes(5), noJitter, { retryOnError: () => false });
    expect(calls.length).toBe(1);
  });

  it('retries a result the result predicate rejects, and reports it on exhaustion', async () => {
    const { result, calls } = await run(() => ({ status: 503 }), noJitter, { retryOnResult: (r) => r.status >= 500 });
    expect(calls.length).toBe(3);
    const error = (result as { error: RetryExhaustedError }).error;
    expect(error.lastError).toBeInstanceOf(RetryableResultError);
    expect((error.lastError as RetryableResultError).result).toEqual({ status: 503 });
  });
});

describe('retry: budget and deadline', () => {
  it('clips each sleep so the next attempt starts no later than totalBudgetMs − estimatedCallMs', async () => {
    // Each call takes 300 ms; budget 1000 ms with 100 ms kept for the call: attempts start at 0, 400, 900.
    const { result, clock, calls } = await run(
      (attempt, c) => {
        c.tick(300);
        return failTimes(10)(attempt);
      },
      { ...noJitter, maxAttempts: 10, totalBudgetMs: 1_000, estimatedCallMs: 100 },
    );
    expect(calls).toEqual([0, 400, 900]);
    expect(clock.sleeps).toEqual([100, 200]);
    expect((result as { error: RetryExhaustedError }).error).toMatchObject({ reason: 'budget', attempts: 3, elapsedMs: 1_200 });
  });

  it('always makes one attempt, then gives up at once when less than estimatedCallMs remains', async () => {
    const { result, clock, calls } = await run(
      (attempt, c) => {
        c.tick(950);
        return failTimes(10)(attempt);
      },
      { ...noJitter, totalBudgetMs: 1_000, estimatedCallMs: 100 },
    );
    expect(calls).toEqual([0]);
    expect(clock.sleeps).toEqual([]);
    expect((result as { error: RetryExhaustedError }).error.reason).toBe('budget');
  });

  it('starts no attempt when a sleep ends past the budget, and gives up with the failure before it', async () => {
    const clock = new ManualClock(1_000);
    // A sleep that ends 2 s late, as on a suspended process: it asks for 100 ms.
    const lateClock = { now: () => clock.now(), sleep: (ms: number, signal?: AbortSignal) => clock.sleep(ms + 2_000, signal) };
    const calls: number[] = [];
    const promise = retry(
      ({ attempt }) => {
        calls.push(attempt);
        throw new Error(`boom ${attempt}`);
      },
      { ...noJitter, maxAttempts: 5, totalBudgetMs: 1_000 },
      { clock: lateClock, random: seededRandom(1) },
    );
    const settled = promise.catch((error: unknown) => error);
    await clock.runAll();
    const error = (await settled) as RetryExhaustedError;
    expect(calls).toEqual([1]);
    expect(error).toBeInstanceOf(RetryExhaustedError);
    expect(error).toMatchObject({ reason: 'budget', attempts: 1 });
    expect((error.lastError as Error).message).toBe('boom 1');
  });

  /** An attempt that settles only when its signal aborts, rejecting with the signal's reason, as `fetch` does. */
  const untilAborted = (signal: AbortSignal) =>
    new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));

  it('aborts an attempt still running when the budget runs out, through its signal, and gives up at that instant', async () => {
    const clock = new ManualClock(1_000);
    const events: AttemptEvent[] = [];
    const signals: AbortSignal[] = [];
    const promise = retry(
      ({ attempt, signal }) => {
        signals.push(signal);
        if (attempt === 1) throw new Error('boom');
        return untilAborted(signal);
      },
      { ...noJitter, totalBudgetMs: 500 },
      { clock, onAttempt: (e) => events.push(e) },
    );
    const settled = promise.catch((error: unknown) => error);
    await clock.advance(499);
    expect(signals.map((s) => s.aborted)).toEqual([false, false]);
    await clock.advance(1);
    const error = (await settled) as RetryExhaustedError;
    expect(error).toBeInstanceOf(RetryExhaustedError);
    expect(error).toMatchObject({ reason: 'budget', attempts: 2, elapsedMs: 500 });
    expect(signals[1]?.aborted).toBe(true);
    expect(error.lastError).toBe(signals[1]?.reason);
    expect(error.lastError).toMatchObject({ name: 'TimeoutError', message: 'the total budget of 500 ms ran out during attempt 2' });
    expect(clock.sleeps).toEqual([100]);
    expect(events.map((e) => [e.attempt, e.outcome, e.reason, e.elapsedMs, e.durationMs])).toEqual([
      [1, 'retry_scheduled', undefined, 0, 0],
      [2, 'exhausted', 'budget', 500, 400],
    ]);
  });

  it('gives up at the deadline even when the attempt ignores its signal, and aborts a first attempt too', async () => {
    const clock = new ManualClock();
    let seen: AbortSignal | undefined;
    const promise = retry(
      ({ signal }) => {
        seen = signal;
        return new Promise<never>(() => undefined);
      },
      { ...noJitter, totalBudgetMs: 2_000 },
      { clock },
    );
    const settled = promise.catch((error: unknown) => error);
    await clock.runAll();
    expect(clock.now()).toBe(2_000);
    expect(await settled).toMatchObject({ name: 'RetryExhaustedError', reason: 'budget', attempts: 1, elapsedMs: 2_000 });
    expect(seen?.aborted).toBe(true);
  });

  it('hands a signal read after the deadline already aborted', async () => {
    const clock = new ManualClock();
    let late: AbortSignal | undefined;
    const promise = retry(
      async (context) => {
        await clock.sleep(5_000);
        late = context.signal;
        return 1;
      },
      { ...noJitter, totalBudgetMs: 1_000 },
      { clock },
    );
    const settled = promise.catch((error: unknown) => error);
    await clock.runAll();
    expect(await settled).toMatchObject({ reason: 'budget', elapsedMs: 1_000 });
    expect(late?.aborted).toBe(true);
  });

  it('clears the deadline when the attempt ends first (and sets none for a result returned synchronously)', async () => {
    const clock = new ManualClock();
    const promise = retry(async () => 'done', { ...noJitter, totalBudgetMs: 1_000 }, { clock });
    expect(clock.pendingCount).toBe(1);
    expect(await promise).toBe('done');
    expect(clock.pendingCount).toBe(0);
    const sync = retry(() => 'at once', { ...noJitter, totalBudgetMs: 1_000 }, { clock });
    expect(clock.pendingCount).toBe(0);
    expect(await sync).toBe('at once');
  });

  it('keeps the deadline on a clock without timers, through a sleep it cancels when the attempt ends first', async () => {
    const manual = new ManualClock();
    const clock = { now: () => manual.now(), sleep: (ms: number, signal?: AbortSignal) => manual.sleep(ms, signal) };
    const late = retry(() => new Promise<never>(() => undefined), { ...noJitter, totalBudgetMs: 1_000 }, { clock });
    const settled = late.catch((error: unknown) => error);
    await manual.runAll();
    expect(await settled).toMatchObject({ reason: 'budget', elapsedMs: 1_000 });
    expect(await retry(async () => 'done', { ...noJitter, totalBudgetMs: 1_000 }, { clock })).toBe('done');
    expect(manual.pendingCount).toBe(0);
  });

  it('still passes the caller\'s abort to an attempt of a call with a budget', async () => {
    const clock = new ManualClock();
    const controller = new AbortController();
    const promise = retry(({ signal }) => untilAborted(signal), { ...noJitter, totalBudgetMs: 1_000 }, { clock, signal: controller.signal });
    await clock.advance(10);
    const reason = new Error('shutting down');
    controller.abort(reason);
    await expect(promise).rejects.toBe(reason);
    expect(clock.pendingCount).toBe(0);
  });

  it('gives up without sleeping when the next attempt would start with no budget left', async () => {
    // No headroom kept (estimatedCallMs 0): the second retry, cut to the budget's end, would start with nothing left.
    const { result, clock, calls } = await run(failTimes(10), { ...noJitter, maxAttempts: 10, totalBudgetMs: 250 });
    expect(calls).toEqual([0, 100]);
    expect(clock.sleeps).toEqual([100]);
    expect((result as { error: RetryExhaustedError }).error).toMatchObject({ reason: 'budget', attempts: 2, elapsedMs: 100 });
  });
});

describe('retry: Retry-After', () => {
  it('a hint replaces the computed delay, with no jitter added', async () => {
    const { clock, events } = await run(failTimes(1, () => Object.assign(new Error('slow down'), { retryAfterMs: 5_000 })), {
      ...noJitter,
      jitterType: 'FULL',
    });
    expect(clock.sleeps).toEqual([5_000]);
    expect(events[0]).toMatchObject({ outcome: 'retry_scheduled', delayMs: 5_000, hinted: true });
  });

  it('reads Retry-After from a retryable HTTP result, seconds and HTTP-date forms', async () => {
    const responses = [
      { status: 429, headers: { 'retry-after': '2' } },
      { status: 503, headers: new Headers({ 'Retry-After': 'Wed, 25 Nov 2026 12:00:07 GMT' }) },
      { status: 200, headers: {} },
    ];
    const { result, clock } = await run((attempt) => responses[attempt - 1]!, noJitter, {
      retryOnResult: (r) => r.status !== 200,
      wallClock: () => Date.parse('Wed, 25 Nov 2026 12:00:00 GMT'),
    });
    expect(result).toEqual({ ok: true, value: responses[2] });
    expect(clock.sleeps).toEqual([2_000, 7_000]);
  });

  it('gives up now, without sleeping, on a hint longer than maxDelayMs (Retry-After: 3600 with the defaults)', async () => {
    const hour = { status: 503, headers: { 'retry-after': '3600' } };
    const { result, clock, events } = await run(() => hour, {}, { retryOnResult: (r) => r.status === 503 });
    expect(clock.sleeps).toEqual([]);
    expect((result as { error: RetryExhaustedError }).error).toMatchObject({ reason: 'retry_after_beyond_budget', attempts: 1 });
    expect(events.map((e) => [e.outcome, e.reason])).toEqual([['exhausted', 'retry_after_beyond_budget']]);
  });

  it('honours a hint up to maxDelayMs, and a 429 up to its own class schedule', async () => {
    const answers = [
      { status: 503, headers: { 'retry-after': '10' } },
      { status: 429, headers: { 'retry-after': '60' } },
      { status: 200, headers: {} },
    ];
    const policy = { ...noJitter, backoffByClass: { rateLimited: { maxDelayMs: 60_000 } } };
    const { result, clock } = await run((attempt) => answers[attempt - 1]!, policy, { retryOnResult: (r) => r.status !== 200 });
    expect(result).toEqual({ ok: true, value: answers[2] });
    expect(clock.sleeps).toEqual([10_000, 60_000]);
  });

  it('gives up now, without sleeping, when the hint lands past the budget', async () => {
    const { result, clock } = await run(failTimes(5, () => Object.assign(new Error('later'), { retryAfterMs: 60_000 })), {
      ...noJitter,
      maxDelayMs: 60_000, // within maxDelayMs: only the budget refuses it
      totalBudgetMs: 10_000,
    });
    expect(clock.sleeps).toEqual([]);
    expect((result as { error: RetryExhaustedError }).error).toMatchObject({ reason: 'retry_after_beyond_budget', attempts: 1 });
  });
});

describe('retry: abort', () => {
  it('an abort mid-sleep rejects at once with the signal reason', async () => {
    const clock = new ManualClock();
    const controller = new AbortController();
    let calls = 0;
    const promise = retry(
      () => {
        calls++;
        throw new Error('boom');
      },
      { ...noJitter, initialDelayMs: 60_000, maxDelayMs: 60_000 },
      { clock, signal: controller.signal },
    );
    await clock.advance(0);
    expect(clock.sleeps).toEqual([60_000]);
    const reason = new Error('shutting down');
    controller.abort(reason);
    await expect(promise).rejects.toBe(reason);
    expect(calls).toBe(1);
    expect(clock.now()).toBe(0);
  });

  it('an already aborted signal makes no attempt', async () => {
    let calls = 0;
    const reason = new Error('cancelled');
    await expect(retry(() => ++calls, noJitter, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(calls).toBe(0);
  });

  it('passes the signal to each attempt', async () => {
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    await retry(({ signal }) => (seen = signal), noJitter, { signal: controller.signal });
    expect(seen).toBe(controller.signal);
  });
});

describe('retry: real clock', () => {
  it('works end to end on the system clock with small delays', async () => {
    let calls = 0;
    const value = await retry(() => (++calls < 3 ? Promise.reject(new Error('flaky')) : Promise.resolve('done')), {
      ...noJitter,
      initialDelayMs: 1,
    });
    expect(value).toBe('done');
    expect(calls).toBe(3);
  });

  it('a throwing onAttempt hook does not change the outcome', async () => {
    const value = await retry(() => 'ok', noJitter, {
      onAttempt: () => {
        throw new Error('metrics down');
      },
    });
    expect(value).toBe('ok');
  });
});

describe('retry: circuit breaker and retry budget', () => {
  it('fails fast with the breaker error and burns no attempts while the breaker is open', async () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ consecutiveFailures: 1, openDurationMs: 10_000, clock });
    breaker.tryAcquire();
    breaker.onFailure();
    let calls = 0;
    await expect(retry(() => ++calls, noJitter, { clock, breaker })).rejects.toBeInstanceOf(BrokenCircuitError);
    expect(calls).toBe(0);
  });

  it('stops retrying with reason circuit_open when failures open the breaker mid-run', async () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ consecutiveFailures: 2, openDurationMs: 10_000, clock });
    const { result, calls } = await run(failTimes(10), { ...noJitter, maxAttempts: 5 }, { clock, breaker });
    expect(calls.length).toBe(2);
    const error = (result as { error: RetryExhaustedError }).error;
    expect(error).toMatchObject({ reason: 'circuit_open', attempts: 2 });
    expect(breaker.state).toBe('OPEN');
  });

  it('a success closes nothing it should not: the breaker counts one success', async () => {
    const breaker = new CircuitBreaker({ consecutiveFailures: 3 });
    await retry(() => 'ok', noJitter, { breaker });
    expect(breaker.toJSON().failureStreak).toBe(0);
  });

  it('ends the retries with retry_budget_denied when the shared budget refuses', async () => {
    const clock = new ManualClock();
    const retryBudget = new RetryBudget({ ratio: 0, minRetriesPerSecond: 0.1, ttlMs: 10_000, clock });
    // The floor allows one retry in the window: the first call gets it, the second is refused.
    const first = await run(failTimes(1), noJitter, { clock, retryBudget });
    expect(first.result).toEqual({ ok: true, value: 'ok after 2' });
    const second = await run(failTimes(1), noJitter, { clock, retryBudget });
    expect((second.result as { error: RetryExhaustedError }).error).toMatchObject({ reason: 'retry_budget_denied', attempts: 1 });
  });
});
