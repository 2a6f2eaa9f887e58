import { Metadata, status, type Interceptor, InterceptingCall, type ServiceError } from '@grpc/grpc-js';
import { ManualClock } from '@retryd/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_RETRYABLE_GRPC_CODES, retryInterceptor } from '../src/grpc/index.js';
import { grpcOrigin } from '../src/grpc/grpc-origin.js';
import { ordersClient, place, startOrdersServer, type Answer, type OrdersClient, type OrdersServer, type Seen } from './grpc-server.js';
import { waitFor } from '../../server/test/wait-for.js';

/** Tiny exact delays: the retries of these tests go at once. */
const FAST = { initialDelayMs: 1, maxDelayMs: 5, jitterType: 'NONE' } as const;
const UNAVAILABLE: Answer = { code: status.UNAVAILABLE, details: 'down for a moment' };
const OK: Answer = { reply: { ok: true } };

const servers: OrdersServer[] = [];
const clients: OrdersClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  for (const server of servers.splice(0)) await server.close();
});

async function server(answer: (seen: Seen, n: number) => Answer): Promise<OrdersServer> {
  const started = await startOrdersServer(answer);
  servers.push(started);
  return started;
}

function client(target: string, ...interceptors: Interceptor[]): OrdersClient {
  const made = ordersClient(target, interceptors);
  clients.push(made);
  return made;
}

/** What `place` rejected with. */
async function failure(call: Promise<unknown>): Promise<ServiceError> {
  return call.then(
    () => expect.fail('the call succeeded'),
    (error: unknown) => error as ServiceError,
  );
}

const keyOf = (seen: Seen): unknown => seen.metadata.get('idempotency-key')[0];

describe('retryInterceptor: retries', () => {
  it('retries UNAVAILABLE twice, then answers, with one idempotency key on every attempt', async () => {
    const orders = await server((_, n) => (n <= 2 ? UNAVAILABLE : OK));
    const reply = await place(client(orders.target, retryInterceptor({ target: orders.target, policy: FAST })), { sku: 'A-1' });
    expect(reply).toEqual({ ok: true });
    expect(orders.seen).toHaveLength(3);
    expect(keyOf(orders.seen[0]!)).toMatch(/^[0-9a-f]{32}$/);
    expect(orders.seen.map(keyOf)).toEqual([keyOf(orders.seen[0]!), keyOf(orders.seen[0]!), keyOf(orders.seen[0]!)]);
  });

  it('derives the key from the call (the same call twice: one key; another request: another) and keeps a key of the caller', async () => {
    const orders = await server(() => OK);
    const orders1 = client(orders.target, retryInterceptor({ target: orders.target, policy: FAST }));
    await place(orders1, { sku: 'A-1' });
    await place(orders1, { sku: 'A-1' });
    await place(orders1, { sku: 'B-2' });
    const own = new Metadata();
    own.set('idempotency-key', 'order-42');
    await place(orders1, { sku: 'A-1' }, own);
    const keys = orders.seen.map(keyOf);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).not.toBe(keys[0]);
    expect(keys[3]).toBe('order-42');
  });

  it('passes a final status on at once: INVALID_ARGUMENT is one call', async () => {
    const orders = await server(() => ({ code: status.INVALID_ARGUMENT, details: 'no such sku' }));
    const error = await failure(place(client(orders.target, retryInterceptor({ target: orders.target, policy: FAST })), { sku: '?' }));
    expect(error.code).toBe(status.INVALID_ARGUMENT);
    expect(error.details).toBe('no such sku');
    expect(orders.seen).toHaveLength(1);
  });

  it('retries the codes the policy names (ABORTED added), and no other', async () => {
    const orders = await server((_, n) => (n === 1 ? { code: status.ABORTED } : n === 3 ? { code: status.UNAVAILABLE } : OK));
    const policy = { ...FAST, retryableStatusCodes: [...DEFAULT_RETRYABLE_GRPC_CODES, 'ABORTED' as const] };
    expect(await place(client(orders.target, retryInterceptor({ target: orders.target, policy })), {})).toEqual({ ok: true });
    expect(orders.seen).toHaveLength(2);
    const onlyAborted = retryInterceptor({ target: orders.target, policy: { ...FAST, retryableStatusCodes: ['ABORTED'] }, breaker: false });
    expect((await failure(place(client(orders.target, onlyAborted), {}))).code).toBe(status.UNAVAILABLE);
    expect(orders.seen).toHaveLength(3);
    expect(() => retryInterceptor({ target: orders.target, policy: { retryableStatusCodes: ['ABORTD' as 'ABORTED'] } })).toThrow(/retryableStatusCodes\[0\]/);
  });

  it('gives up after maxAttempts with the last status the server sent', async () => {
    const orders = await server(() => ({ code: status.RESOURCE_EXHAUSTED, details: 'quota' }));
    const error = await failure(place(client(orders.target, retryInterceptor({ target: orders.target, policy: { ...FAST, maxAttempts: 4 }, breaker: false })), {}));
    expect(error.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(error.details).toBe('quota');
    expect(orders.seen).toHaveLength(4);
  });

  it('lets streaming calls through untouched: one call, no key', async () => {
    const orders = await server(() => UNAVAILABLE);
    const stream = client(orders.target, retryInterceptor({ target: orders.target, policy: FAST })).watch({});
    const error = await new Promise<ServiceError>((resolve) => stream.on('error', resolve));
    expect(error.code).toBe(status.UNAVAILABLE);
    expect(orders.seen).toHaveLength(1);
    expect(keyOf(orders.seen[0]!)).toBeUndefined();
  });
});

