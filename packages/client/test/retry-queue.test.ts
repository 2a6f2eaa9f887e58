import { ManualClock, seededRandom } from '@retryd/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { QueueFullError, RetryQueue, type DeadLetter, type QueuedCall, type QueuePersistence, type RetryQueueOptions } from '../src/index.js';
import { startLoopbackServer, statuses, type LoopbackServer } from './loopback-server.js';

const fixed = { backoffType: 'FIXED', initialDelayMs: 1_000, maxDelayMs: 1_000, jitterType: 'NONE', maxAttempts: 3 } as const;
let server: LoopbackServer | undefined;
let queue: RetryQueue | undefined;
afterEach(async () => {
  queue?.close();
  queue = undefined;
  await server?.close();
  server = undefined;
});

/** A persistence in a Map, standing in for IndexedDB (which the browser test uses). */
function memoryPersistence(): QueuePersistence & { calls: Map<string, QueuedCall> } {
  const calls = new Map<string, QueuedCall>();
  return {
    calls,
    load: async () => [...calls.values()].map((c) => structuredClone(c)),
    save: async (call) => void calls.set(call.id, structuredClone(call)),
    remove: async (id) => void calls.delete(id),
  };
}

async function openQueue(options: RetryQueueOptions): Promise<RetryQueue> {
  queue = await RetryQueue.open({ random: seededRandom(1), ...options });
  return queue;
}

