import { createHmac } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/service/logger.js';
import { DEFAULT_CONFIG } from '../src/service/retryd-config.js';
import { startRetryd, type RunningRetryd } from '../src/service/start-retryd.js';
import { reply, startServer, type SeenRequest, type TestServer } from './engine-helpers.js';
import { POSTGRES_STORE, REDIS_STORE, SQLITE_STORE, type SharedStore } from './shared-stores.js';
import { waitFor } from './wait-for.js';

// Completion callbacks in the running service, on every store: a task that ends tells its callback URL, as a task of
// its own (retried, signed when its target signs, one per end however many instances relay it), and a callback that
// dead-letters calls nobody back.

const FAST = { maxAttempts: 5, backoffType: 'FIXED', initialDelayMs: 20, multiplier: 1, maxDelayMs: 20, jitterType: 'NONE' };
const TWO_TRIES = { ...FAST, maxAttempts: 2 };
/** Fails once, then waits an hour: PENDING for the whole of a test. */
const HOUR = { maxAttempts: 3, backoffType: 'FIXED', initialDelayMs: 3_600_000, multiplier: 1, maxDelayMs: 3_600_000, jitterType: 'NONE' };
const SIGNING_KEY = Buffer.alloc(32, 7);

interface Event {
  type: string;
  taskId: string;
  idempotencyKey: string;
  status: string;
  reason: string | null;
  attempts: number;
  endedAt: number;
  lastResponse: { status: number | null; excerpt: string | null } | null;
  lastError: string | null;
}

/** A downstream: `/ok` succeeds, `/bad` is refused for good, `/cb/...` receives callbacks (`/cb/flaky` fails each key's first call, `/cb/down` every call). */
function startDownstream(): Promise<TestServer> {
  const seen = new Map<string, number>();
  return startServer((req, res) => {
    if (req.url.startsWith('/ok')) return reply(res, 200, 'paid: order 42');
    if (req.url.startsWith('/bad')) return reply(res, 400, 'no such order');
    if (req.url.startsWith('/cb/down')) return reply(res, 503, 'down');
    if (req.url.startsWith('/cb/flaky')) {
      const key = String(req.headers['idempotency-key']);
      const calls = (seen.get(key) ?? 0) + 1;
      seen.set(key, calls);
      return reply(res, calls === 1 ? 503 : 200, calls === 1 ? 'not yet' : 'ok');
    }
    return reply(res, 204);
  });
}

async function startService(store: string, secretsFile: string): Promise<RunningRetryd> {
  const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });
  return startRetryd({ ...DEFAULT_CONFIG, port: 0, store, allowTargets: ['127.0.0.1/32'], secretsFile, graceMs: 0 }, createLogger('info', quiet));
}