describe('retryInterceptor: pushback', () => {
  it('waits what grpc-retry-pushback-ms says instead of the backoff', async () => {
    const orders = await server((_, n) => (n === 1 ? { ...UNAVAILABLE, trailers: { 'grpc-retry-pushback-ms': '250' } } : OK));
    const clock = new ManualClock();
    const call = place(client(orders.target, retryInterceptor({ target: orders.target, policy: { initialDelayMs: 1_000, maxDelayMs: 5_000 }, clock })), {});
    await waitFor('the retry to wait', () => clock.sleeps.length === 1);
    expect(clock.sleeps).toEqual([250]);
    expect(orders.seen).toHaveLength(1);
    await clock.advance(250);
    expect(await call).toEqual({ ok: true });
    expect(orders.seen).toHaveLength(2);
  });

  it('stops at a negative pushback, and at one longer than maxDelayMs', async () => {
    const stop = await server(() => ({ ...UNAVAILABLE, trailers: { 'grpc-retry-pushback-ms': '-1' } }));
    const stopped = await failure(place(client(stop.target, retryInterceptor({ target: stop.target, policy: FAST, breaker: false })), {}));
    expect(stopped.code).toBe(status.UNAVAILABLE);
    expect(stop.seen).toHaveLength(1);

    const long = await server(() => ({ ...UNAVAILABLE, trailers: { 'grpc-retry-pushback-ms': '60000' } }));
    const events: string[] = [];
    const interceptor = retryInterceptor({ target: long.target, policy: FAST, breaker: false, onAttempt: (e) => events.push(`${e.outcome} ${e.reason ?? ''}`) });
    expect((await failure(place(client(long.target, interceptor), {}))).code).toBe(status.UNAVAILABLE);
    expect(long.seen).toHaveLength(1);
    expect(events).toEqual(['exhausted retry_after_beyond_budget']);
  });
});

/** An interceptor placed after the retry interceptor: it sees each attempt, and records when it started. */
function attemptRecorder(starts: number[]): Interceptor {
  return (options, nextCall) => {
    starts.push(Date.now());
    return new InterceptingCall(nextCall(options));
  };
}

