import { BrokenCircuitError, deriveIdempotencyKey, RetryExhaustedError, type AttemptEvent } from '@retryd/core';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '@retryd/core/testing';
import { BodyNotReplayableError, createRetryingFetch, IN_REQUEST_DEADLINE_MS, retryingFetch, type RetryingFetchOptions } from '../src/index.js';
import { closedPortUrl, FAST, startLoopbackServer, statuses, type LoopbackServer } from './loopback-server.js';

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('retryingFetch', () => {
  it('retries the policy statuses with the same derived Idempotency-Key and the same body, then returns the success', async () => {
    server = await startLoopbackServer(statuses(503, 502, 200));
    const url = `${server.url}/orders?b=2&a=1`;
    const res = await retryingFetch(url, { method: 'POST', body: '{"sku":"A"}', headers: { 'content-type': 'application/json' } }, { policy: FAST });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('ok 3');
    const keys = server.requests.map((r) => r.headers['idempotency-key']);
    expect(keys).toEqual(Array(3).fill(deriveIdempotencyKey({ method: 'POST', url, body: '{"sku":"A"}' })));
    expect(server.requests.map((r) => r.body)).toEqual(Array(3).fill('{"sku":"A"}'));
  });

  it("keeps the caller's Idempotency-Key, and derives none for GET", async () => {
    server = await startLoopbackServer(statuses(503, 200));
    await retryingFetch(`${server.url}/a`, { method: 'patch', headers: { 'idempotency-key': 'mine-1' }, body: 'x' }, { policy: FAST });
    await retryingFetch(`${server.url}/b`, undefined, { policy: FAST });
    expect(server.requests.map((r) => [r.method, r.headers['idempotency-key']])).toEqual([
      ['PATCH', 'mine-1'],
      ['PATCH', 'mine-1'],
      ['GET', undefined],
    ]);
  });

  it('replays a Request body and a FormData body byte for byte on every attempt', async () => {
    server = await startLoopbackServer(statuses(500, 200, 500, 200));
    await retryingFetch(new Request(`${server.url}/r`, { method: 'PUT', body: 'from a Request' }), undefined, { policy: FAST });
    const form = new FormData();
    form.set('name', 'retryd');
    await retryingFetch(`${server.url}/f`, { method: 'POST', body: form }, { policy: FAST });
    const [r1, r2, f1, f2] = server.requests;
    expect([r1?.body, r2?.body]).toEqual(['from a Request', 'from a Request']);
    expect(f1?.body).toContain('retryd');
    expect(f2?.body).toBe(f1?.body);
    expect(f2?.headers['content-type']).toBe(f1?.headers['content-type']);
    expect(f1?.headers['idempotency-key']).toBe(f2?.headers['idempotency-key']);
  });

  it('does not retry a stream body, and says why', async () => {
    server = await startLoopbackServer(statuses(503, 200));
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('streamed'));
        controller.close();
      },
    });
    const call = retryingFetch(`${server.url}/s`, { method: 'POST', body, duplex: 'half' } as RequestInit, { policy: FAST });
    await expect(call).rejects.toThrow(BodyNotReplayableError);
    await expect(call).rejects.toThrow(/the server answered 503, but the request body is a stream/);
    expect(server.requests).toHaveLength(1);
  });

  it('retries network failures, and gives up with RetryExhaustedError after maxAttempts', async () => {
    const url = await closedPortUrl();
    const events: AttemptEvent[] = [];
    const call = retryingFetch(url, undefined, { policy: { ...FAST, maxAttempts: 3 }, onAttempt: (e) => events.push(e) });
    const error = (await call.catch((e: unknown) => e)) as RetryExhaustedError;
    expect(error).toBeInstanceOf(RetryExhaustedError);
    expect([error.reason, error.attempts]).toEqual(['max_attempts', 3]);
    expect(events.map((e) => e.outcome)).toEqual(['retry_scheduled', 'retry_scheduled', 'exhausted']);
  });

  it('returns the last response when the retries end on a retryable status, and never retries a 404', async () => {
    server = await startLoopbackServer(statuses(503));
    const res = await retryingFetch(server.url, undefined, { policy: { ...FAST, maxAttempts: 2 } });
    expect([res.status, await res.text()]).toEqual([503, 'failed 2']);
    await server.close();
    server = await startLoopbackServer(statuses(404));
    expect((await retryingFetch(server.url, undefined, { policy: FAST })).status).toBe(404);
    expect(server.requests).toHaveLength(1);
  });

  it("honours Retry-After, and gives up at once when it lands past the deadline", async () => {
    server = await startLoopbackServer(statuses([429, { 'retry-after': '0' }], 200));
    const events: AttemptEvent[] = [];
    const ok = await retryingFetch(server.url, undefined, { policy: { ...FAST, initialDelayMs: 5_000, maxDelayMs: 5_000 }, onAttempt: (e) => events.push(e) });
    expect(ok.status).toBe(200);
    expect(events[0]).toMatchObject({ outcome: 'retry_scheduled', delayMs: 0, hinted: true });
    await server.close();

    server = await startLoopbackServer(statuses([503, { 'retry-after': '30' }], 200));
    const late: AttemptEvent[] = [];
    const res = await retryingFetch(server.url, undefined, { policy: { ...FAST, totalBudgetMs: 2_000 }, onAttempt: (e) => late.push(e) });
    expect(res.status).toBe(503);
    expect(server.requests).toHaveLength(1);
    expect(late.at(-1)).toMatchObject({ outcome: 'exhausted', reason: 'retry_after_beyond_budget' });
  });

  it('with its defaults, gives up at once on Retry-After: 3600 instead of holding the call for an hour', async () => {
    server = await startLoopbackServer((_request, _n, res) => res.writeHead(503, { 'retry-after': '3600' }).end());
    type Options = Pick<RetryingFetchOptions, 'clock' | 'onAttempt'>;
    for (const call of [(url: string, o: Options) => retryingFetch(url, undefined, o), (url: string, o: Options) => createRetryingFetch(o)(url)]) {
      const events: AttemptEvent[] = [];
      const clock = new ManualClock();
      const res = await call(server.url, { clock, onAttempt: (e) => events.push(e) });
      expect(res.status).toBe(503);
      expect(clock.sleeps).toEqual([]);
      expect(events).toMatchObject([{ outcome: 'exhausted', reason: 'retry_after_beyond_budget' }]);
    }
    expect(server.requests).toHaveLength(2);
  });

  it('with its defaults, honours a Retry-After within maxDelayMs (10 s)', async () => {
    server = await startLoopbackServer(statuses([503, { 'retry-after': '10' }], 200));
    const clock = new ManualClock();
    const call = retryingFetch(server.url, undefined, { clock });
    await expect.poll(() => clock.sleeps, { timeout: 10_000 }).toEqual([10_000]);
    await clock.advance(9_999);
    expect(server.requests).toHaveLength(1);
    await clock.advance(1);
    expect((await call).status).toBe(200);
    expect(server.requests).toHaveLength(2);
  });

  it('has a deadline of 30 s when the policy names none: an attempt with no answer by then is aborted', async () => {
    server = await startLoopbackServer(() => undefined); // never answers
    const clock = new ManualClock();
    const call = retryingFetch(server.url, undefined, { clock }).catch((error: unknown) => error);
    await expect.poll(() => server?.requests.length, { timeout: 10_000 }).toBe(1);
    await clock.advance(IN_REQUEST_DEADLINE_MS - 1);
    let settled = false;
    void call.then(() => (settled = true));
    await clock.advance(0);
    expect(settled).toBe(false);
    await clock.advance(1);
    expect(await call).toMatchObject({ name: 'RetryExhaustedError', reason: 'budget', attempts: 1 });
  });

  it('aborts the attempt in flight through its signal when the total deadline runs out', async () => {
    server = await startLoopbackServer(() => undefined); // never answers
    const call = retryingFetch(server.url, undefined, { policy: { ...FAST, totalBudgetMs: 200 } });
    const error = (await call.catch((e: unknown) => e)) as RetryExhaustedError;
    expect(error).toBeInstanceOf(RetryExhaustedError);
    expect(error.reason).toBe('budget');
    expect((error.lastError as Error).name).toBe('TimeoutError');
  });

  it('times out every call of one retrying fetch, each attempt on its own deadline', async () => {
    server = await startLoopbackServer(() => undefined); // never answers
    const timedFetch = createRetryingFetch({ policy: { ...FAST, totalBudgetMs: 150 }, breaker: false });
    for (const path of ['/first', '/second']) {
      const error = (await timedFetch(`${server.url}${path}`).catch((e: unknown) => e)) as RetryExhaustedError;
      expect(error).toBeInstanceOf(RetryExhaustedError);
      expect(error.reason).toBe('budget');
    }
    expect(server.requests.map((r) => r.url)).toEqual(['/first', '/second']);
  });

  it("aborts the attempt in flight at the caller's abort", async () => {
    server = await startLoopbackServer(() => undefined); // never answers
    const controller = new AbortController();
    const call = retryingFetch(server.url, { method: 'POST', body: 'x', signal: controller.signal }, { policy: FAST });
    await expect.poll(() => server?.requests.length, { timeout: 10_000 }).toBe(1);
    controller.abort(new Error('the user left'));
    await expect(call).rejects.toThrow('the user left');
  });

  it('rejects, as fetch does, rather than throws on headers that cannot be sent', async () => {
    let call: Promise<Response> | undefined;
    expect(() => {
      call = retryingFetch('http://127.0.0.1:1/x', { method: 'POST', headers: [['bad name', 'x']], body: 'x' });
    }).not.toThrow();
    await expect(call).rejects.toThrow(TypeError);
  });

  it("stops at the caller's abort, sleeps included", async () => {
    server = await startLoopbackServer(statuses(503));
    const controller = new AbortController();
    // 20 s: a wait that fits the default deadline of 30 s (a longer one would give up at once, with nothing to abort).
    const call = retryingFetch(server.url, { signal: controller.signal }, { policy: { ...FAST, initialDelayMs: 20_000, maxDelayMs: 20_000 } });
    await expect.poll(() => server?.requests.length, { timeout: 10_000 }).toBe(1);
    controller.abort(new Error('the user left'));
    await expect(call).rejects.toThrow('the user left');
  });

  it('opens a circuit per origin: a broken downstream fails FAST, another origin is still called', async () => {
    server = await startLoopbackServer(statuses(503));
    const other = await startLoopbackServer(statuses(200));
    try {
      const fetchWithBreaker = createRetryingFetch({ policy: { ...FAST, maxAttempts: 1 }, breaker: { consecutiveFailures: 2, openDurationMs: 60_000 } });
      await fetchWithBreaker(server.url);
      await fetchWithBreaker(server.url);
      await expect(fetchWithBreaker(`${server.url}/again`)).rejects.toThrow(BrokenCircuitError);
      expect(server.requests).toHaveLength(2);
      expect((await fetchWithBreaker(other.url)).status).toBe(200);
    } finally {
      await other.close();
    }
  });

  it("counts calls with and without a signal of their own on their origin's one breaker; a signal stays its call's", async () => {
    server = await startLoopbackServer(statuses(503));
    const other = await startLoopbackServer(statuses(200));
    try {
      const fetchWithBreaker = createRetryingFetch({ policy: { ...FAST, maxAttempts: 1 }, breaker: { consecutiveFailures: 2, openDurationMs: 60_000 } });
      const caller = new AbortController();
      expect((await fetchWithBreaker(other.url, { signal: caller.signal })).status).toBe(200);
      caller.abort(new Error('that call is over'));
      // Calls without a signal share their origin's options: the signal of the call before must not be in them.
      expect((await fetchWithBreaker(other.url)).status).toBe(200);
      await fetchWithBreaker(server.url);
      await fetchWithBreaker(server.url, { signal: new AbortController().signal });
      await expect(fetchWithBreaker(server.url)).rejects.toThrow(BrokenCircuitError);
      await expect(fetchWithBreaker(server.url, { signal: new AbortController().signal })).rejects.toThrow(BrokenCircuitError);
      expect(server.requests).toHaveLength(2);
      expect((await fetchWithBreaker(other.url)).status).toBe(200);
    } finally {
      await other.close();
    }
  });

  it('refuses a wrong policy at set-up, naming the field and the rule', () => {
    expect(() => createRetryingFetch({ policy: { maxAttempts: 0 } })).toThrow('maxAttempts must be an integer >= 1, got 0');
  });
});
