import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RetrydClient } from '../src/index.js';
import type { HandoffOptions } from '../src/handoff/handoff-fetch.js';
import { Downstream, startService, type TestService } from './service-harness.js';
import { waitFor } from '../../server/test/wait-for.js';

/** The credential the handler sends downstream; the service knows it as the secret ORDERS_TOKEN. */
export const ORDERS_TOKEN = 'Bearer sk_live_orders_123';
const FAST = { maxAttempts: 5, backoffType: 'FIXED', initialDelayMs: 50, multiplier: 1, maxDelayMs: 50, jitterType: 'NONE' } as const;

/** An app under test: a framework's server on loopback whose `POST /checkout?path=…` calls `downstream + path` through `retryd.fetch`. */
export type StartApp = (options: HandoffOptions, downstream: string) => Promise<{ url: string; close: () => Promise<void> }>;

/** What every app's handler sends downstream: credentials of every kind, and the order. */
export const CHECKOUT_HEADERS = {
  authorization: ORDERS_TOKEN,
  'x-api-key': 'k_live_456',
  cookie: 'session=abc',
  'x-partner-signature': 'sig-789',
  'content-type': 'application/json',
  'x-request-source': 'checkout',
};

/**
 * The hand-off, end to end, the same for every framework: a real retryd service (with the secret ORDERS_TOKEN in its
 * secrets file and no encryption key, so it refuses any literal credential), a real downstream, and the app.
 */
export function handoffScenario(startApp: StartApp): void {
  let service: TestService;
  let downstream: Downstream;
  let app: { url: string; close: () => Promise<void> };
  let client: RetrydClient;
  const secretsFile = join(tmpdir(), `retryd-client-secrets-${process.pid}-${Math.random().toString(36).slice(2)}.json`);
  const seenKeys = new Set<string>();

  beforeAll(async () => {
    await writeFile(secretsFile, JSON.stringify({ ORDERS_TOKEN }));
    service = await startService({ secretsFile });
    client = new RetrydClient({ url: service.url, apiKey: service.apiKey });
    // /flaky fails the first request of each idempotency key; /bad always refuses; /ok always succeeds.
    downstream = new Downstream((request) => {
      const key = String(request.headers['idempotency-key']);
      if (request.path === '/bad') return { status: 400, body: JSON.stringify({ error: 'no such product' }) };
      if (request.path === '/flaky' && !seenKeys.has(key)) {
        seenKeys.add(key);
        return { status: 503 };
      }
      return { status: 200, body: JSON.stringify({ ok: true, path: request.path }) };
    });
    const target = await downstream.start();
    app = await startApp({ client, secrets: { authorization: 'ORDERS_TOKEN' }, alsoStrip: ['x-partner-signature'], policy: FAST }, target);
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await service?.close();
    await downstream?.close();
    await rm(secretsFile, { force: true });
  });

  const checkout = (path: string) =>
    fetch(`${app.url}/checkout?path=${encodeURIComponent(path)}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sku: 'A1' }) });

  it('answers with the downstream answer when the first try succeeds, and hands nothing over', async () => {
    const before = (await client.listTasks({ limit: 1000 })).items.length;
    const response = await checkout('/ok');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true, path: '/ok' });
    expect((await client.listTasks({ limit: 1000 })).items).toHaveLength(before);
  });

  it('lets the handler answer a failure that retrying would not fix', async () => {
    const response = await checkout('/bad');
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'no such product' });
  });

  it('hands a retryable failure to the service, answers 202 queued, and the service delivers it with the secret resolved', async () => {
    const response = await checkout('/flaky');
    expect(response.status).toBe(202);
    const answer = (await response.json()) as { status: string; taskId: string };
    expect(answer).toEqual({ status: 'queued', taskId: expect.any(String) });

    await waitFor('the task to succeed', async () => (await client.getTask(answer.taskId)).status === 'SUCCEEDED');
    const tries = downstream.received.filter((r) => r.path === '/flaky');
    expect(tries.map((r) => r.status)).toEqual([503, 200]);
    const [first, retried] = tries;
    // One key for the first try and the service's retry: the downstream can tell them apart from two orders.
    expect(retried?.headers['idempotency-key']).toBe(first?.headers['idempotency-key']);
    expect(retried?.body).toBe(JSON.stringify({ sku: 'A1' }));
    expect(retried?.headers['x-request-source']).toBe('checkout');
    // Resolved by the service from {{secret:ORDERS_TOKEN}} at dispatch; the other credentials never left the app.
    expect(retried?.headers.authorization).toBe(ORDERS_TOKEN);
    expect(retried?.headers['x-api-key']).toBeUndefined();
    expect(retried?.headers.cookie).toBeUndefined();
    expect(retried?.headers['x-partner-signature']).toBeUndefined();
    const task = await client.getTask(answer.taskId);
    expect(task.idempotencyKey).toBe(first?.headers['idempotency-key']);
    expect(Object.keys(task.headers).map((h) => h.toLowerCase()).sort()).toEqual(['authorization', 'content-type', 'x-request-source']);
  });
}
