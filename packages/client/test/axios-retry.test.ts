import { Readable } from 'node:stream';
import { BrokenCircuitError, deriveIdempotencyKey, RetryExhaustedError, type AttemptEvent } from '@retryd/core';
import { ManualClock } from '@retryd/core/testing';
import axios, { type AxiosError } from 'axios';
import { afterEach, describe, expect, it } from 'vitest';
import { attachRetry } from '../src/axios/index.js';
import { BodyNotReplayableError } from '../src/index.js';
import { closedPortUrl, FAST, startLoopbackServer, statuses, type LoopbackServer } from './loopback-server.js';

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('attachRetry (real axios, loopback servers)', () => {
  it('retries a POST with the same derived Idempotency-Key and body; interceptors run once', async () => {
    server = await startLoopbackServer(statuses(503, 502, 200));
    const api = axios.create({ baseURL: server.url });
    attachRetry(api, { policy: FAST });
    let intercepted = 0;
    api.interceptors.request.use((config) => {
      intercepted++;
      return config;
    });
    const config = { headers: { 'x-trace': 'abc' } };
    const res = await api.post('/orders', { sku: 'A', n: 1 }, config);
    expect([res.status, res.data]).toEqual([200, 'ok 3']);
    expect(intercepted).toBe(1);
    expect(config).toEqual({ headers: { 'x-trace': 'abc' } });
    const key = deriveIdempotencyKey({ method: 'POST', url: `${server.url}/orders`, body: '{"sku":"A","n":1}' });
    expect(server.requests.map((r) => [r.headers['idempotency-key'], r.headers['x-trace'], r.body])).toEqual(
      Array(3).fill([key, 'abc', '{"sku":"A","n":1}']),
    );
  });

  it('throws the last AxiosError when the retries end on a status, and never retries a 404', async () => {
    server = await startLoopbackServer(statuses(503));
    const api = axios.create({ baseURL: server.url });
    attachRetry(api, { policy: { ...FAST, maxAttempts: 2 } });
    const error = (await api.get('/x').catch((e: unknown) => e)) as AxiosError;
    expect(axios.isAxiosError(error)).toBe(true);
    expect([error.response?.status, error.response?.data]).toEqual([503, 'failed 2']);
    // Sending its config again (as some callers do) retries once more, not retries inside retries.
    await expect(api.request(error.config!)).rejects.toMatchObject({ response: { status: 503 } });
    expect(server.requests).toHaveLength(4);
    await server.close();
    server = await startLoopbackServer(statuses(404, 200));
    const api2 = axios.create({ baseURL: server.url });
    attachRetry(api2, { policy: FAST });
    await expect(api2.get('/missing')).rejects.toMatchObject({ response: { status: 404 } });
    expect(server.requests).toHaveLength(1);
  });

  it('retries refused connections and honours Retry-After', async () => {
    const refused = axios.create({ baseURL: await closedPortUrl() });
    attachRetry(refused, { policy: { ...FAST, maxAttempts: 2 } });
    await expect(refused.get('/')).rejects.toMatchObject({ code: 'ECONNREFUSED' });

    server = await startLoopbackServer(statuses([429, { 'retry-after': '0' }], 200));
    const api = axios.create({ baseURL: server.url });
    const delays: (number | undefined)[] = [];
    attachRetry(api, { policy: { ...FAST, initialDelayMs: 5_000, maxDelayMs: 5_000 }, onAttempt: (e) => delays.push(e.delayMs) });
    expect((await api.get('/')).status).toBe(200);
    expect(delays[0]).toBe(0);
  });

  it('with its defaults, gives up at once on Retry-After: 3600, and honours one within maxDelayMs', async () => {
    server = await startLoopbackServer(statuses([503, { 'retry-after': '3600' }], [503, { 'retry-after': '10' }], 200));
    const api = axios.create({ baseURL: server.url });
    const clock = new ManualClock();
    const events: AttemptEvent[] = [];
    attachRetry(api, { clock, onAttempt: (e) => events.push(e) });
    await expect(api.get('/hour')).rejects.toMatchObject({ response: { status: 503 } });
    expect(clock.sleeps).toEqual([]);
    expect(events).toMatchObject([{ outcome: 'exhausted', reason: 'retry_after_beyond_budget' }]);

    const call = api.get('/ten-seconds');
    await expect.poll(() => clock.sleeps, { timeout: 10_000 }).toEqual([10_000]);
    await clock.advance(10_000);
    expect((await call).status).toBe(200);
    expect(server.requests.map((r) => r.url)).toEqual(['/hour', '/ten-seconds', '/ten-seconds']);
  });

  it('keeps at most maxConcurrentRetries retries in flight during a burst of failures', async () => {
    const firstSeen = new Set<string>();
    let inFlight = 0;
    let peak = 0;
    server = await startLoopbackServer((request, _n, res) => {
      const key = String(request.headers['idempotency-key']);
      if (!firstSeen.has(key)) {
        firstSeen.add(key);
        res.writeHead(503).end();
        return;
      }
      inFlight++;
      peak = Math.max(peak, inFlight);
      // The retry is held briefly so that retries overlap if the limit lets them.
      setTimeout(() => {
        inFlight--;
        res.writeHead(200).end();
      }, 5);
    });
    const api = axios.create({ baseURL: server.url });
    // No breaker: 40 failures in a row would open it, which is another test's subject.
    attachRetry(api, { policy: { ...FAST, maxAttempts: 2 }, maxConcurrentRetries: 3, breaker: false });
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => api.post('/burst', { i })));
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(firstSeen.size).toBe(40);
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(3);
  });

  it("stops on axios's own cancellation, during the wait between attempts", async () => {
    server = await startLoopbackServer(statuses(503));
    const api = axios.create({ baseURL: server.url });
    // 20 s: a wait that fits the default deadline of 30 s (a longer one would give up at once, with nothing to cancel).
    attachRetry(api, { policy: { ...FAST, initialDelayMs: 20_000, maxDelayMs: 20_000 } });
    const controller = new AbortController();
    const bySignal = api.get('/', { signal: controller.signal });
    await expect.poll(() => server?.requests.length, { timeout: 10_000 }).toBe(1);
    controller.abort();
    const error = await bySignal.catch((e: unknown) => e);
    expect(axios.isCancel(error)).toBe(true);

    const source = axios.CancelToken.source();
    const byToken = api.get('/', { cancelToken: source.token });
    await expect.poll(() => server?.requests.length, { timeout: 10_000 }).toBe(2);
    source.cancel('no longer needed');
    await expect(byToken).rejects.toMatchObject({ message: 'no longer needed' });
    expect(server.requests).toHaveLength(2);
  });

  it('aborts the attempt in flight when the total deadline runs out', async () => {
    server = await startLoopbackServer(() => undefined);
    const api = axios.create({ baseURL: server.url });
    attachRetry(api, { policy: { ...FAST, totalBudgetMs: 200 } });
    const error = (await api.get('/').catch((e: unknown) => e)) as RetryExhaustedError;
    expect(error).toBeInstanceOf(RetryExhaustedError);
    expect(error.reason).toBe('budget');
  });

  it('times out every request of one instance, and cancels an attempt in flight', async () => {
    server = await startLoopbackServer(() => undefined); // never answers
    const api = axios.create({ baseURL: server.url });
    attachRetry(api, { policy: { ...FAST, totalBudgetMs: 150 }, breaker: false });
    for (const path of ['/first', '/second']) {
      const error = (await api.get(path).catch((e: unknown) => e)) as RetryExhaustedError;
      expect(error).toBeInstanceOf(RetryExhaustedError);
      expect(error.reason).toBe('budget');
    }
    const controller = new AbortController();
    const cancelled = api.post('/third', 'x', { signal: controller.signal });
    await expect.poll(() => server?.requests.length, { timeout: 10_000 }).toBe(3);
    controller.abort();
    expect(axios.isCancel(await cancelled.catch((e: unknown) => e))).toBe(true);
  });

  it('sends the same key again when a failed POST is sent again from its error.config', async () => {
    server = await startLoopbackServer(statuses(503, 503, 200));
    const api = axios.create({ baseURL: server.url });
    attachRetry(api, { policy: { ...FAST, maxAttempts: 2 } });
    const error = (await api.post('/orders', 'x').catch((e: unknown) => e)) as AxiosError;
    expect(error.response?.status).toBe(503);
    await api.request(error.config!);
    const keys = server.requests.map((r) => r.headers['idempotency-key']);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
  });

  it('does not retry a stream body, and says why', async () => {
    server = await startLoopbackServer(statuses(503, 200));
    const api = axios.create({ baseURL: server.url });
    attachRetry(api, { policy: FAST });
    const call = api.post('/upload', Readable.from(['streamed']));
    await expect(call).rejects.toThrow(BodyNotReplayableError);
    await expect(call).rejects.toThrow(/the server answered 503, but the request body is a stream/);
    expect(server.requests).toHaveLength(1);
  });

  it('detaches again', async () => {
    server = await startLoopbackServer(statuses(503, 200));
    const api = axios.create({ baseURL: server.url });
    const detach = attachRetry(api, { policy: FAST });
    detach();
    await expect(api.get('/')).rejects.toMatchObject({ response: { status: 503 } });
    expect(server.requests).toHaveLength(1);
  });

  it("counts requests with and without a signal of their own on their origin's one breaker; a signal stays its request's", async () => {
    server = await startLoopbackServer(statuses(503));
    const other = await startLoopbackServer(statuses(200));
    try {
      const api = axios.create();
      attachRetry(api, { policy: { ...FAST, maxAttempts: 1 }, breaker: { consecutiveFailures: 2, openDurationMs: 60_000 } });
      const caller = new AbortController();
      expect((await api.get(other.url, { signal: caller.signal })).status).toBe(200);
      caller.abort();
      // Requests without a signal share their origin's options: the signal of the request before must not be in them.
      expect((await api.get(other.url)).status).toBe(200);
      await expect(api.get(server.url)).rejects.toMatchObject({ response: { status: 503 } });
      await expect(api.get(server.url, { signal: new AbortController().signal })).rejects.toMatchObject({ response: { status: 503 } });
      await expect(api.get(server.url)).rejects.toThrow(BrokenCircuitError);
      await expect(api.get(server.url, { signal: new AbortController().signal })).rejects.toThrow(BrokenCircuitError);
      expect(server.requests).toHaveLength(2);
      expect((await api.get(other.url)).status).toBe(200);
    } finally {
      await other.close();
    }
  });

  it('refuses a wrong policy or retry limit at set-up, naming the field and the rule', () => {
    expect(() => attachRetry(axios.create(), { policy: { multiplier: 0.5 } })).toThrow('multiplier must be');
    expect(() => attachRetry(axios.create(), { maxConcurrentRetries: 0 })).toThrow('maxConcurrentRetries must be an integer >= 1, got 0');
  });
});
