import { BACKOFF_SCHEDULE_FIELDS, FailureClass, RETRY_POLICY_FIELDS } from '@retryd/core';
import { afterEach, describe, expect, it } from 'vitest';
import type { Store } from '../src/store/store.js';
import { startApi, type ApiHarness } from './api-harness.js';

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

describe('health', () => {
  it('answers /healthz and /readyz while the store answers', async () => {
    api = await startApi();
    expect(await api.call('GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await api.call('GET', '/readyz')).toMatchObject({ status: 200, body: { status: 'ready', store: 'sqlite' } });
  });

  it('answers 503 problems, never crashes, when the store is closed; /healthz still answers', async () => {
    api = await startApi();
    const { body } = await api.enqueue();
    await api.store.close();

    const ready = await api.call('GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.headers['content-type']).toContain('application/problem+json');
    expect(ready.body).toMatchObject({ code: 'STORE_UNAVAILABLE', title: 'The task store is unavailable', status: 503 });
    expect(ready.body.detail).toContain('sqlite');

    for (const [method, path, payload] of [
      ['POST', '/retry-tasks', { targetUrl: 'https://api.example.com/x', method: 'POST' }],
      ['POST', '/retry-tasks/batch', { tasks: [{ targetUrl: 'https://api.example.com/x', method: 'POST' }] }],
      ['POST', '/retry-tasks/batch', { tasks: [{ targetUrl: 'https://api.example.com/x', method: 'POST', policyId: 'unseen' }] }],
      ['POST', '/retry-policies', { policyId: 'p', maxAttempts: 2, backoffType: 'FIXED', initialDelayMs: 1, multiplier: 1, maxDelayMs: 1, jitterType: 'NONE' }],
      ['POST', `/retry-tasks/${body.taskId}/replay`, undefined],
      ['GET', `/retry-tasks/${body.taskId}`, undefined],
      ['GET', '/retry-tasks', undefined],
      ['DELETE', `/retry-tasks/${body.taskId}`, undefined],
      ['GET', '/dead-letters', undefined],
      ['GET', '/retry-policies', undefined],
    ] as const) {
      const res = await api.call(method, path, payload);
      expect(res.status, `${method} ${path}`).toBe(503);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.body.code).toBe('STORE_UNAVAILABLE');
      expect(res.body.detail).toContain('The database connection is not open');
    }
    expect((await api.call('GET', '/healthz')).status).toBe(200);
  });

  it('answers 503 when a ping hangs past the readiness timeout', async () => {
    api = await startApi({
      wrapStore: (store: Store) => Object.assign(store, { ping: () => new Promise<void>(() => undefined) }),
      app: { readyTimeoutMs: 50 },
    });
    const res = await api.call('GET', '/readyz');
    expect(res.body).toMatchObject({ status: 503, code: 'STORE_UNAVAILABLE' });
    expect(res.body.detail).toContain('no answer within 50 ms');
  });
});

describe('errors that are not the caller\'s', () => {
  it('answers a store bug with 500 INTERNAL and never leaks its message', async () => {
    api = await startApi({
      wrapStore: (store: Store) =>
        Object.assign(store, {
          getTask: async () => {
            throw new TypeError('secret internals: row.foo is undefined');
          },
        }),
    });
    const res = await api.call('GET', '/retry-tasks/abc');
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({ code: 'INTERNAL', status: 500 });
    expect(res.text).not.toContain('secret internals');
  });
});

describe('API documentation', () => {
  it('generates /openapi.json from the route schemas, with every route and its bodies', async () => {
    api = await startApi();
    const res = await api.call('GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    const operations = Object.entries(res.body.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(operations.sort()).toEqual(
      [
        'POST /retry-tasks',
        'POST /retry-tasks/batch',
        'GET /retry-tasks',
        'GET /retry-tasks/{taskId}',
        'DELETE /retry-tasks/{taskId}',
        'POST /retry-tasks/cancel',
        'DELETE /retry-tasks',
        'GET /retry-tasks/{taskId}/attempts',
        'POST /retry-tasks/{taskId}/replay',
        'POST /retry-tasks/{taskId}/run',
        'POST /retry-tasks/{taskId}/reschedule',
        'GET /dead-letters',
        'POST /dead-letters/replay',
        'POST /retry-policies',
        'PUT /retry-policies/{policyId}',
        'GET /retry-policies',
        'GET /retry-policies/{policyId}',
        'GET /retention',
        'GET /retry-policies/{policyId}/retention',
        'PUT /retry-policies/{policyId}/retention',
        'GET /healthz',
        'GET /readyz',
      ].sort(),
    );
    const enqueue = res.body.paths['/retry-tasks'].post;
    expect(enqueue.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/EnqueueRequest' });
    expect(Object.keys(enqueue.responses)).toEqual(expect.arrayContaining(['201', '200', '400', '413', '415', '422', '503']));
    expect(enqueue.responses['422'].content['application/problem+json'].schema).toEqual({ $ref: '#/components/schemas/Problem' });
    expect(res.body.components.schemas.EnqueueRequest.properties.method.enum).toContain('PATCH');
    expect(res.body.components.schemas.Task.properties).not.toHaveProperty('requestHash');
    const list = res.body.paths['/retry-tasks'].get;
    expect(list.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['cursor', 'idempotencyKey', 'limit', 'policyId', 'status', 'targetKey']);
  });

  it('describes every field of a RetryPolicy that core validates, backoffByClass and its classes included', async () => {
    api = await startApi();
    const { schemas } = (await api.call('GET', '/openapi.json')).body.components;
    const policy = schemas.RetryPolicy;
    expect(Object.keys(policy.properties).sort()).toEqual([...RETRY_POLICY_FIELDS].sort());
    expect(Object.keys(schemas.PolicyRequest.properties).sort()).toEqual(['policyId', 'callback', ...RETRY_POLICY_FIELDS].sort());
    const byClass = policy.properties.backoffByClass;
    expect(byClass.additionalProperties).toBe(false);
    expect(Object.keys(byClass.properties).sort()).toEqual(Object.values(FailureClass).sort());
    for (const schedule of Object.values(byClass.properties) as { properties: object; additionalProperties: boolean }[]) {
      expect(Object.keys(schedule.properties).sort()).toEqual([...BACKOFF_SCHEDULE_FIELDS].sort());
      expect(schedule.additionalProperties).toBe(false);
    }
    expect(policy.properties.totalBudgetMs.description).toContain('from its creation');
  });

  it('serves readable docs at /docs', async () => {
    api = await startApi();
    const res = await api.call('GET', '/docs/');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.text).toContain('swagger');
  });
});