describe('RetryQueue', () => {
  it('retries a failing call at the policy delays with one timer, the same Idempotency-Key each time, until it succeeds', async () => {
    server = await startLoopbackServer(statuses(503, 503, 200));
    const clock = new ManualClock(1_000_000);
    const done: QueuedCall[] = [];
    const q = await openQueue({ clock, policy: fixed, onSuccess: (call) => done.push(call) });
    const call = await q.enqueue({ url: `${server.url}/events`, method: 'post', body: '{"e":1}' });
    await expect.poll(() => clock.pendingCount, { timeout: 10_000 }).toBe(1); // first attempt failed, retry armed
    await clock.advance(999);
    expect(server.requests).toHaveLength(1);
    await clock.advance(1);
    await expect.poll(() => server?.requests.length, { timeout: 10_000 }).toBe(2);
    await expect.poll(() => clock.pendingCount, { timeout: 10_000 }).toBe(1);
    await clock.advance(1_000);
    await q.drained();
    expect(done.map((c) => [c.id, c.attempts])).toEqual([[call.id, 3]]);
    expect(server.requests.map((r) => [r.method, r.headers['idempotency-key'], r.body])).toEqual(Array(3).fill(['POST', call.id, '{"e":1}']));
  });

  it('keeps a single timer for many waiting calls, and runs them in due order', async () => {
    server = await startLoopbackServer((request, _n, res) => res.writeHead(request.url === '/fail' ? 503 : 200).end());
    const clock = new ManualClock();
    const q = await openQueue({ clock, policy: { ...fixed, maxAttempts: 2 }, concurrency: 50 });
    await Promise.all(Array.from({ length: 20 }, () => q.enqueue({ url: `${server?.url}/fail` })));
    await expect.poll(() => server?.requests.length, { timeout: 10_000 }).toBe(20);
    await expect.poll(() => clock.pendingCount, { timeout: 10_000 }).toBe(1);
    expect(q.size).toBe(20);
  });

  it('refuses calls beyond maxSize and keeps at most `concurrency` attempts in flight', async () => {
    const held: (() => void)[] = [];
    server = await startLoopbackServer((_r, _n, res) => held.push(() => res.writeHead(200).end()));
    const q = await openQueue({ maxSize: 5, concurrency: 2 });
    for (let i = 0; i < 5; i++) await q.enqueue({ url: `${server.url}/${i}` });
    await expect(q.enqueue({ url: server.url })).rejects.toThrow(QueueFullError);
    await expect(q.enqueue({ url: server.url })).rejects.toThrow('the queue is full: it holds maxSize (5) calls');
    await expect.poll(() => held.length, { timeout: 10_000 }).toBe(2);
    held.splice(0).forEach((answer) => answer());
    await expect.poll(() => server?.requests.length, { timeout: 10_000 }).toBe(4);
    expect(held).toHaveLength(2);
    held.splice(0).forEach((answer) => answer());
    await expect.poll(() => held.length, { timeout: 10_000 }).toBe(1);
    held.splice(0).forEach((answer) => answer());
    await q.drained();
    expect(server.requests.map((r) => r.url)).toEqual(['/0', '/1', '/2', '/3', '/4']);
  });

  it('dead-letters a permanent status at once, and a retryable one when the attempts or the budget run out', async () => {
    server = await startLoopbackServer((request, _n, res) => {
      if (request.url === '/gone') res.writeHead(404).end();
      else if (request.url === '/later') res.writeHead(503, { 'retry-after': '3600' }).end();
      else res.writeHead(503).end();
    });
    const clock = new ManualClock();
    const letters: DeadLetter[] = [];
    const q = await openQueue({ clock, policy: { ...fixed, maxAttempts: 2, totalBudgetMs: 60_000 }, onDeadLetter: (l) => letters.push(l) });
    await q.enqueue({ url: `${server.url}/gone` });
    await q.enqueue({ url: `${server.url}/later` });
    await q.enqueue({ url: `${server.url}/busy` });
    await expect.poll(() => letters.length, { timeout: 10_000 }).toBe(2);
    await expect.poll(() => clock.pendingCount, { timeout: 10_000 }).toBe(1); // /busy failed once, its retry armed
    await clock.advance(1_000);
    await q.drained();
    expect(letters.map((l) => [new URL(l.call.request.url).pathname, l.reason, l.call.attempts, l.response?.status])).toEqual([
      ['/gone', 'permanent_status', 1, 404],
      ['/later', 'retry_after_beyond_budget', 1, 503],
      ['/busy', 'max_attempts', 2, 503],
    ]);
  });

  it('takes up its persisted calls after a restart, attempts and key kept, and forgets them once done', async () => {
    server = await startLoopbackServer(statuses(503, 200));
    const persistence = memoryPersistence();
    const clock = new ManualClock();
    const first = await RetryQueue.open({ clock, policy: fixed, persistence });
    const call = await first.enqueue({ url: `${server.url}/keep`, method: 'PATCH', headers: { 'Idempotency-Key': 'mine' }, body: 'x' });
    expect(persistence.calls.has(call.id)).toBe(true);
    await expect.poll(() => persistence.calls.get(call.id)?.attempts, { timeout: 10_000 }).toBe(1);
    first.close(); // the page goes away with the retry pending

    const done: QueuedCall[] = [];
    queue = await RetryQueue.open({ clock, policy: fixed, persistence, onSuccess: (c) => done.push(c) });
    expect(queue.size).toBe(1);
    await clock.advance(1_000);
    await queue.drained();
    expect(done.map((c) => c.attempts)).toEqual([2]);
    expect(persistence.calls.size).toBe(0);
    expect(server.requests.map((r) => r.headers['idempotency-key'])).toEqual(['mine', 'mine']);
  });

  it('names the option and the rule when one is wrong', async () => {
    await expect(RetryQueue.open({ maxSize: 0 })).rejects.toThrow('maxSize must be an integer >= 1, got 0');
    await expect(RetryQueue.open({ concurrency: 1.5 })).rejects.toThrow('concurrency must be an integer >= 1, got 1.5');
    await expect(RetryQueue.open({ policy: { maxAttempts: 0 } })).rejects.toThrow('maxAttempts must be an integer >= 1, got 0');
    const q = await openQueue({});
    await expect(q.enqueue({ url: 'not a url' })).rejects.toThrow('url must be an absolute URL, or relative in a page, got "not a url"');
  });
});
