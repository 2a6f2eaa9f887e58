import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiKeys } from '../src/access/api-keys.js';
import { Authenticator } from '../src/access/authenticator.js';
import { TenantLimiter } from '../src/access/tenant-limiter.js';
import type { AppAccess } from '../src/api/build-app.js';
import type { Store, TenantLimits } from '../src/store/store.js';
import { startApi, startTargetsApi, type ApiHarness } from './api-harness.js';

const NO_LIMITS: TenantLimits = { requestsPerSecond: null, maxPendingTasks: null };

/** Access control that sees a new key at once, with a clock the test moves. */
function accessOf(store: Store, clock: { now: number }, defaults: TenantLimits = NO_LIMITS): AppAccess {
  const now = () => clock.now;
  return {
    authenticator: new Authenticator(store, { keyCheckMs: 0, now }),
    limiter: new TenantLimiter(store, { defaults, pendingCacheMs: 0, now }),
    apiKeys: new ApiKeys(store, now),
  };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('API access: keys, scopes, tenants', () => {
  let api: ApiHarness;
  let keys: ApiKeys;
  const clock = { now: 1_800_000_000_000 };

  beforeEach(async () => {
    api = await startApi({ access: (store) => accessOf(store, clock) });
    keys = new ApiKeys(api.store, () => clock.now);
  });
  afterEach(async () => api.close());

  const keyFor = async (tenantId: string, scope: 'admin' | 'write' | 'read') => (await keys.create({ tenantId, scope, name: `${tenantId}-${scope}` })).token;

  it('is open to the default tenant while no key exists, and needs a key once one does', async () => {
    expect((await api.enqueue()).status).toBe(201);
    const token = await keyFor('default', 'admin');

    const missing = await api.call('GET', '/retry-tasks');
    expect(missing.status).toBe(401);
    expect(missing.body.code).toBe('UNAUTHENTICATED');
    expect(missing.headers['www-authenticate']).toBe('Bearer realm="retryd"');
    expect((await api.call('GET', '/retry-tasks', undefined, bearer(token))).status).toBe(200);
    // Health probes and the API's documentation stay public.
    expect((await api.call('GET', '/healthz')).status).toBe(200);
    expect((await api.call('GET', '/openapi.json')).status).toBe(200);
  });

  it('answers one 401 for a malformed, unknown, mistyped or revoked key', async () => {
    const token = await keyFor('default', 'admin');
    const keyId = token.slice(4, 20);
    const mistyped = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
    const unknown = `rtd_0123456789abcdef_${token.slice(21)}`;
    const other = await keys.create({ tenantId: 'default', scope: 'read', name: 'revoked' });
    await keys.revoke(other.record.keyId);
    for (const authorization of ['Bearer nope', `Basic ${token}`, `Bearer ${mistyped}`, `Bearer ${unknown}`, `Bearer ${other.token}`, token]) {
      const res = await api.call('GET', '/retry-tasks', undefined, { authorization });
      expect(res.status, authorization).toBe(401);
      expect(res.body.code).toBe('UNAUTHENTICATED');
      expect(res.text).not.toContain(keyId);
    }
  });

  it('lets each scope do what it allows and answers 403 naming the scope needed beyond it', async () => {
    const read = await keyFor('default', 'read');
    const write = await keyFor('default', 'write');
    const admin = await keyFor('default', 'admin');
    const created = await api.call('POST', '/retry-tasks', { targetUrl: 'https://api.example.com/a', method: 'POST' }, bearer(write));
    expect(created.status).toBe(201);

    expect((await api.call('GET', `/retry-tasks/${created.body.taskId}`, undefined, bearer(read))).status).toBe(200);
    const refused = await api.call('POST', '/retry-tasks', { targetUrl: 'https://api.example.com/a', method: 'POST' }, bearer(read));
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('FORBIDDEN');
    expect(refused.body.detail).toContain('needs write');
    expect((await api.call('DELETE', `/retry-tasks/${created.body.taskId}`, undefined, bearer(read))).status).toBe(403);
    expect((await api.call('POST', '/retry-policies', { policyId: 'p', maxAttempts: 2, backoffType: 'FIXED', initialDelayMs: 10, multiplier: 1, maxDelayMs: 10, jitterType: 'NONE' }, bearer(read))).status).toBe(403);

    expect((await api.call('POST', '/api-keys', { name: 'x', scope: 'read' }, bearer(write))).status).toBe(403);
    expect((await api.call('GET', '/api-keys', undefined, bearer(write))).status).toBe(403);
    expect((await api.call('POST', '/api-keys', { name: 'x', scope: 'read' }, bearer(admin))).status).toBe(201);
    expect((await api.call('DELETE', `/retry-tasks/${created.body.taskId}`, undefined, bearer(write))).status).toBe(200);
  });

  it("keeps tenants apart: another tenant's ids answer 404, idempotency keys and policies are per tenant", async () => {
    const a = await keyFor('acme', 'admin');
    const b = await keyFor('globex', 'admin');
    const body = { targetUrl: 'https://api.example.com/pay', method: 'POST', idempotencyKey: 'order-1', body: { n: 1 } };
    const task = await api.call('POST', '/retry-tasks', body, bearer(a));
    expect(task.status).toBe(201);
    const id = task.body.taskId as string;

    for (const [method, path] of [
      ['GET', `/retry-tasks/${id}`],
      ['GET', `/retry-tasks/${id}/attempts`],
      ['DELETE', `/retry-tasks/${id}`],
      ['POST', `/retry-tasks/${id}/replay`],
    ] as const) {
      const res = await api.call(method, path, undefined, bearer(b));
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.code).toBe('NOT_FOUND');
    }
    expect((await api.call('GET', '/retry-tasks', undefined, bearer(b))).body.items).toEqual([]);
    expect((await api.call('GET', '/retry-tasks', undefined, bearer(a))).body.items).toHaveLength(1);

    // The same idempotency key in another tenant is another task, not a replay of the first.
    const theirs = await api.call('POST', '/retry-tasks', body, bearer(b));
    expect(theirs.status).toBe(201);
    expect(theirs.body.taskId).not.toBe(id);
    expect((await api.call('POST', '/retry-tasks', body, bearer(a))).status).toBe(200);

    const policy = { policyId: 'gentle', maxAttempts: 2, backoffType: 'FIXED', initialDelayMs: 10, multiplier: 1, maxDelayMs: 10, jitterType: 'NONE' };
    expect((await api.call('POST', '/retry-policies', policy, bearer(a))).status).toBe(201);
    expect((await api.call('GET', '/retry-policies/gentle', undefined, bearer(b))).status).toBe(404);
    const unknownPolicy = await api.call('POST', '/retry-tasks', { targetUrl: 'https://api.example.com/x', method: 'POST', policyId: 'gentle' }, bearer(b));
    expect(unknownPolicy.status).toBe(400);
    // Each tenant has its own default policy, and changing one leaves the other's as it was.
    const defaultA = await api.call('GET', '/retry-policies/default', undefined, bearer(a));
    expect(defaultA.status).toBe(200);
    expect((await api.call('PUT', '/retry-policies/default', { ...policy, policyId: undefined, maxAttempts: 7 }, bearer(b))).status).toBe(200);
    expect((await api.call('GET', '/retry-policies/default', undefined, bearer(a))).body.maxAttempts).toBe(defaultA.body.maxAttempts);
    expect((await api.call('GET', '/retry-policies/default', undefined, bearer(b))).body.maxAttempts).toBe(7);

    const stored = await api.store.getTask('acme', id);
    expect(stored?.tenantId).toBe('acme');
    expect(await api.store.getTask('globex', id)).toBeUndefined();
  });

  it("deletes finished tasks by hand only with an admin key, and only the key's tenant's; bulk cancels within the tenant", async () => {
    const admin = await keyFor('acme', 'admin');
    const write = await keyFor('acme', 'write');
    const theirs = await keyFor('globex', 'write');
    const mine = (await api.call('POST', '/retry-tasks', { targetUrl: 'https://api.example.com/a', method: 'POST', delayMs: 60_000 }, bearer(write))).body.taskId as string;
    const other = (await api.call('POST', '/retry-tasks', { targetUrl: 'https://api.example.com/a', method: 'POST', delayMs: 60_000 }, bearer(theirs))).body.taskId as string;
    // Another tenant's bulk cancel does not reach this tenant's task.
    expect((await api.call('POST', '/retry-tasks/cancel', {}, bearer(theirs))).body.results).toEqual([{ taskId: other, result: 'cancelled' }]);
    expect((await api.call('POST', '/retry-tasks/cancel', {}, bearer(write))).body.results).toEqual([{ taskId: mine, result: 'cancelled' }]);

    const path = `/retry-tasks?finishedBefore=${Date.now() + 3_600_000}`;
    const refused = await api.call('DELETE', path, undefined, bearer(write));
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain('needs admin');
    expect((await api.call('DELETE', path, undefined, bearer(admin))).body).toEqual({ deleted: 1, taskIds: [mine] });
    expect((await api.call('GET', `/retry-tasks/${other}`, undefined, bearer(theirs))).body.status).toBe('CANCELLED');
  });

  it('creates, lists and revokes keys through the API, within the tenant; a revoked key stops at once', async () => {
    const admin = await keyFor('acme', 'admin');
    const other = await keys.create({ tenantId: 'globex', scope: 'admin', name: 'theirs' });
    const created = await api.call('POST', '/api-keys', { name: 'deploy bot', scope: 'write' }, bearer(admin));
    expect(created.status).toBe(201);
    expect(created.headers['cache-control']).toBe('no-store');
    expect(created.body).toMatchObject({ tenantId: 'acme', scope: 'write', name: 'deploy bot', revokedAt: null });
    expect(created.body.key).toMatch(/^rtd_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    expect((await api.call('GET', '/retry-tasks', undefined, bearer(created.body.key))).status).toBe(200);

    const listed = await api.call('GET', '/api-keys', undefined, bearer(admin));
    expect(listed.body.items.map((k: { keyId: string }) => k.keyId).sort()).toEqual([admin.slice(4, 20), created.body.keyId].sort());
    expect(listed.text).not.toContain('secretHash');
    expect(listed.text).not.toContain(created.body.key.slice(21));

    const invalid = await api.call('POST', '/api-keys', { name: '', scope: 'root' }, bearer(admin));
    expect(invalid.status).toBe(400);
    expect(invalid.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['name', 'scope']);

    expect((await api.call('DELETE', `/api-keys/${other.record.keyId}`, undefined, bearer(admin))).status).toBe(404);
    expect((await keys.list('globex', { limit: 10 })).items[0]?.revokedAt).toBeNull();
    const revoked = await api.call('DELETE', `/api-keys/${created.body.keyId}`, undefined, bearer(admin));
    expect(revoked.status).toBe(200);
    expect(revoked.body.revokedAt).toBe(clock.now);
    expect((await api.call('GET', '/retry-tasks', undefined, bearer(created.body.key))).status).toBe(401);
  });

  it('stays closed after every key is revoked', async () => {
    const only = await keys.create({ tenantId: 'default', scope: 'admin', name: 'only' });
    expect((await api.call('GET', '/retry-tasks', undefined, bearer(only.token))).status).toBe(200);
    await keys.revoke(only.record.keyId);
    expect(await api.store.access.hasActiveApiKey()).toBe(false);
    expect((await api.call('GET', '/retry-tasks')).status).toBe(401);
  });
});

describe('API access: targets per tenant', () => {
  it("shows a tenant only its own targets, and lets only admins change them", async () => {
    const clock = { now: 1_800_000_000_000 };
    const { api, close } = await startTargetsApi({ access: (store) => accessOf(store, clock) });
    try {
      const keys = new ApiKeys(api.store, () => clock.now);
      const a = (await keys.create({ tenantId: 'acme', scope: 'admin', name: 'a' })).token;
      const aWrite = (await keys.create({ tenantId: 'acme', scope: 'write', name: 'a' })).token;
      const b = (await keys.create({ tenantId: 'globex', scope: 'admin', name: 'b' })).token;
      const target = `/targets/${encodeURIComponent('https://api.example.com')}`;
      expect((await api.call('POST', '/retry-tasks', { targetUrl: 'https://api.example.com/a', method: 'POST' }, bearer(a))).status).toBe(201);
      expect((await api.call('PUT', target, { rateLimit: { ratePerSecond: 5 } }, bearer(aWrite))).status).toBe(403);
      const changed = await api.call('PUT', target, { rateLimit: { ratePerSecond: 5 } }, bearer(a));
      expect(changed.status, changed.text).toBe(200);

      expect((await api.call('GET', target, undefined, bearer(a))).status).toBe(200);
      expect((await api.call('GET', target, undefined, bearer(b))).status).toBe(404);
      expect((await api.call('GET', '/targets', undefined, bearer(b))).body.items).toEqual([]);
      expect((await api.call('POST', `${target}/breaker`, { action: 'open' }, bearer(b))).status).toBe(200);
      // globex opening "its" breaker on that origin holds none of acme's tasks.
      expect((await api.call('GET', target, undefined, bearer(a))).body.breaker.state).toBe('CLOSED');
      expect((await api.call('GET', target, undefined, bearer(b))).body.breaker.state).toBe('OPEN');
      // Ending a hold is an admin's, and only of its own tenant's target: globex's release leaves acme's hold.
      await api.store.holdTarget({ tenantId: 'acme', targetKey: 'https://api.example.com' }, clock.now + 600_000, clock.now);
      expect((await api.call('POST', `${target}/release`, undefined, bearer(aWrite))).status).toBe(403);
      expect((await api.call('POST', `${target}/release`, undefined, bearer(b))).status).toBe(200);
      expect((await api.call('GET', target, undefined, bearer(a))).body.heldUntil).toBe(clock.now + 600_000);
      expect((await api.call('POST', `${target}/release`, undefined, bearer(a))).body.heldUntil).toBeNull();
    } finally {
      await close();
    }
  });
});

describe('API access: per-tenant limits', () => {
  let api: ApiHarness;
  const clock = { now: 1_800_000_000_000 };

  afterEach(async () => api.close());

  it('limits requests per second per tenant with 429 and Retry-After, the others unaffected', async () => {
    api = await startApi({ access: (store) => accessOf(store, clock, { requestsPerSecond: 2, maxPendingTasks: null }) });
    const keys = new ApiKeys(api.store, () => clock.now);
    const a = (await keys.create({ tenantId: 'acme', scope: 'read', name: 'a' })).token;
    const b = (await keys.create({ tenantId: 'globex', scope: 'read', name: 'b' })).token;
    expect((await api.call('GET', '/retry-tasks', undefined, bearer(a))).status).toBe(200);
    expect((await api.call('GET', '/retry-tasks', undefined, bearer(a))).status).toBe(200);
    const limited = await api.call('GET', '/retry-tasks', undefined, bearer(a));
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('RATE_LIMITED');
    expect(limited.headers['retry-after']).toBe('1');
    expect((await api.call('GET', '/retry-tasks', undefined, bearer(b))).status).toBe(200);
    clock.now += 500;
    expect((await api.call('GET', '/retry-tasks', undefined, bearer(a))).status).toBe(200);
    expect((await api.call('GET', '/retry-tasks', undefined, bearer(a))).status).toBe(429);

    // A tenant's own limit replaces the default (read again once the cache lapses).
    await api.store.access.putTenantLimits('acme', { requestsPerSecond: 100, maxPendingTasks: null }, clock.now);
    clock.now += 5_000;
    for (let i = 0; i < 20; i++) expect((await api.call('GET', '/retry-tasks', undefined, bearer(a))).status).toBe(200);
  });

  it('refuses enqueues past the most pending tasks, batches whole, and admits again once tasks end', async () => {
    api = await startApi({ access: (store) => accessOf(store, clock, { requestsPerSecond: null, maxPendingTasks: 2 }) });
    const keys = new ApiKeys(api.store, () => clock.now);
    const a = (await keys.create({ tenantId: 'acme', scope: 'write', name: 'a' })).token;
    const b = (await keys.create({ tenantId: 'globex', scope: 'write', name: 'b' })).token;
    const task = (n: number) => ({ targetUrl: 'https://api.example.com/a', method: 'POST', idempotencyKey: `k${n}`, delayMs: 3_600_000 });
    const first = await api.call('POST', '/retry-tasks', task(1), bearer(a));
    expect(first.status).toBe(201);
    expect((await api.call('POST', '/retry-tasks', task(2), bearer(a))).status).toBe(201);
    const refused = await api.call('POST', '/retry-tasks', task(3), bearer(a));
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('TOO_MANY_PENDING_TASKS');
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.body.detail).toContain('at most 2');
    expect((await api.call('POST', '/retry-tasks/batch', { tasks: [task(4), task(5), task(6)] }, bearer(b))).status).toBe(429);
    expect((await api.call('GET', '/retry-tasks', undefined, bearer(b))).body.items).toEqual([]);
    expect((await api.call('POST', '/retry-tasks/batch', { tasks: [task(4), task(5)] }, bearer(b))).status).toBe(200);

    expect((await api.call('DELETE', `/retry-tasks/${first.body.taskId}`, undefined, bearer(a))).status).toBe(200);
    expect((await api.call('POST', '/retry-tasks', task(3), bearer(a))).status).toBe(201);
  });
});