describe('retryInterceptor: deadline and cancellation', () => {
  it('starts no attempt past the call deadline, and sends each one with the deadline left', async () => {
    const orders = await server(() => UNAVAILABLE);
    const starts: number[] = [];
    const interceptor = retryInterceptor({ target: orders.target, policy: { maxAttempts: 50, backoffType: 'FIXED', initialDelayMs: 40, maxDelayMs: 40, jitterType: 'NONE' }, breaker: false });
    const deadline = Date.now() + 300;
    const error = await failure(place(client(orders.target, interceptor, attemptRecorder(starts)), {}, new Metadata(), { deadline }));
    expect([status.UNAVAILABLE, status.DEADLINE_EXCEEDED]).toContain(error.code);
    expect(starts.length).toBeGreaterThan(1);
    expect(starts.length).toBeLessThan(50);
    for (const start of starts) expect(start).toBeLessThan(deadline);
    // grpc-timeout carries ms at best: the server's reading of it is the caller's deadline, give or take the trip.
    for (const seen of orders.seen) expect(Math.abs(seen.deadlineMs - deadline)).toBeLessThan(100);
  });

  it('ends an attempt still waiting at the deadline with DEADLINE_EXCEEDED, and makes no other', async () => {
    const orders = await server(() => 'hang');
    const deadline = Date.now() + 200;
    const error = await failure(place(client(orders.target, retryInterceptor({ target: orders.target, policy: FAST, breaker: false })), {}, new Metadata(), { deadline }));
    expect(error.code).toBe(status.DEADLINE_EXCEEDED);
    expect(orders.seen).toHaveLength(1);
  });

  it('makes no attempt for a call whose deadline has passed', async () => {
    const orders = await server(() => OK);
    const error = await failure(place(client(orders.target, retryInterceptor({ target: orders.target })), {}, new Metadata(), { deadline: Date.now() - 1 }));
    expect(error.code).toBe(status.DEADLINE_EXCEEDED);
    expect(orders.seen).toHaveLength(0);
  });

  it('a cancelled call ends its attempt in flight and makes no other', async () => {
    const orders = await server(() => 'hang');
    const orders1 = client(orders.target, retryInterceptor({ target: orders.target, policy: FAST, breaker: false }));
    let call: { cancel(): void } | undefined;
    const result = new Promise<ServiceError>((resolve) => {
      call = orders1.place({}, new Metadata(), {}, (error) => resolve(error!));
    });
    await waitFor('the attempt to reach the server', () => orders.seen.length === 1);
    call!.cancel();
    expect((await result).code).toBe(status.CANCELLED);
    await orders.seen[0]!.cancelled;
    expect(orders.seen).toHaveLength(1);
  });
});

describe('retryInterceptor: circuit breaker', () => {
  it('two clients of one target share its breaker: once it opens, the other fails fast without a call', async () => {
    const orders = await server(() => UNAVAILABLE);
    // Five failures in a row open core's default breaker.
    const first = client(orders.target, retryInterceptor({ target: orders.target, policy: { ...FAST, maxAttempts: 5 } }));
    expect((await failure(place(first, {}))).code).toBe(status.UNAVAILABLE);
    expect(orders.seen).toHaveLength(5);

    const second = client(`dns:///${orders.target}`, retryInterceptor({ target: `dns:///${orders.target}`, policy: FAST }));
    const fast = await failure(place(second, {}));
    expect(fast.code).toBe(status.UNAVAILABLE);
    expect(fast.details).toMatch(/^the circuit of 127\.0\.0\.1:\d+ is open/);
    expect(orders.seen).toHaveLength(5);

    // The breaker, not the server, refused it: a client without one still reaches the server.
    await failure(place(client(orders.target, retryInterceptor({ target: orders.target, policy: { ...FAST, maxAttempts: 1 }, breaker: false })), {}));
    expect(orders.seen).toHaveLength(6);
  });
});

describe('grpcOrigin', () => {
  it('reads a target as grpc-js resolves it', () => {
    expect(grpcOrigin('localhost:50051')).toBe('localhost:50051');
    expect(grpcOrigin('dns:///Localhost:50051')).toBe('localhost:50051');
    expect(grpcOrigin('dns:localhost:50051')).toBe('localhost:50051');
    expect(grpcOrigin('dns://8.8.8.8/orders.internal')).toBe('orders.internal:443');
    expect(grpcOrigin('[::1]:50051')).toBe('[::1]:50051');
    expect(grpcOrigin('::1')).toBe('[::1]:443');
    expect(grpcOrigin('unix:/run/orders.sock')).toBe('unix:/run/orders.sock');
    expect(() => grpcOrigin('')).toThrow("Expected `target` to be the channel's target (such as 'localhost:50051'), got \"\".");
  });
});
