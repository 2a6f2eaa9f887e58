import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_RETRY, RetrydApiError, RetrydClient, RetrydUnreachableError, type TaskSummary } from '../src/index.js';
import { Downstream, startService, type TestService } from './service-harness.js';
import { waitFor } from '../../server/test/wait-for.js';
import { serviceNow } from '../../server/test/service-clock.js';

const POLICY = { maxAttempts: 2, backoffType: 'FIXED', initialDelayMs: 60_000, multiplier: 1, maxDelayMs: 60_000, jitterType: 'NONE' } as const;

describe('RetrydClient against a running service', () => {
  let service: TestService;
  let downstream: Downstream;
  let target: string;
  let client: RetrydClient;

  beforeAll(async () => {
    service = await startService();
    // 400: a dead letter at the first attempt.
    downstream = new Downstream(() => ({ status: 400 }));
    target = await downstream.start();
    client = new RetrydClient({ url: service.url, apiKey: service.apiKey });
  }, 60_000);
  afterAll(async () => {
    await service?.close();
    await downstream?.close();
  });

  it('enqueues a task (201), finds the same one for the same key (200), and gives every enqueue a key', async () => {
    const request = { targetUrl: `${target}/a`, method: 'POST', body: { order: 1 }, idempotencyKey: 'order-1', delayMs: 3_600_000 } as const;
    const created = await client.enqueueTask(request);
    expect(created.outcome).toBe('created');
    expect(created.task).toMatchObject({ idempotencyKey: 'order-1', status: 'PENDING', targetKey: target });
    const again = await client.enqueueTask(request);
    expect(again).toMatchObject({ outcome: 'replayed', task: { taskId: created.task.taskId } });
    const keyed = await client.enqueueTask({ targetUrl: `${target}/b`, method: 'GET', delayMs: 3_600_000 });
    expect(keyed.task.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect((await client.getTask(created.task.taskId)).taskId).toBe(created.task.taskId);
  });

  it('enqueues a batch: one result per task, in order, an invalid entry with its own problem', async () => {
    const results = await client.enqueueTasks([
      { targetUrl: `${target}/c`, method: 'POST', delayMs: 3_600_000 },
      { targetUrl: 'ftp://example.com/x', method: 'POST' },
    ]);
    expect(results.map((r) => r.status)).toEqual([201, 400]);
    expect(results[0]?.task?.targetUrl).toBe(`${target}/c`);
    expect(results[1]?.error?.errors?.[0]?.field).toBe('tasks[1].targetUrl');
    const minimal = await client.enqueueTasks([{ targetUrl: `${target}/d`, method: 'POST', delayMs: 3_600_000 }], { returnMinimal: true });
    expect(minimal).toEqual([{ status: 201, taskId: expect.any(String) }]);
    expect((await client.getTask(minimal[0]?.taskId ?? '')).targetUrl).toBe(`${target}/d`);
  });

  it('pages through tasks with the iterator, following nextCursor to the end', async () => {
    for (let i = 0; i < 5; i += 1) await client.enqueueTask({ targetUrl: `${target}/page/${i}`, method: 'POST', delayMs: 3_600_000 });
    const firstPage = await client.listTasks({ status: 'PENDING', limit: 2 });
    expect(firstPage.items).toHaveLength(2);
    expect(firstPage.nextCursor).toEqual(expect.any(String));
    const all: TaskSummary[] = [];
    for await (const task of client.tasks({ status: 'PENDING' }, 2)) all.push(task);
    const listed = (await client.listTasks({ status: 'PENDING', limit: 1000 })).items;
    expect(all.map((t) => t.taskId)).toEqual(listed.map((t) => t.taskId));
    expect(all.length).toBeGreaterThanOrEqual(8);
  });

  it('cancels, reads attempts, lists dead letters and replays one', async () => {
    const { task } = await client.enqueueTask({ targetUrl: `${target}/cancel`, method: 'POST', delayMs: 3_600_000 });
    expect(await client.cancelTask(task.taskId)).toMatchObject({ outcome: 'cancelled', task: { status: 'CANCELLED' } });

    const dead = (await client.enqueueTask({ targetUrl: `${target}/dead`, method: 'POST', policy: POLICY })).task;
    await waitFor('a dead letter', async () => (await client.getTask(dead.taskId)).status === 'FAILED');
    const attempts = [];
    for await (const attempt of client.attempts(dead.taskId)) attempts.push(attempt);
    expect(attempts).toEqual([expect.objectContaining({ attemptNumber: 1, responseStatus: 400 })]);
    const letters = [];
    for await (const letter of client.deadLetters()) letters.push(letter.taskId);
    expect(letters).toContain(dead.taskId);
    expect((await client.replayTask(dead.taskId)).status).toBe('PENDING');
  });

  it('reschedules a pending task to a Date, an ISO time or epoch ms, then runs it now; a finished one is a typed 409', async () => {
    const { task } = await client.enqueueTask({ targetUrl: `${target}/later`, method: 'POST', policy: POLICY, delayMs: 3_600_000 });
    const at = new Date(Math.floor(Date.now() / 1_000) * 1_000 + 600_000);
    expect(await client.rescheduleTask(task.taskId, at)).toMatchObject({ status: 'PENDING', nextAttemptAt: at.getTime(), attemptNumber: 0 });
    const iso = new Date(at.getTime() + 2_000).toISOString();
    expect((await client.rescheduleTask(task.taskId, iso)).nextAttemptAt).toBe(Date.parse(iso));
    expect((await client.rescheduleTask(task.taskId, at.getTime() + 1)).nextAttemptAt).toBe(at.getTime() + 1);
    const sent = serviceNow();
    expect((await client.runTask(task.taskId)).nextAttemptAt).toBeGreaterThanOrEqual(sent);
    // Due now, the service tries it: the downstream answers 400, a dead letter.
    await waitFor('the task run now to fail', async () => (await client.getTask(task.taskId)).status === 'FAILED');
    const refused = await client.runTask(task.taskId).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RetrydApiError);
    expect(refused).toMatchObject({ status: 409, code: 'TASK_NOT_PENDING' });
  });

  it('registers, replaces and reads policies; putPolicy creates what is missing', async () => {
    expect((await client.createPolicy({ policyId: 'slow', ...POLICY })).outcome).toBe('created');
    expect((await client.createPolicy({ policyId: 'slow', ...POLICY })).outcome).toBe('unchanged');
    expect((await client.replacePolicy('slow', { ...POLICY, maxAttempts: 4 })).maxAttempts).toBe(4);
    expect((await client.putPolicy('fresh', POLICY)).outcome).toBe('created');
    expect((await client.putPolicy('fresh', { ...POLICY, maxAttempts: 3 })).outcome).toBe('replaced');
    expect((await client.getPolicy('fresh')).maxAttempts).toBe(3);
    const ids = [];
    for await (const policy of client.policies()) ids.push(policy.policyId);
    expect(ids).toEqual(expect.arrayContaining(['default', 'slow', 'fresh']));
  });

  it('reads targets and changes their settings and breaker', async () => {
    const targets = [];
    for await (const t of client.targets()) targets.push(t.targetKey);
    expect(targets).toContain(target);
    expect((await client.putTargetSettings(target, { maxInFlight: 3 })).settings.maxInFlight).toBe(3);
    expect((await client.setTargetBreaker(target, 'open')).breaker.state).toBe('OPEN');
    // A release ends every hold but an open breaker's.
    expect((await client.releaseTarget(target)).breaker.state).toBe('OPEN');
    expect((await client.getTarget(target)).targetKey).toBe(target);
  });

  it('creates, lists and revokes API keys', async () => {
    const created = await client.createApiKey({ name: 'reader', scope: 'read' });
    expect(created.key).toMatch(/^rtd_/);
    const reader = new RetrydClient({ url: service.url, apiKey: created.key });
    expect((await reader.listTasks({ limit: 1 })).items).toHaveLength(1);
    expect((await client.revokeApiKey(created.keyId)).revokedAt).toEqual(expect.any(Number));
    const keys = [];
    for await (const key of client.apiKeys()) keys.push(key.keyId);
    expect(keys).toContain(created.keyId);
  });

  it('throws typed errors from the problem body: code, detail and each field with its rule', async () => {
    const invalid = await client.enqueueTask({ targetUrl: `${target}/x`, method: 'POST', policyId: 'default', policy: POLICY }).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(RetrydApiError);
    expect(invalid).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', errors: [expect.objectContaining({ field: 'policy' })] });
    expect((invalid as RetrydApiError).detail).toContain('policy');
    await expect(client.getTask('no-such-task')).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });
    await expect(new RetrydClient({ url: service.url, apiKey: 'rtd_wrong' }).getTask('x')).rejects.toMatchObject({ status: 401 });
  });

  it('takes the API key from RETRYD_API_KEY when the options give none', async () => {
    const fromEnv = new RetrydClient({ url: service.url, env: { RETRYD_API_KEY: service.apiKey } });
    expect((await fromEnv.listPolicies()).items.length).toBeGreaterThan(0);
    await expect(new RetrydClient({ url: service.url, env: {} }).listPolicies()).rejects.toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
  });
});

