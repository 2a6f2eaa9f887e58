import { ManualClock, seededRandom } from '@retryd/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CredentialRuleError,
  QUEUE_DEADLINE_MS,
  QueueFullError,
  RetryQueue,
  type DeadLetter,
  type QueuedCall,
  type QueuedRequest,
  type RetryQueueOptions,
} from '../src/index.js';
import { startLoopbackServer, statuses, type LoopbackServer } from './loopback-server.js';
import { memoryPersistence } from './memory-persistence.js';

const fixed = { backoffType: 'FIXED', initialDelayMs: 1_000, maxDelayMs: 1_000, jitterType: 'NONE', maxAttempts: 3 } as const;
let server: LoopbackServer | undefined;
let queue: RetryQueue | undefined;
afterEach(async () => {
  queue?.close();
  queue = undefined;
  await server?.close();
  server = undefined;
});

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

  it("counts the statuses the policy's successStatusCodes names as done, not as dead letters", async () => {
    server = await startLoopbackServer((_request, _n, res) => res.writeHead(409).end());
    const done: QueuedCall[] = [];
    const letters: DeadLetter[] = [];
    const q = await openQueue({ policy: { ...fixed, successStatusCodes: [409] }, onSuccess: (c) => done.push(c), onDeadLetter: (l) => letters.push(l) });
    await q.enqueue({ url: `${server.url}/again` });
    await q.drained();
    expect(done.map((c) => c.attempts)).toEqual([1]);
    expect(letters).toEqual([]);
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

  it('honours a Retry-After of an hour (no one waits on a queued call), and gives up on one past its deadline of 24 h', async () => {
    server = await startLoopbackServer((request, n, res) => {
      if (request.url === '/tomorrow') res.writeHead(503, { 'retry-after': String(25 * 3600) }).end();
      else res.writeHead(n === 1 ? 503 : 200, { 'retry-after': '3600' }).end();
    });
    const clock = new ManualClock();
    const letters: DeadLetter[] = [];
    const done: QueuedCall[] = [];
    const q = await openQueue({ clock, onDeadLetter: (l) => letters.push(l), onSuccess: (c) => done.push(c) });
    await q.enqueue({ url: `${server.url}/in-an-hour` });
    await expect.poll(() => clock.pendingCount, { timeout: 10_000 }).toBe(1);
    await q.enqueue({ url: `${server.url}/tomorrow` });
    await expect.poll(() => letters.map((l) => [new URL(l.call.request.url).pathname, l.reason]), { timeout: 10_000 }).toEqual([
      ['/tomorrow', 'retry_after_beyond_budget'],
    ]);
    await clock.advance(3_600_000 - 1);
    expect(server.requests.map((r) => r.url)).toEqual(['/in-an-hour', '/tomorrow']);
    await clock.advance(1);
    await q.drained();
    expect(done.map((c) => [new URL(c.request.url).pathname, c.attempts])).toEqual([['/in-an-hour', 2]]);
  });

  it('dead-letters, unsent, a stored call taken up past its deadline (a page opened again days later)', async () => {
    server = await startLoopbackServer(statuses(200));
    const persistence = memoryPersistence();
    const clock = new ManualClock();
    const first = await RetryQueue.open({ clock, persistence, send: () => new Promise<never>(() => undefined) });
    const call = await first.enqueue({ url: `${server.url}/stale` });
    first.close(); // the page went away with the call in flight
    await clock.advance(QUEUE_DEADLINE_MS + 1);

    const letters: DeadLetter[] = [];
    queue = await RetryQueue.open({ clock, persistence, onDeadLetter: (l) => letters.push(l) });
    await queue.drained();
    expect(letters.map((l) => [l.call.id, l.reason, l.call.attempts])).toEqual([[call.id, 'budget', 0]]);
    expect(server.requests).toEqual([]);
    expect(persistence.calls.size).toBe(0);
  });

  it('names the option and the rule when one is wrong', async () => {
    await expect(RetryQueue.open({ maxSize: 0 })).rejects.toThrow('maxSize must be an integer >= 1, got 0');
    await expect(RetryQueue.open({ concurrency: 1.5 })).rejects.toThrow('concurrency must be an integer >= 1, got 1.5');
    await expect(RetryQueue.open({ policy: { maxAttempts: 0 } })).rejects.toThrow('maxAttempts must be an integer >= 1, got 0');
    const q = await openQueue({});
    await expect(q.enqueue({ url: 'not a url' })).rejects.toThrow('url must be an absolute URL, or relative in a page, got "not a url"');
  });
});