async function call(service: RunningRetryd, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${service.url}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const callbacksTo = (server: TestServer, path: string) => server.requests.filter((r) => r.url.startsWith(path));
const eventOf = (request: SeenRequest) => JSON.parse(request.body) as Event;

describe.each([SQLITE_STORE, POSTGRES_STORE, REDIS_STORE])('completion callbacks on $name', (shared: SharedStore) => {
  let dir: string;
  let service: RunningRetryd;
  let downstream: TestServer;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'retryd-callbacks-'));
    const secretsFile = join(dir, 'secrets.json');
    await writeFile(secretsFile, JSON.stringify({ CALLBACK_SIGNING: `whsec_${SIGNING_KEY.toString('base64')}` }));
    downstream = await startDownstream();
    service = await startService(shared.freshUrl(), secretsFile);
    for (const [policyId, policy] of [['fast', FAST], ['two-tries', TWO_TRIES]] as const) {
      expect((await call(service, 'POST', '/retry-policies', { policyId, ...policy })).status).toBe(201);
    }
  });

  afterAll(async () => {
    await service?.close();
    await downstream?.close();
    await shared.drop();
    await rm(dir, { recursive: true, force: true });
  });

  async function enqueue(task: Record<string, unknown>): Promise<Record<string, unknown>> {
    const created = await call(service, 'POST', '/retry-tasks', { method: 'POST', body: { order: 42 }, ...task });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body;
  }

  const waitForCallback = (path: string, taskId: string) =>
    waitFor(`the callback of ${taskId} to ${path}`, () => callbacksTo(downstream, path).find((r) => eventOf(r).taskId === taskId));

  it('tells a success: the task, its key, its attempts and the start of its last answer, as a task of its own', async () => {
    const task = await enqueue({ targetUrl: `${downstream.url}/ok`, idempotencyKey: 'order-42', callback: { url: `${downstream.url}/cb/success?token=s3cr3t` } });
    expect(task.callback).toEqual({ url: `${downstream.url}/cb/success?token=REDACTED`, on: ['succeeded', 'failed', 'cancelled'], policyId: null });
    const seen = await waitForCallback('/cb/success', task.taskId as string);
    expect(seen.method).toBe('POST');
    expect(seen.headers['content-type']).toBe('application/json');
    const event = eventOf(seen);
    expect(event).toEqual({
      type: 'task.ended',
      taskId: task.taskId,
      idempotencyKey: 'order-42',
      status: 'SUCCEEDED',
      reason: null,
      attempts: 1,
      endedAt: expect.any(Number),
      lastResponse: { status: 200, excerpt: 'paid: order 42' },
      lastError: null,
    });
    const ended = (await call(service, 'GET', `/retry-tasks/${task.taskId as string}`)).body;
    expect(event.endedAt).toBe(ended.updatedAt);
    // The callback is a task of its own, found by its derived key, with no callback of its own.
    const key = seen.headers['idempotency-key'] as string;
    expect(key).toMatch(new RegExp(`^retryd-callback:${task.taskId as string}:\\d+$`));
    const found = await call(service, 'GET', `/retry-tasks?idempotencyKey=${encodeURIComponent(key)}`);
    const items = found.body.items as Record<string, unknown>[];
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ targetUrl: `${downstream.url}/cb/success?token=REDACTED`, callback: null });
  });

  it('tells a dead letter and a cancel, and only the ends its callback asks for', async () => {
    const notAsked = await enqueue({ targetUrl: `${downstream.url}/ok`, callback: { url: `${downstream.url}/cb/failures`, on: ['failed'] } });
    await waitFor('the success', async () => (await call(service, 'GET', `/retry-tasks/${notAsked.taskId as string}`)).body.status === 'SUCCEEDED');
    const failed = await enqueue({ targetUrl: `${downstream.url}/bad`, callback: { url: `${downstream.url}/cb/failures`, on: ['failed'] } });
    const event = eventOf(await waitForCallback('/cb/failures', failed.taskId as string));
    expect(event).toMatchObject({ status: 'FAILED', attempts: 1, lastResponse: { status: 400, excerpt: 'no such order' } });
    expect(event.reason).toEqual(expect.any(String));

    const waiting = await enqueue({ targetUrl: `${downstream.url}/ok`, delayMs: 3_600_000, policy: HOUR, callback: { url: `${downstream.url}/cb/cancels` } });
    expect((await call(service, 'DELETE', `/retry-tasks/${waiting.taskId as string}`)).status).toBe(200);
    expect(eventOf(await waitForCallback('/cb/cancels', waiting.taskId as string))).toMatchObject({ status: 'CANCELLED', attempts: 0, lastResponse: null });

    // The success that asked only for failures was owed and dropped: no callback task was made for it, none sent.
    const all = (await call(service, 'GET', '/retry-tasks?limit=1000')).body.items as { idempotencyKey: string }[];
    expect(all.filter((t) => t.idempotencyKey.startsWith(`retryd-callback:${notAsked.taskId as string}:`))).toEqual([]);
    expect(callbacksTo(downstream, '/cb/failures').map((r) => eventOf(r).taskId)).toEqual([failed.taskId]);
  });

  it('retries a callback under its policy with the same key and signature id, signed when its target signs', async () => {
    const settings = await call(service, 'PUT', `/targets/${encodeURIComponent(downstream.url)}`, { signing: { enabled: true, secrets: ['{{secret:CALLBACK_SIGNING}}'] } });
    expect(settings.status, JSON.stringify(settings.body)).toBe(200);
    try {
      const task = await enqueue({ targetUrl: `${downstream.url}/ok`, callback: { url: `${downstream.url}/cb/flaky`, policyId: 'fast' } });
      const attempts = await waitFor(
        'two attempts of the callback',
        () => {
          const mine = callbacksTo(downstream, '/cb/flaky').filter((r) => eventOf(r).taskId === task.taskId);
          return mine.length >= 2 && mine;
        },
      );
      const [first, second] = attempts as [SeenRequest, SeenRequest];
      expect(second.body).toBe(first.body);
      expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
      expect(first.headers['webhook-id']).toBe(first.headers['idempotency-key']);
      for (const seen of attempts) {
        const mac = createHmac('sha256', SIGNING_KEY).update(`${seen.headers['webhook-id'] as string}.${seen.headers['webhook-timestamp'] as string}.${seen.body}`).digest('base64');
        expect(seen.headers['webhook-signature']).toBe(`v1,${mac}`);
      }
    } finally {
      await call(service, 'PUT', `/targets/${encodeURIComponent(downstream.url)}`, { signing: { enabled: false } });
    }
  });

  it('leaves a callback that dead-letters in the dead letters, and calls nobody back for it', async () => {
    const task = await enqueue({ targetUrl: `${downstream.url}/ok`, callback: { url: `${downstream.url}/cb/down`, policyId: 'two-tries' } });
    await waitFor('both attempts of the callback', () => callbacksTo(downstream, '/cb/down').filter((r) => eventOf(r).taskId === task.taskId).length === 2);
    const dead = await waitFor(
      'the callback in the dead letters',
      async () => {
        const letters = (await call(service, 'GET', '/dead-letters')).body.items as Record<string, unknown>[];
        return letters.find((l) => String(l.idempotencyKey).startsWith(`retryd-callback:${task.taskId as string}:`));
      },
    );
    expect(dead).toMatchObject({ status: 'EXHAUSTED', callback: null, attemptNumber: 2 });
  });

  it("gives a policy's callback to the tasks enqueued under it that name none", async () => {
    const registered = await call(service, 'POST', '/retry-policies', { policyId: 'told', ...FAST, callback: { url: `${downstream.url}/cb/policy`, on: ['succeeded'] } });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    expect(registered.body.callback).toEqual({ url: `${downstream.url}/cb/policy`, on: ['succeeded'], policyId: null });
    const inherits = await enqueue({ targetUrl: `${downstream.url}/ok`, policyId: 'told' });
    expect(inherits.callback).toEqual({ url: `${downstream.url}/cb/policy`, on: ['succeeded'], policyId: null });
    const own = await enqueue({ targetUrl: `${downstream.url}/ok`, policyId: 'told', callback: { url: `${downstream.url}/cb/own` } });
    expect(eventOf(await waitForCallback('/cb/policy', inherits.taskId as string)).status).toBe('SUCCEEDED');
    expect(eventOf(await waitForCallback('/cb/own', own.taskId as string)).status).toBe('SUCCEEDED');
    expect(callbacksTo(downstream, '/cb/policy').map((r) => eventOf(r).taskId)).toEqual([inherits.taskId]);

    // Taken away by a PUT: the tasks enqueued after it have none.
    expect((await call(service, 'PUT', '/retry-policies/told', FAST)).body.callback).toBeNull();
    expect((await enqueue({ targetUrl: `${downstream.url}/ok`, policyId: 'told' })).callback).toBeNull();
    const refused = await call(service, 'POST', '/retry-policies', { policyId: 'private', ...FAST, callback: { url: 'http://10.0.0.1/cb' } });
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([expect.objectContaining({ field: 'callback.url' })]);
  });

  it('refuses a callback it could never make, naming the field and the rule', async () => {
    const bad = await call(service, 'POST', '/retry-tasks', {
      targetUrl: `${downstream.url}/ok`,
      method: 'POST',
      callback: { url: 'ftp://caller.example.com/x', on: ['succeeded', 'succeeded'], policyId: 'no such', extra: 1 },
    });
    expect(bad.status).toBe(400);
    const fields = (bad.body.errors as { field: string }[]).map((e) => e.field).sort();
    expect(fields).toEqual(['callback.extra', 'callback.on', 'callback.policyId', 'callback.url']);

    const unknownPolicy = await call(service, 'POST', '/retry-tasks', { targetUrl: `${downstream.url}/ok`, method: 'POST', callback: { url: `${downstream.url}/cb/x`, policyId: 'missing' } });
    expect(unknownPolicy.status).toBe(400);
    expect(unknownPolicy.body.errors).toEqual([expect.objectContaining({ field: 'callback.policyId' })]);

    const privateUrl = await call(service, 'POST', '/retry-tasks', { targetUrl: `${downstream.url}/ok`, method: 'POST', callback: { url: 'http://10.0.0.1/cb' } });
    expect(privateUrl.status).toBe(400);
    expect(privateUrl.body.code).toBe('TARGET_NOT_ALLOWED');
    expect(privateUrl.body.errors).toEqual([expect.objectContaining({ field: 'callback.url' })]);
  });
});

