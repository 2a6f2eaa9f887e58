import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SERVICE_POLICY } from '../src/policies/default-policy.js';
import { startApi, type ApiHarness } from './api-harness.js';

let api: ApiHarness;
beforeAll(async () => {
  api = await startApi();
});
afterAll(async () => {
  await api.close();
});

const fields = { maxAttempts: 4, backoffType: 'EXPONENTIAL', initialDelayMs: 200, multiplier: 2, maxDelayMs: 5_000, jitterType: 'FULL' };

describe('policies', () => {
  it('has the default policy from the start, with its documented values', async () => {
    const res = await api.call('GET', '/retry-policies/default');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ policyId: 'default', ...DEFAULT_SERVICE_POLICY });
    // Registering it again at the next start-up keeps what an operator set.
    await api.call('PUT', '/retry-policies/default', { ...DEFAULT_SERVICE_POLICY, maxAttempts: 4 });
    await api.service.ensureDefaultPolicy();
    expect((await api.call('GET', '/retry-policies/default')).body.maxAttempts).toBe(4);
  });

  it('registers a policy (201), answers the same definition with 200 and a different one with 409', async () => {
    const created = await api.call('POST', '/retry-policies', { policyId: 'payments', ...fields });
    expect(created.status).toBe(201);
    expect(created.headers.location).toBe('/retry-policies/payments');
    expect(created.body).toMatchObject({ policyId: 'payments', ...fields });
    expect(typeof created.body.createdAt).toBe('number');

    const reordered = Object.fromEntries(Object.entries({ policyId: 'payments', ...fields }).reverse());
    const same = await api.call('POST', '/retry-policies', reordered);
    expect(same.status).toBe(200);
    expect(same.body).toEqual(created.body);

    const different = await api.call('POST', '/retry-policies', { policyId: 'payments', ...fields, maxAttempts: 5 });
    expect(different.status).toBe(409);
    expect(different.body).toMatchObject({ code: 'POLICY_CONFLICT', status: 409 });
    expect(different.body.detail).toContain('PUT /retry-policies/payments');
  });

  it('replaces a policy with PUT for future scheduling and tells the engine', async () => {
    await api.call('POST', '/retry-policies', { policyId: 'webhooks', ...fields });
    const changes = api.policyChanges.length;
    const res = await api.call('PUT', '/retry-policies/webhooks', { ...fields, maxAttempts: 9, totalBudgetMs: 60_000 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ policyId: 'webhooks', maxAttempts: 9, totalBudgetMs: 60_000 });
    expect((await api.call('GET', '/retry-policies/webhooks')).body.maxAttempts).toBe(9);
    expect(api.policyChanges.slice(changes)).toEqual(['default/webhooks']);
    // The body may repeat the id of the path, not name another.
    expect((await api.call('PUT', '/retry-policies/webhooks', { policyId: 'webhooks', ...fields })).status).toBe(200);
    const other = await api.call('PUT', '/retry-policies/webhooks', { policyId: 'other', ...fields });
    expect(other.status).toBe(400);
    expect(other.body.errors).toEqual([expect.objectContaining({ field: 'policyId', rule: 'absent or equal to the policyId in the path' })]);
  });

  it('answers 404 to a PUT of a policy that does not exist', async () => {
    const res = await api.call('PUT', '/retry-policies/ghost', fields);
    expect(res.body).toMatchObject({ status: 404, code: 'NOT_FOUND' });
  });

  it('lets tasks name a registered policy', async () => {
    await api.call('POST', '/retry-policies', { policyId: 'orders', ...fields });
    const res = await api.enqueue({ policyId: 'orders' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ policyId: 'orders', policy: null });
  });

  it('lists policies page by page', async () => {
    for (const id of ['p-a', 'p-b', 'p-c']) await api.call('POST', '/retry-policies', { policyId: id, ...fields });
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await api.call('GET', `/retry-policies?limit=2${cursor === undefined ? '' : `&cursor=${cursor}`}`);
      expect(page.status).toBe(200);
      ids.push(...page.body.items.map((p: { policyId: string }) => p.policyId));
      cursor = page.body.nextCursor;
    } while (cursor !== undefined);
    expect(ids).toEqual(expect.arrayContaining(['default', 'p-a', 'p-b', 'p-c']));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('keeps backoffByClass as registered, in its answers and on a task that carries it inline', async () => {
    const backoffByClass = { rateLimited: { initialDelayMs: 5_000, maxDelayMs: 60_000 }, connectionRefused: { backoffType: 'FIXED' } };
    const created = await api.call('POST', '/retry-policies', { policyId: 'by-class', ...fields, backoffByClass });
    expect(created.status).toBe(201);
    expect(created.body.backoffByClass).toEqual(backoffByClass);
    expect((await api.call('GET', '/retry-policies/by-class')).body.backoffByClass).toEqual(backoffByClass);
    const task = await api.enqueue({ policy: { ...fields, backoffByClass } });
    expect(task.status).toBe(201);
    expect(task.body.policy).toEqual({ ...fields, backoffByClass });
  });

  it('reports every broken rule of backoffByClass at once, with the same words as the library', async () => {
    const res = await api.call('POST', '/retry-policies', {
      policyId: 'x',
      ...fields,
      backoffByClass: { rateLimited: { initialDelayMs: 30_000 }, gatewayTimeout: {}, timeout: { jitterType: 'SOME' } },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { message: string }) => e.message)).toEqual([
      "backoffByClass.rateLimited.initialDelayMs must be <= maxDelayMs (5000, the main schedule's; or give this class its own maxDelayMs), got 30000",
      'backoffByClass.gatewayTimeout is not a failure class (known: rateLimited, serverError, timeout, connectionRefused)',
      'backoffByClass.timeout.jitterType must be one of NONE, FULL, EQUAL, DECORRELATED, got "SOME"',
    ]);
  });

  it.each([
    ['a missing policyId', fields, 'policyId', 'letters, digits'],
    ['a malformed policyId', { ...fields, policyId: 'a b' }, 'policyId', 'letters, digits'],
    ['maxAttempts 0', { policyId: 'x', ...fields, maxAttempts: 0 }, 'maxAttempts', 'an integer >= 1'],
    ['an unknown backoffType', { policyId: 'x', ...fields, backoffType: 'QUADRATIC' }, 'backoffType', 'one of EXPONENTIAL, LINEAR, FIXED'],
    ['maxDelayMs below initialDelayMs', { policyId: 'x', ...fields, maxDelayMs: 100 }, 'maxDelayMs', '>= initialDelayMs'],
    ['a misspelt field', { policyId: 'x', ...fields, maxAttempt: 3 }, 'maxAttempt', 'a known policy field'],
    ['a 2xx retryable status', { policyId: 'x', ...fields, retryableStatusCodes: [503, 204] }, 'retryableStatusCodes[1]', 'a failure status'],
    ['an array body', [fields], 'body', 'a JSON object'],
  ])('refuses %s, naming the field and the rule', async (_name, body, field, rule) => {
    const res = await api.call('POST', '/retry-policies', body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field, rule: expect.stringContaining(rule) })]));
  });
});
