import { createHash } from 'node:crypto';
import { expect, it } from 'vitest';
import type { ApiKeyQuery, ApiKeyRecord, Store } from '../../src/store/store.js';
import { T0 } from '../fixtures/tasks.js';
import type { CurrentStore } from './helpers.js';

// The access sub-port (`Store.access`): API keys as hashes, their listing and revocation, and tenant limits.

/** An active `write` key of the `default` tenant, created at `T0`, its hash derived from its id. */
function makeKey(keyId: string, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return {
    keyId,
    tenantId: 'default',
    scope: 'write',
    name: `key ${keyId}`,
    secretHash: createHash('sha256').update(`secret-of-${keyId}`).digest('hex'),
    createdAt: T0,
    revokedAt: null,
    ...overrides,
  };
}

/** Follows `nextCursor` to the end, returning every page. Stops with an error rather than loop forever. */
async function walk(store: Store, query: Omit<ApiKeyQuery, 'cursor'>): Promise<ApiKeyRecord[][]> {
  const pages: ApiKeyRecord[][] = [];
  let cursor: string | undefined;
  do {
    const page = await store.access.listApiKeys(cursor === undefined ? query : { ...query, cursor });
    pages.push(page.items);
    cursor = page.nextCursor;
    if (pages.length > 100) throw new Error('listApiKeys did not reach its last page');
  } while (cursor !== undefined);
  return pages;
}

async function createAll(store: Store, keys: readonly ApiKeyRecord[]): Promise<void> {
  for (const key of keys) expect(await store.access.createApiKey(key)).toBe(true);
}

/** Byte order of ids (for these ASCII ids, JavaScript's default sort): what the port lists keys in. */
const byKeyId = (keys: readonly ApiKeyRecord[]) => [...keys].sort((a, b) => (a.keyId < b.keyId ? -1 : a.keyId > b.keyId ? 1 : 0));