describe('RetryQueue and credentials', () => {
  it('refuses a credential header at enqueue when it has no resolver, naming the header, the rule and the ways out', async () => {
    server = await startLoopbackServer(statuses(200));
    const persistence = memoryPersistence();
    const q = await openQueue({ persistence });
    for (const name of ['Authorization', 'cookie', 'Proxy-Authorization', 'X-Api-Key', 'X-Vault-Token', 'Client-Secret']) {
      await expect(q.enqueue({ url: server.url, method: 'POST', headers: { [name]: 'secret' } }), name).rejects.toThrow(CredentialRuleError);
    }
    await expect(q.enqueue({ url: server.url, headers: { accept: 'text/plain', Authorization: 'Bearer sk_live_1' } })).rejects.toThrow(
      'headers.Authorization carries a credential, which a RetryQueue does not store: give the queue a `credentials` resolver ' +
        'that returns it at send time (or name the header in `notCredentials` if it carries none, or accept the risk with ' +
        '`storeCredentials: true`)',
    );
    expect(q.size).toBe(0);
    expect(persistence.calls.size).toBe(0);
    expect(server.requests).toEqual([]);
  });

  it('stores a call without its credentials and asks the resolver for them at each attempt', async () => {
    server = await startLoopbackServer(statuses(503, 200));
    const persistence = memoryPersistence();
    const clock = new ManualClock();
    const asked: QueuedRequest[] = [];
    const q = await openQueue({
      clock,
      policy: fixed,
      persistence,
      notCredentials: ['x-partition-key'],
      credentials: (request) => {
        asked.push(structuredClone(request));
        return { authorization: `Bearer token-${asked.length}` };
      },
    });
    const headers = { 'content-type': 'application/json', Authorization: 'Bearer old', Cookie: 'sid=1', 'X-Api-Key': 'k', 'X-Partition-Key': 'eu' };
    const call = await q.enqueue({ url: `${server.url}/orders`, method: 'POST', headers, body: '{}' });
    const kept = { 'content-type': 'application/json', 'X-Partition-Key': 'eu', 'Idempotency-Key': call.id };
    expect(call.request.headers).toEqual(kept);
    expect(persistence.calls.get(call.id)?.request.headers).toEqual(kept);

    await expect.poll(() => clock.pendingCount, { timeout: 10_000 }).toBe(1);
    expect(persistence.calls.get(call.id)?.request.headers).toEqual(kept);
    await clock.advance(1_000);
    await q.drained();
    expect(asked.map((r) => r.headers)).toEqual([kept, kept]);
    expect(server.requests.map((r) => [r.headers.authorization, r.headers.cookie, r.headers['x-api-key'], r.headers['x-partition-key']])).toEqual([
      ['Bearer token-1', undefined, undefined, 'eu'],
      ['Bearer token-2', undefined, undefined, 'eu'],
    ]);
  });

  it('retries an attempt whose resolver failed, and dead-letters one it says is not retryable', async () => {
    server = await startLoopbackServer(statuses(200));
    const clock = new ManualClock();
    const letters: DeadLetter[] = [];
    let calls = 0;
    const q = await openQueue({
      clock,
      policy: fixed,
      onDeadLetter: (l) => letters.push(l),
      credentials: (request) => {
        calls++;
        if (request.url.endsWith('/signed-out')) throw Object.assign(new Error('signed out'), { retryable: false });
        if (calls === 1) throw new Error('token refresh failed');
        return { authorization: 'Bearer fresh' };
      },
    });
    await q.enqueue({ url: `${server.url}/flaky-token` });
    await expect.poll(() => clock.pendingCount, { timeout: 10_000 }).toBe(1);
    await clock.advance(1_000);
    await q.enqueue({ url: `${server.url}/signed-out` });
    await q.drained();
    expect(server.requests.map((r) => [r.url, r.headers.authorization])).toEqual([['/flaky-token', 'Bearer fresh']]);
    expect(letters.map((l) => [new URL(l.call.request.url).pathname, l.reason, (l.error as Error).message])).toEqual([
      ['/signed-out', 'non_retryable_error', 'signed out'],
    ]);
  });

  it('keeps credential headers as given with storeCredentials: true', async () => {
    server = await startLoopbackServer(statuses(200));
    const persistence = memoryPersistence();
    const q = await openQueue({ persistence, storeCredentials: true });
    const call = await q.enqueue({ url: server.url, headers: { 'X-Api-Key': 'ingest-only' } });
    expect(persistence.calls.get(call.id)?.request.headers).toEqual({ 'X-Api-Key': 'ingest-only' });
    await q.drained();
    expect(server.requests.map((r) => r.headers['x-api-key'])).toEqual(['ingest-only']);
  });
});
