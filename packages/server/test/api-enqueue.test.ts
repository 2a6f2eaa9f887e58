import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FileBlobStore } from '../src/blobs/file-blob-store.js';
import { DEFAULT_TENANT } from '../src/domain/task.js';
import { startApi, type ApiHarness } from './api-harness.js';
import { serviceNow } from './service-clock.js';

let api: ApiHarness;
beforeAll(async () => {
  api = await startApi();
});
afterAll(async () => {
  await api.close();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('POST /retry-tasks', () => {
  it('creates a PENDING task due now, answers 201 with a Location, and wakes the engine', async () => {
    const wakes = api.wakes();
    const before = serviceNow();
    const res = await api.enqueue({ headers: { 'X-Request-Id': 'r-1' } });
    expect(res.status).toBe(201);
    expect(res.headers['content-type']).toContain('application/json');
    expect(res.headers.location).toBe(`/retry-tasks/${res.body.taskId}`);
    expect(res.body).toMatchObject({
      status: 'PENDING',
      targetUrl: 'https://api.example.com/orders',
      method: 'POST',
      headers: { 'X-Request-Id': 'r-1', 'content-type': 'application/json' },
      body: '{"order":1}',
      bodyRef: null,
      policyId: 'default',
      policy: null,
      attemptNumber: 0,
      cancelRequested: false,
      lastError: null,
      deadLetterReason: null,
    });
    expect(res.body.taskId).toMatch(UUID);
    expect(res.body.idempotencyKey).toMatch(UUID);
    expect(res.body.createdAt).toBeGreaterThanOrEqual(before);
    expect(res.body.nextAttemptAt).toBe(res.body.createdAt);
    // Internal fields stay internal.
    for (const hidden of ['requestHash', 'fencingToken', 'version', 'leaseOwner', 'tenantId', 'runAttemptOffset']) {
      expect(res.body).not.toHaveProperty(hidden);
    }
    expect(api.wakes()).toBe(wakes + 1);

    const read = await api.call('GET', `/retry-tasks/${res.body.taskId}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(res.body);
    const stored = await api.stored(res.body.taskId);
    expect(stored.requestHash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored.tenantId).toBe(DEFAULT_TENANT);
  });

  it('sends a string body as is, and keeps a content-type it was given', async () => {
    const text = await api.enqueue({ body: 'a=1&b=2' });
    expect(text.body).toMatchObject({ body: 'a=1&b=2', headers: {} });
    const typed = await api.enqueue({ body: { a: 1 }, headers: { 'Content-Type': 'application/vnd.x+json' } });
    expect(typed.body.headers).toEqual({ 'Content-Type': 'application/vnd.x+json' });
    const none = await api.enqueue({ method: 'GET', body: undefined });
    expect(none.body).toMatchObject({ method: 'GET', body: null, headers: {} });
  });

  it('schedules the first attempt after delayMs or at notBefore (epoch ms or ISO 8601)', async () => {
    const delayed = await api.enqueue({ delayMs: 60_000 });
    expect(delayed.body.nextAttemptAt).toBe(delayed.body.createdAt + 60_000);
    const at = Date.now() + 3_600_000;
    expect((await api.enqueue({ notBefore: at })).body.nextAttemptAt).toBe(at);
    const iso = '2999-01-02T03:04:05.678Z';
    expect((await api.enqueue({ notBefore: iso })).body.nextAttemptAt).toBe(Date.parse(iso));
    const past = await api.enqueue({ notBefore: 1_000 });
    expect(past.body.nextAttemptAt).toBe(past.body.createdAt);
  });

  it('takes an inline policy, and the key from an Idempotency-Key header (which it then sends itself)', async () => {
    const policy = { maxAttempts: 3, backoffType: 'FIXED', initialDelayMs: 500, multiplier: 1, maxDelayMs: 500, jitterType: 'NONE' };
    const res = await api.enqueue({ policy, headers: { 'idempotency-key': 'order-77', Authorization: 'Bearer s3cret' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ policy, policyId: null, idempotencyKey: 'order-77' });
    expect(res.body.headers).toEqual({ Authorization: '[REDACTED]', 'content-type': 'application/json' });
    const stored = await api.stored(res.body.taskId);
    expect(stored.headers).toEqual({ Authorization: { enc: expect.stringMatching(/^v1:test:[\w-]+$/) }, 'content-type': 'application/json' });
    expect(JSON.stringify(stored)).not.toContain('s3cret');
  });

  it('keeps the traceparent of the request for the attempts', async () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const res = await api.call('POST', '/retry-tasks', { targetUrl: 'https://api.example.com/', method: 'POST' }, { traceparent });
    expect((await api.stored(res.body.taskId)).traceContext).toBe(traceparent);
  });

  it('puts a body over 64 KiB in the blob store and keeps only its ref', async () => {
    const big = 'x'.repeat(64 * 1024 + 1);
    const res = await api.enqueue({ body: big, idempotencyKey: 'big-1' });
    expect(res.status).toBe(201);
    expect(res.body.body).toBeNull();
    expect(res.body.bodyRef).toBe(`${DEFAULT_TENANT}/${res.body.taskId}`);
    expect((await api.blobs.get(res.body.bodyRef)).toString()).toBe(big);
    // A replay of the same large request writes no second blob (or removes it again).
    const again = await api.enqueue({ body: big, idempotencyKey: 'big-1' });
    expect(again.status).toBe(200);
    const dir = join((api.blobs as FileBlobStore).dir, DEFAULT_TENANT);
    expect(await readdir(dir)).toEqual([res.body.taskId]);
    const small = await api.enqueue({ body: 'x'.repeat(64 * 1024) });
    expect(small.body.bodyRef).toBeNull();
  });
});

describe('idempotent enqueue', () => {
  it('creates exactly one task for 50 concurrent clients sending the same key; the others get it back (200)', async () => {
    const request = { targetUrl: 'https://api.example.com/pay', method: 'POST', body: { amount: 10 }, idempotencyKey: 'pay-50' };
    const answers = await Promise.all(Array.from({ length: 50 }, () => api.call('POST', '/retry-tasks', request)));
    const created = answers.filter((a) => a.status === 201);
    const replayed = answers.filter((a) => a.status === 200);
    expect(created).toHaveLength(1);
    expect(replayed).toHaveLength(49);
    expect(created[0]?.headers['idempotent-replayed']).toBeUndefined();
    for (const r of replayed) expect(r.headers['idempotent-replayed']).toBe('true');
    expect(new Set(answers.map((a) => a.body.taskId)).size).toBe(1);
    const existing = await api.store.admin.getTaskByIdempotencyKey(DEFAULT_TENANT, 'pay-50');
    expect(existing?.taskId).toBe(created[0]?.body.taskId);
  });

  it('treats the same JSON body with its keys in another order as the same request', async () => {
    const first = await api.enqueue({ idempotencyKey: 'order-k', body: { a: 1, b: [1, { c: 2, d: 3 }] } });
    const second = await api.enqueue({ idempotencyKey: 'order-k', body: { b: [1, { d: 3, c: 2 }], a: 1 } });
    expect([first.status, second.status]).toEqual([201, 200]);
    expect(second.body.taskId).toBe(first.body.taskId);
  });

  it('answers 422 when a key comes back with a different request', async () => {
    const first = await api.enqueue({ idempotencyKey: 'k-422', body: { amount: 1 } });
    expect(first.status).toBe(201);
    for (const change of [{ body: { amount: 2 } }, { method: 'PUT' }, { delayMs: 5 }, { headers: { 'x-a': '1' } }]) {
      const res = await api.enqueue({ idempotencyKey: 'k-422', body: { amount: 1 }, ...change });
      expect(res.status).toBe(422);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.body).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', status: 422 });
      expect(res.body.detail).toContain(first.body.taskId);
    }
  });

  it('generates a fresh key for each request that brings none', async () => {
    const a = await api.enqueue();
    const b = await api.enqueue();
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body.idempotencyKey).not.toBe(b.body.idempotencyKey);
  });
});

describe('the SSRF guard at creation', () => {
  it.each([
    'http://127.0.0.1:8080/hook',
    'http://localhost/hook',
    'http://[::1]/',
    'http://169.254.169.254/latest',
    'https://internal.example.com/',
    'https://mixed.example.com/',
    'http://[64:ff9b::a9fe:a9fe]/latest',
    'http://[::a00:1]/',
    'http://[2002:a9fe:a9fe::1]/',
    'http://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/',
    'http://198.18.0.1/',
    'http://192.0.0.8/',
    'http://203.0.113.9/',
  ])('refuses %s with 400 TARGET_NOT_ALLOWED naming targetUrl', async (targetUrl) => {
    const res = await api.enqueue({ targetUrl });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('TARGET_NOT_ALLOWED');
    expect(res.body.errors).toEqual([expect.objectContaining({ field: 'targetUrl', rule: 'a public address, or one covered by --allow-targets' })]);
  });

  it('refuses a host that does not resolve', async () => {
    const res = await api.enqueue({ targetUrl: 'https://no-such-host.example.com/' });
    expect(res.body).toMatchObject({ status: 400, code: 'TARGET_NOT_ALLOWED' });
    expect(res.body.detail).toContain('does not resolve');
  });

  it('accepts 127.0.0.1 when --allow-targets has 127.0.0.1/32', async () => {
    const allowed = await startApi({ allowTargets: '127.0.0.1/32' });
    try {
      expect((await allowed.enqueue({ targetUrl: 'http://127.0.0.1:8080/hook' })).status).toBe(201);
      expect((await allowed.enqueue({ targetUrl: 'http://127.0.0.2:8080/hook' })).status).toBe(400);
    } finally {
      await allowed.close();
    }
  });
});