describe('completion callbacks with two instances on one PostgreSQL schema', () => {
  it('makes each callback once, whichever instance relays it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'retryd-callbacks-two-'));
    const secretsFile = join(dir, 'secrets.json');
    await writeFile(secretsFile, '{}');
    const downstream = await startDownstream();
    const store = POSTGRES_STORE.freshUrl();
    const services = [await startService(store, secretsFile), await startService(store, secretsFile)];
    try {
      const tasks = 60;
      const ids: string[] = [];
      for (let i = 0; i < tasks; i++) {
        const target = services[i % 2] as RunningRetryd;
        const created = await call(target, 'POST', '/retry-tasks', { targetUrl: `${downstream.url}/ok`, method: 'POST', callback: { url: `${downstream.url}/cb/two` } });
        ids.push(created.body.taskId as string);
      }
      await waitFor('every callback', () => new Set(callbacksTo(downstream, '/cb/two').map((r) => eventOf(r).taskId)).size === tasks, 30_000);
      // Every callback task has ended (nothing left to send), and each end was told once.
      await waitFor(
        'no callback left pending',
        async () => ((await call(services[0] as RunningRetryd, 'GET', '/retry-tasks?status=PENDING')).body.items as unknown[]).length === 0,
      );
      const told = callbacksTo(downstream, '/cb/two').map((r) => eventOf(r).taskId).sort();
      expect(told).toEqual([...ids].sort());
    } finally {
      for (const service of services) await service.close();
      await downstream.close();
      await POSTGRES_STORE.drop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
