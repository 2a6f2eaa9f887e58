import { afterEach, beforeEach, expect, it } from 'vitest';
import { DEFAULT_SERVICE_POLICY } from '../src/policies/default-policy.js';
import { startApi, type ApiHarness } from './api-harness.js';

// One rule for where a tenant's `default` policy comes from (see policies/default-policy.ts): the built-in policy,
// registered for the tenant on its first use, then read and changed like any other.

let api: ApiHarness;
beforeEach(async () => {
  api = await startApi();
});
afterEach(async () => {
  await api.close();
});

const input = { targetUrl: 'https://api.example.com/charges', method: 'POST', body: { amount: 1 } };

it('lets a tenant that never registered a policy enqueue on `default`, and registers it for that tenant', async () => {
  expect(await api.store.getPolicy('acme', 'default')).toBeUndefined();
  const { kind, task } = await api.service.enqueue('acme', input);
  expect(kind).toBe('created');
  expect(task).toMatchObject({ tenantId: 'acme', policyId: 'default', policy: null });
  const stored = await api.store.getPolicy('acme', 'default');
  expect(stored?.policy).toEqual(DEFAULT_SERVICE_POLICY);
  // Naming `default` explicitly is the same rule.
  expect((await api.service.enqueue('globex', { ...input, policyId: 'default' })).kind).toBe('created');
  expect((await api.service.getPolicy('initech', 'default')).policy).toEqual(DEFAULT_SERVICE_POLICY);
});

it("keeps a tenant's own `default` once it has one, and another tenant's change does not leak", async () => {
  await api.service.enqueue('acme', input);
  const changed = { ...DEFAULT_SERVICE_POLICY, maxAttempts: 3 };
  await api.service.replacePolicy('acme', 'default', changed);
  await api.service.enqueue('acme', { ...input, idempotencyKey: 'second' });
  expect((await api.service.getPolicy('acme', 'default')).policy.maxAttempts).toBe(3);
  expect((await api.service.getPolicy('globex', 'default')).policy.maxAttempts).toBe(DEFAULT_SERVICE_POLICY.maxAttempts);
});

it('still refuses a named policy a tenant has not registered', async () => {
  await expect(api.service.enqueue('acme', { ...input, policyId: 'payments' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
});
