import { readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_RETRY, HandoffSpool, RetrydClient, type EnqueueAnswer, type SpoolEntry } from '../src/index.js';
import { retrydExpress } from '../src/express/index.js';
import { retrydFastify } from '../src/fastify/index.js';
import { fileSpoolStorage } from '../src/file-spool/index.js';
import type { HandoffOptions } from '../src/handoff/handoff-fetch.js';
import { Downstream, startService, type TestService } from './service-harness.js';
import { waitFor } from '../../server/test/wait-for.js';

// The hand-off while retryd is down, end to end: a real service on a SQLite file, stopped and started again on the
// same store and port; an Express app whose downstream fails its first try; the spool in a real directory.

const ORDERS_TOKEN = 'Bearer sk_live_spooled_123';
const POLICY = { maxAttempts: 3, backoffType: 'FIXED', initialDelayMs: 50, multiplier: 1, maxDelayMs: 50, jitterType: 'NONE' } as const;
/** One attempt per request: the spool's own backoff is what waits for the service. */
const ONE_TRY = { ...CLIENT_RETRY, maxAttempts: 1 };

/** An Express app on loopback whose `POST /checkout` posts its body to `downstream/orders` through `req.retryd.fetch`. */
async function startExpress(options: HandoffOptions, downstream: string): Promise<{ url: string; close: () => Promise<void> }> {
  const retryd = retrydExpress(options);
  const app = express();
  app.use(express.json());
  app.use(retryd.middleware);
  app.post('/checkout', async (req, res) => {
    const answer = await req.retryd.fetch(`${downstream}/orders`, {
      method: 'POST',
      headers: { authorization: ORDERS_TOKEN, cookie: 'session=abc', 'content-type': 'application/json' },
      body: JSON.stringify(req.body),
    });
    res.status(answer.status).json(await answer.json());
  });
  app.use(retryd.errorHandler);
  const server = await new Promise<ReturnType<typeof app.listen>>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('handoffFetch with a file spool while retryd is down', () => {
  let service: TestService;
  let client: RetrydClient;
  let downstream: Downstream;
  let target: string;
  let dir: string;
  let spool: HandoffSpool;
  let app: { url: string; close: () => Promise<void> };
  const forwarded: { entry: SpoolEntry; answer: EnqueueAnswer }[] = [];
  let failing = true;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'retryd-spool-handoff-'));
    await writeFile(join(dir, 'secrets.json'), JSON.stringify({ ORDERS_TOKEN }));
    service = await startService({ secretsFile: join(dir, 'secrets.json') });
    client = new RetrydClient({ url: service.url, apiKey: service.apiKey, retry: ONE_TRY });
    // Fails while `failing` (the handler then hands its call over), then succeeds.
    downstream = new Downstream(() => ({ status: failing ? 503 : 200 }));
    target = await downstream.start();
    spool = await HandoffSpool.open({
      client,
      storage: fileSpoolStorage({ directory: join(dir, 'spool') }),
      retry: { initialDelayMs: 20, maxDelayMs: 200 },
      onForwarded: (entry, answer) => forwarded.push({ entry, answer }),
    });
    app = await startExpress({ client, spool, secrets: { authorization: 'ORDERS_TOKEN' }, policy: POLICY }, target);
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await spool?.close();
    await service?.close();
    await downstream?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const checkout = async (body: unknown) => {
    const response = await fetch(`${app.url}/checkout`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: response.status, body: (await response.json()) as Record<string, string> };
  };

  it('answers 202 spooled with the fsynced journal holding each call once, then forwards each once when retryd is back', async () => {
    await service.stop();
    const first = await checkout({ sku: 'A1' });
    const second = await checkout({ sku: 'B2' });
    // The caller's own retry of the first request: the same key, kept once.
    const again = await checkout({ sku: 'A1' });
    expect(first).toEqual({ status: 202, body: { status: 'spooled', idempotencyKey: expect.stringMatching(/^[0-9a-f]{32}$/) } });
    expect(second.status).toBe(202);
    expect(again.body.idempotencyKey).toBe(first.body.idempotencyKey);
    expect(second.body.idempotencyKey).not.toBe(first.body.idempotencyKey);
    expect(spool.stats).toMatchObject({ entries: 2, dead: 0, waitingForRetryd: true });

    // On disk before the 202: an add record per call, the credential a reference, the cookie dropped.
    const journal = await readFile(join(dir, 'spool', 'journal.ndjson'), 'utf8');
    const records = journal.trimEnd().split('\n').map((line) => JSON.parse(line) as { op: string; entry: SpoolEntry });
    expect(records.map((r) => [r.op, r.entry.request.idempotencyKey])).toEqual([
      ['add', first.body.idempotencyKey],
      ['add', second.body.idempotencyKey],
    ]);
    expect(records[0]?.entry.request.headers).toEqual({ authorization: '{{secret:ORDERS_TOKEN}}', 'content-type': 'application/json' });
    expect(journal).not.toContain('sk_live');
    expect(journal).not.toContain('session=abc');

    failing = false;
    service = await startService({ secretsFile: join(dir, 'secrets.json') }, service);
    await waitFor('the spool to forward what it holds', () => spool.stats.entries === 0);
    expect(forwarded.map((f) => [f.entry.request.idempotencyKey, f.answer.outcome])).toEqual([
      [first.body.idempotencyKey, 'created'],
      [second.body.idempotencyKey, 'created'],
    ]);
    const tasks = (await client.listTasks({ limit: 1000 })).items;
    expect(tasks.map((t) => t.idempotencyKey).sort()).toEqual([first.body.idempotencyKey, second.body.idempotencyKey].sort());
    // The service made the calls, with the secret resolved at dispatch.
    await waitFor('both tasks to succeed', async () => (await Promise.all(tasks.map((t) => client.getTask(t.taskId)))).every((t) => t.status === 'SUCCEEDED'));
    const retried = downstream.received.filter((r) => r.status === 200);
    expect(retried.map((r) => r.headers.authorization)).toEqual([ORDERS_TOKEN, ORDERS_TOKEN]);
    // Compacted once nothing waits.
    expect(await readFile(join(dir, 'spool', 'journal.ndjson'), 'utf8')).toBe('');
    expect(spool.stats).toMatchObject({ entries: 0, bytes: 0, waitingForRetryd: false });
  });

  it('makes one task of a double submit while retryd is up', async () => {
    failing = true;
    const first = await checkout({ sku: 'C3' });
    const second = await checkout({ sku: 'C3' });
    expect(first).toEqual({ status: 202, body: { status: 'queued', taskId: expect.any(String) } });
    expect(second.body.taskId).toBe(first.body.taskId);
  });
});

