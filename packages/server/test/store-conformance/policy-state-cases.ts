import { expect, it } from 'vitest';
import type { StoredPolicy } from '../../src/domain/task.js';
import { T0, makePolicy, makeTask } from '../fixtures/tasks.js';
import type { CurrentStore } from './helpers.js';
import { insertAllStored } from './helpers.js';

export function policyAndStateCases(store: CurrentStore): void {
  it('creates a policy once; creating it again reports the stored one', async () => {
    const policy = makePolicy('payments');
    expect(await store().putPolicy(policy, 'create')).toEqual({ kind: 'created', policy });
    const other = makePolicy('payments', { policy: { ...policy.policy, maxAttempts: 9 }, createdAt: T0 + 5 });
    expect(await store().putPolicy(other, 'create')).toEqual({ kind: 'exists', policy });
    expect(await store().getPolicy('default', 'payments')).toEqual(policy);
    expect(await store().getPolicy('default', 'missing')).toBeUndefined();
    expect(await store().getPolicy('tenant-b', 'payments')).toBeUndefined();
    const elsewhere = makePolicy('payments', { tenantId: 'tenant-b' });
    expect(await store().putPolicy(elsewhere, 'create')).toEqual({ kind: 'created', policy: elsewhere });
  });

  it('replaces an existing policy, raising its version and keeping its creation time', async () => {
    const policy = makePolicy('payments');
    await store().putPolicy(policy, 'create');
    const changed: StoredPolicy = {
      ...policy,
      policy: { ...policy.policy, maxAttempts: 2, totalBudgetMs: 60_000 },
      createdAt: T0 + 100,
      updatedAt: T0 + 100,
    };
    const result = await store().putPolicy(changed, 'replace');
    expect(result.kind).toBe('replaced');
    const stored = await store().getPolicy('default', 'payments');
    expect(stored).toMatchObject({ policy: changed.policy, createdAt: T0, updatedAt: T0 + 100 });
    expect(stored?.version).toBeGreaterThan(policy.version);
    expect(result).toEqual({ kind: 'replaced', policy: stored });
    expect(await store().putPolicy(makePolicy('unknown'), 'replace')).toEqual({ kind: 'not_found' });
    expect(await store().getPolicy('default', 'unknown')).toBeUndefined();
  });

  it("keeps a policy's callback, replaces it and takes it away", async () => {
    const callback = { url: 'https://caller.example.com/ended?t=1', on: ['failed' as const], policyId: 'slow' };
    const policy = makePolicy('with-callback', { callback });
    expect(await store().putPolicy(policy, 'create')).toEqual({ kind: 'created', policy });
    expect(await store().getPolicy('default', 'with-callback')).toEqual(policy);
    const other = { ...callback, on: ['succeeded' as const, 'cancelled' as const], policyId: null };
    expect(await store().putPolicy({ ...policy, callback: other, updatedAt: T0 + 1 }, 'replace')).toMatchObject({ kind: 'replaced', policy: { callback: other } });
    expect((await store().getPolicy('default', 'with-callback'))?.callback).toEqual(other);
    await store().putPolicy({ ...policy, callback: null, updatedAt: T0 + 2 }, 'replace');
    expect((await store().getPolicy('default', 'with-callback'))?.callback).toBeNull();
    expect((await store().listPolicies('default', { limit: 10 })).items.find((p) => p.policyId === 'with-callback')?.callback).toBeNull();
  });

  it('lists policies page by page in id order, per tenant', async () => {
    const policies = Array.from({ length: 12 }, (_, i) => makePolicy(`policy-${String(i).padStart(2, '0')}`));
    for (const policy of [...policies].reverse()) await store().putPolicy(policy, 'create');
    await store().putPolicy(makePolicy('policy-x', { tenantId: 'tenant-b' }), 'create');
    const pages: StoredPolicy[][] = [];
    let cursor: string | undefined;
    do {
      const page = await store().listPolicies('default', cursor === undefined ? { limit: 5 } : { limit: 5, cursor });
      pages.push(page.items);
      cursor = page.nextCursor;
    } while (cursor !== undefined && pages.length < 10);
    expect(pages.map((p) => p.length)).toEqual([5, 5, 2]);
    expect(pages.flat()).toEqual(policies);
  });

  it('writes target state only over the expected version', async () => {
    const key = 'breaker:https://api.example.com';
    expect(await store().targetState.getTargetState('default', key)).toBeUndefined();
    expect(await store().targetState.putTargetState('default', key, 0, '{"state":"closed"}', T0)).toBe(true);
    expect(await store().targetState.getTargetState('default', key)).toEqual({ value: '{"state":"closed"}', version: 1, updatedAt: T0 });
    expect(await store().targetState.putTargetState('default', key, 0, '{"state":"open"}', T0 + 1)).toBe(false);
    expect(await store().targetState.putTargetState('default', key, 1, '{"state":"open"}', T0 + 2)).toBe(true);
    expect(await store().targetState.putTargetState('default', key, 1, '{"state":"half"}', T0 + 3)).toBe(false);
    expect(await store().targetState.putTargetState('default', key, 7, '{"state":"half"}', T0 + 3)).toBe(false);
    expect(await store().targetState.getTargetState('default', key)).toEqual({ value: '{"state":"open"}', version: 2, updatedAt: T0 + 2 });
    expect(await store().targetState.getTargetState('tenant-b', key)).toBeUndefined();
    expect(await store().targetState.putTargetState('tenant-b', key, 1, 'x', T0)).toBe(false);
  });

  it('lets exactly one of several concurrent writers win each version of target state', async () => {
    const write = (expected: number) =>
      Promise.all(Array.from({ length: 10 }, (_, i) => store().targetState.putTargetState('default', 'rate:x', expected, `v${i}`, T0)));
    expect((await write(0)).filter(Boolean)).toHaveLength(1);
    expect((await write(1)).filter(Boolean)).toHaveLength(1);
    expect((await store().targetState.getTargetState('default', 'rate:x'))?.version).toBe(2);
  });

  it('counts tasks by status, per tenant and overall, with every status present', async () => {
    await insertAllStored(store(), [
      makeTask(),
      makeTask(),
      makeTask(),
      makeTask({ status: 'SUCCEEDED', nextAttemptAt: null }),
      makeTask({ status: 'SUCCEEDED', nextAttemptAt: null }),
      makeTask({ tenantId: 'tenant-b', status: 'FAILED', nextAttemptAt: null }),
      makeTask({ tenantId: 'tenant-b', status: 'EXHAUSTED', nextAttemptAt: null }),
    ]);
    await store().claimDue(T0, { limit: 1, leaseMs: 1_000, workerId: 'w' });
    const zero = { PENDING: 0, IN_FLIGHT: 0, SUCCEEDED: 0, FAILED: 0, EXHAUSTED: 0, CANCELLED: 0 };
    expect(await store().admin.countByStatus('default')).toEqual({ ...zero, PENDING: 2, IN_FLIGHT: 1, SUCCEEDED: 2 });
    expect(await store().admin.countByStatus('tenant-b')).toEqual({ ...zero, FAILED: 1, EXHAUSTED: 1 });
    expect(await store().admin.countByStatus('nobody')).toEqual(zero);
    expect(await store().admin.countByStatus()).toEqual({ ...zero, PENDING: 2, IN_FLIGHT: 1, SUCCEEDED: 2, FAILED: 1, EXHAUSTED: 1 });
  });
}