export function accessCases(store: CurrentStore): void {
  it('creates a key and reads back every field, for every scope', async () => {
    const keys = [
      makeKey('k-admin', { scope: 'admin', tenantId: 'tenant-b', name: 'CI deploys — ünïcode', createdAt: T0 + 0.25 }),
      makeKey('k-write', { scope: 'write', name: '' }),
      makeKey('k-read', { scope: 'read', createdAt: T0 + 7 }),
      makeKey('k-metrics', { scope: 'metrics', name: 'prometheus' }),
      // Created already revoked (an import, say): the time is kept as given.
      makeKey('k-old', { scope: 'read', createdAt: T0 - 1_000, revokedAt: T0 - 10.5 }),
    ];
    await createAll(store(), keys);
    for (const key of keys) expect(await store().access.getApiKey(key.keyId)).toEqual(key);
    expect(await store().access.getApiKey('k-missing')).toBeUndefined();
  });

  it('refuses a second key with a taken id and changes nothing', async () => {
    const first = makeKey('k1');
    expect(await store().access.createApiKey(first)).toBe(true);
    const second = makeKey('k1', { tenantId: 'tenant-b', scope: 'admin', name: 'other', secretHash: 'ab'.repeat(32), createdAt: T0 + 5 });
    expect(await store().access.createApiKey(second)).toBe(false);
    expect(await store().access.getApiKey('k1')).toEqual(first);
    expect((await store().access.listApiKeys({ tenantId: 'tenant-b', limit: 10 })).items).toEqual([]);
    expect((await store().access.listApiKeys({ limit: 10 })).items).toEqual([first]);
  });

  it('lets exactly one of several concurrent creates of one id win', async () => {
    const candidates = Array.from({ length: 5 }, (_, i) => makeKey('k-race', { name: `attempt ${i}`, createdAt: T0 + i }));
    const results = await Promise.all(candidates.map((key) => store().access.createApiKey(key)));
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = candidates[results.indexOf(true)];
    expect(await store().access.getApiKey('k-race')).toEqual(winner);
    expect((await store().access.listApiKeys({ limit: 10 })).items).toEqual([winner]);
  });

  it("lists one tenant's keys in byte order of their ids, page by page, revoked ones included", async () => {
    // Byte order puts upper case, then `_`, then lower case: a locale's collation would not.
    const mine = ['k-b', 'k-B', 'k-_', 'k-a', 'k-A'].map((id) => makeKey(id));
    const theirs = ['k-0', 'k-Z', 'k-c'].map((id) => makeKey(id, { tenantId: 'tenant-b' }));
    await createAll(store(), [mine[0], theirs[0], mine[1], mine[2], theirs[1], mine[3], theirs[2], mine[4]] as ApiKeyRecord[]);
    const revoked = await store().access.revokeApiKey('k-_', T0 + 1);
    expect(revoked?.revokedAt).toBe(T0 + 1);

    const expected = byKeyId(mine.map((key) => (key.keyId === 'k-_' ? { ...key, revokedAt: T0 + 1 } : key)));
    expect(expected.map((key) => key.keyId)).toEqual(['k-A', 'k-B', 'k-_', 'k-a', 'k-b']);
    const pages = await walk(store(), { tenantId: 'default', limit: 2 });
    expect(pages.map((page) => page.length)).toEqual([2, 2, 1]);
    expect(pages.flat()).toEqual(expected);

    expect((await walk(store(), { tenantId: 'tenant-b', limit: 2 })).flat()).toEqual(byKeyId(theirs));
    expect(await walk(store(), { tenantId: 'nobody', limit: 2 })).toEqual([[]]);
  });

  it("lists every tenant's keys in one id order when no tenant is given", async () => {
    const keys = [
      makeKey('k-3'),
      makeKey('k-1', { tenantId: 'tenant-b' }),
      makeKey('k-4', { tenantId: 'tenant-c' }),
      makeKey('k-2'),
      makeKey('k-0', { tenantId: 'tenant-b' }),
      makeKey('k-5', { tenantId: 'tenant-c' }),
    ];
    await createAll(store(), keys);
    const pages = await walk(store(), { limit: 2 });
    // A count that is a multiple of the page size ends without an empty page.
    expect(pages.map((page) => page.length)).toEqual([2, 2, 2]);
    expect(pages.flat()).toEqual(byKeyId(keys));
    expect(await walk(store(), { limit: 10 })).toEqual([byKeyId(keys)]);
  });

  it('revokes a key once: a second revoke keeps the first time', async () => {
    const key = makeKey('k1');
    await createAll(store(), [key]);
    expect(await store().access.revokeApiKey('k1', T0 + 10)).toEqual({ ...key, revokedAt: T0 + 10 });
    expect(await store().access.revokeApiKey('k1', T0 + 20)).toEqual({ ...key, revokedAt: T0 + 10 });
    expect(await store().access.revokeApiKey('k1', T0 + 30, 'default')).toEqual({ ...key, revokedAt: T0 + 10 });
    expect(await store().access.getApiKey('k1')).toEqual({ ...key, revokedAt: T0 + 10 });
  });

  it("treats another tenant's key as no key when revoking for a tenant", async () => {
    const key = makeKey('k1');
    await createAll(store(), [key]);
    expect(await store().access.revokeApiKey('k1', T0 + 10, 'tenant-b')).toBeUndefined();
    expect(await store().access.getApiKey('k1')).toEqual(key);
    expect(await store().access.hasActiveApiKey()).toBe(true);
    expect(await store().access.revokeApiKey('k1', T0 + 11, 'default')).toEqual({ ...key, revokedAt: T0 + 11 });
  });

  it('answers undefined when revoking a key that does not exist, and creates nothing', async () => {
    expect(await store().access.revokeApiKey('k-missing', T0)).toBeUndefined();
    expect(await store().access.revokeApiKey('k-missing', T0, 'default')).toBeUndefined();
    expect(await store().access.getApiKey('k-missing')).toBeUndefined();
    expect((await store().access.listApiKeys({ limit: 10 })).items).toEqual([]);
    expect(await store().access.hasActiveApiKey()).toBe(false);
  });

  it('tells whether any key is active', async () => {
    expect(await store().access.hasActiveApiKey()).toBe(false);
    await createAll(store(), [makeKey('k-revoked', { revokedAt: T0 })]);
    expect(await store().access.hasActiveApiKey()).toBe(false);
    await createAll(store(), [makeKey('k1')]);
    expect(await store().access.hasActiveApiKey()).toBe(true);
    await createAll(store(), [makeKey('k2', { tenantId: 'tenant-b' })]);
    await store().access.revokeApiKey('k1', T0 + 1);
    expect(await store().access.hasActiveApiKey()).toBe(true);
    await store().access.revokeApiKey('k2', T0 + 2);
    expect(await store().access.hasActiveApiKey()).toBe(false);
    // Revoking again must not count a key twice.
    await store().access.revokeApiKey('k2', T0 + 3);
    await createAll(store(), [makeKey('k3')]);
    expect(await store().access.hasActiveApiKey()).toBe(true);
    await store().access.revokeApiKey('k3', T0 + 4);
    expect(await store().access.hasActiveApiKey()).toBe(false);
  });

  it("keeps each tenant's limits: set, replaced and deleted", async () => {
    expect(await store().access.getTenantLimits('default')).toBeUndefined();
    await store().access.putTenantLimits('default', { requestsPerSecond: 0.5, maxPendingTasks: null }, T0);
    expect(await store().access.getTenantLimits('default')).toEqual({ requestsPerSecond: 0.5, maxPendingTasks: null });
    expect(await store().access.getTenantLimits('tenant-b')).toBeUndefined();

    await store().access.putTenantLimits('tenant-b', { requestsPerSecond: null, maxPendingTasks: null }, T0);
    expect(await store().access.getTenantLimits('tenant-b')).toEqual({ requestsPerSecond: null, maxPendingTasks: null });

    await store().access.putTenantLimits('default', { requestsPerSecond: null, maxPendingTasks: 10_000 }, T0 + 1);
    expect(await store().access.getTenantLimits('default')).toEqual({ requestsPerSecond: null, maxPendingTasks: 10_000 });
    await store().access.putTenantLimits('default', { requestsPerSecond: 200, maxPendingTasks: 0 }, T0 + 2);
    expect(await store().access.getTenantLimits('default')).toEqual({ requestsPerSecond: 200, maxPendingTasks: 0 });

    await store().access.putTenantLimits('default', null, T0 + 3);
    expect(await store().access.getTenantLimits('default')).toBeUndefined();
    expect(await store().access.getTenantLimits('tenant-b')).toEqual({ requestsPerSecond: null, maxPendingTasks: null });
    // Deleting limits that are not there is no error.
    await store().access.putTenantLimits('nobody', null, T0 + 4);
    expect(await store().access.getTenantLimits('nobody')).toBeUndefined();
  });
}