describe('retrydFastify with a spool', () => {
  it('answers 202 spooled when retryd does not answer', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'retryd-spool-fastify-'));
    const downstream = new Downstream(() => ({ status: 503 }));
    const target = await downstream.start();
    // Nothing listens on the closed downstream's port any more: retryd is unreachable there.
    const gone = new Downstream(() => ({ status: 200 }));
    const goneUrl = await gone.start();
    await gone.close();
    const client = new RetrydClient({ url: goneUrl, apiKey: 'rtd_unused', retry: ONE_TRY });
    const spool = await HandoffSpool.open({ client, storage: fileSpoolStorage({ directory: dir }) });
    const app = Fastify();
    retrydFastify(app, { client, spool });
    app.post('/checkout', async (request, reply) => {
      const answer = await request.retryd.fetch(`${target}/orders`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"sku":"D4"}' });
      return reply.code(answer.status).send(await answer.json());
    });
    try {
      const url = await app.listen({ port: 0, host: '127.0.0.1' });
      const response = await fetch(`${url}/checkout`, { method: 'POST' });
      expect(response.status).toBe(202);
      expect(await response.json()).toEqual({ status: 'spooled', idempotencyKey: expect.stringMatching(/^[0-9a-f]{32}$/) });
      expect(spool.entries().map((e) => e.request.targetUrl)).toEqual([`${target}/orders`]);
    } finally {
      await app.close();
      await spool.close();
      await downstream.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