describe("RetrydClient's own transport", () => {
  it('retries a read after 503s with full jitter drawn from computeDelay, then answers', async () => {
    const downstream = new Downstream((_, i) => (i < 2 ? { status: 503, body: '{}' } : { status: 200, body: JSON.stringify({ items: [] }) }));
    const url = await downstream.start();
    const delays: number[] = [];
    const client = new RetrydClient({ url, apiKey: 'rtd_k', random: () => 0.5, sleep: async (ms) => void delays.push(ms) });
    try {
      expect(await client.listTasks()).toEqual({ items: [] });
      // FULL jitter at 0.5: half of 200 ms, then half of 400 ms.
      expect(delays).toEqual([CLIENT_RETRY.initialDelayMs / 2, CLIENT_RETRY.initialDelayMs]);
      expect(downstream.received.map((r) => r.headers.authorization)).toEqual(['Bearer rtd_k', 'Bearer rtd_k', 'Bearer rtd_k']);
    } finally {
      await downstream.close();
    }
  });

  it('gives up after its attempts with the last problem, and never retries creating an API key', async () => {
    const downstream = new Downstream(() => ({ status: 503, body: JSON.stringify({ type: 'about:blank', title: 'x', status: 503, detail: 'store down', code: 'STORE_UNAVAILABLE' }) }));
    const url = await downstream.start();
    const client = new RetrydClient({ url, apiKey: 'rtd_k', sleep: async () => {} });
    try {
      await expect(client.getTask('t')).rejects.toMatchObject({ status: 503, code: 'STORE_UNAVAILABLE', detail: 'store down' });
      expect(downstream.received).toHaveLength(CLIENT_RETRY.maxAttempts);
      await expect(client.createApiKey({ name: 'n', scope: 'read' })).rejects.toBeInstanceOf(RetrydApiError);
      expect(downstream.received).toHaveLength(CLIENT_RETRY.maxAttempts + 1);
    } finally {
      await downstream.close();
    }
  });

  it('tells an unreachable service apart from an error answer', async () => {
    const downstream = new Downstream(() => ({ status: 200 }));
    const url = await downstream.start();
    await downstream.close();
    const client = new RetrydClient({ url, sleep: async () => {} });
    await expect(client.getTask('t')).rejects.toBeInstanceOf(RetrydUnreachableError);
    await expect(client.getTask('t')).rejects.toThrow(/ECONNREFUSED/);
  });
});
