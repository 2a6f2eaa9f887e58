import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RetryPolicy } from '@retryd/core';
import {
  CeilingBook,
  ceilingViolations,
  clampedToCeilings,
  resolveCeilings,
  TENANT_CEILINGS_KEY,
  withinCeilings,
} from '../src/policies/policy-ceilings.js';
import { DEFAULT_SERVICE_POLICY } from '../src/policies/default-policy.js';
import type { Store } from '../src/store/store.js';
import { startApi, type ApiHarness } from './api-harness.js';

// Operator ceilings on tenants' policies: the most attempts, the longest budget, the longest delay; a policy over one
// is refused naming the field and the ceiling, one with no budget gets the budget ceiling.

const MIN = 60_000;
const HOUR = 3_600_000;
const SERVICE = { maxAttempts: 5, totalBudgetMs: HOUR, maxDelayMs: MIN };
const policy: RetryPolicy = { maxAttempts: 5, backoffType: 'EXPONENTIAL', initialDelayMs: 100, multiplier: 2, maxDelayMs: 30_000, jitterType: 'FULL' };

describe('ceilings', () => {
  it('names each field over its ceiling, and whose ceiling it is', () => {
    const ceilings = resolveCeilings(SERVICE, { maxAttempts: 3 });
    const over = { ...policy, maxAttempts: 4, totalBudgetMs: 2 * HOUR, maxDelayMs: 2 * MIN, backoffByClass: { rateLimited: { maxDelayMs: 5 * MIN } } };
    expect(ceilingViolations(over, ceilings, 'policy.').map((e) => e.message)).toEqual([
      "policy.maxAttempts must be at most 3 (the tenant's ceiling on policies), got 4",
      "policy.totalBudgetMs must be at most 3600000 (1 h) (the service's ceiling on policies), got 7200000",
      "policy.maxDelayMs must be at most 60000 (1 min) (the service's ceiling on policies), got 120000",
      "policy.backoffByClass.rateLimited.maxDelayMs must be at most 60000 (1 min) (the service's ceiling on policies), got 300000",
    ]);
    expect(ceilingViolations(policy, resolveCeilings(SERVICE, undefined), '')).toEqual([]);
    expect(ceilingViolations({ ...policy, maxAttempts: 1_000 }, resolveCeilings({ maxAttempts: null, totalBudgetMs: null, maxDelayMs: null }, undefined), '')).toEqual([]);
  });

  it('gives a policy with no budget the budget ceiling, and fits the service default within them', () => {
    expect(withinCeilings(policy, SERVICE)).toEqual({ ...policy, totalBudgetMs: HOUR });
    expect(withinCeilings({ ...policy, totalBudgetMs: MIN }, SERVICE)).toEqual({ ...policy, totalBudgetMs: MIN });
    const fitted = clampedToCeilings(DEFAULT_SERVICE_POLICY, SERVICE);
    expect(fitted).toMatchObject({ maxAttempts: 5, maxDelayMs: MIN, initialDelayMs: 1_000, totalBudgetMs: HOUR, estimatedCallMs: 30_000 });
    expect(ceilingViolations(fitted, resolveCeilings(SERVICE, undefined), '')).toEqual([]);
    expect(clampedToCeilings(DEFAULT_SERVICE_POLICY, { ...SERVICE, totalBudgetMs: 20_000 })).toMatchObject({ totalBudgetMs: 20_000, estimatedCallMs: 10_000 });
  });
});

describe('ceilings through the API', () => {
  let api: ApiHarness;
  let book: CeilingBook;
  beforeAll(async () => {
    // The book reads the store the harness opens: taken as the harness hands it over, before the default policy is made.
    let store: Store | undefined;
    book = new CeilingBook({ state: { getTargetState: (t, k) => (store as Store).targetState.getTargetState(t, k) }, service: SERVICE, now: Date.now });
    api = await startApi({ wrapStore: (opened) => (store = opened), service: { ceilings: book } });
  });
  afterAll(async () => {
    await api.close();
  });

  it('refuses an inline policy over a ceiling, naming the field; gives one without a budget the ceiling', async () => {
    const over = await api.enqueue({ policy: { ...policy, maxAttempts: 9 } });
    expect(over.status).toBe(400);
    expect(over.body.errors).toEqual([expect.objectContaining({ field: 'policy.maxAttempts', rule: "at most 5 (the service's ceiling on policies)" })]);
    const batch = await api.call('POST', '/retry-tasks/batch', {
      tasks: [
        { targetUrl: 'https://api.example.com/a', method: 'POST', policy },
        { targetUrl: 'https://api.example.com/b', method: 'POST', policy: { ...policy, maxDelayMs: 2 * MIN } },
      ],
    });
    expect(batch.body.results.map((r: { status: number }) => r.status)).toEqual([201, 400]);
    expect(batch.body.results[1].error.errors[0]).toMatchObject({ field: 'tasks[1].policy.maxDelayMs' });
    const ok = await api.enqueue({ policy });
    expect(ok.status).toBe(201);
    expect((await api.stored(ok.body.taskId)).policy).toEqual({ ...policy, totalBudgetMs: HOUR });
  });

  it("refuses a registered policy over a ceiling; fits the service's default within them", async () => {
    const over = await api.call('POST', '/retry-policies', { policyId: 'greedy', ...policy, totalBudgetMs: 2 * HOUR });
    expect(over.status).toBe(400);
    expect(over.body.errors).toEqual([expect.objectContaining({ field: 'totalBudgetMs', rule: "at most 3600000 (1 h) (the service's ceiling on policies)" })]);
    const created = await api.call('POST', '/retry-policies', { policyId: 'fitted', ...policy });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ policyId: 'fitted', totalBudgetMs: HOUR });
    // The same body again is the same definition (its budget filled the same way).
    expect((await api.call('POST', '/retry-policies', { policyId: 'fitted', ...policy })).status).toBe(200);
    expect((await api.call('GET', '/retry-policies/default')).body).toMatchObject({ maxAttempts: 5, maxDelayMs: MIN, totalBudgetMs: HOUR });
  });

  it("takes a tenant's own ceilings over the service's", async () => {
    await api.store.targetState.putTargetState('default', TENANT_CEILINGS_KEY, 0, JSON.stringify({ maxAttempts: 2 }), Date.now());
    book.invalidate('default');
    const over = await api.enqueue({ policy: { ...policy, maxAttempts: 3 } });
    expect(over.body.errors).toEqual([expect.objectContaining({ field: 'policy.maxAttempts', rule: "at most 2 (the tenant's ceiling on policies)" })]);
    expect((await api.enqueue({ policy: { ...policy, maxAttempts: 2 } })).status).toBe(201);
  });
});
