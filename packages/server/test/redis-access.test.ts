import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { AccessKeys, PartitionKeys } from '../src/backends/redis/keys.js';
import type { ApiKeyRecord } from '../src/store/store.js';
import { T0 } from './fixtures/tasks.js';
import { dropPrefixes, keySlot, keysOf } from './redis-harness.js';
import { admin, closeOpened, opened } from './redis-store-harness.js';

// The access sub-port on Redis beyond the conformance suite: where its keys live.

afterAll(dropPrefixes);
afterEach(closeOpened);

const key = (keyId: string, tenantId: string): ApiKeyRecord => ({
  keyId,
  tenantId,
  scope: 'read',
  name: keyId,
  secretHash: '0'.repeat(64),
  createdAt: T0,
  revokedAt: null,
});

describe('RedisStore access', () => {
  it('keeps API keys and tenant limits under the global hash tag, in no partition and in one slot', async () => {
    const store = await opened();
    // Ids and tenants that would end a hash tag or look like another kind of key if the layout let them.
    const tenants = ['default', 'odd{tag}:with%colons', 'access'];
    for (const [i, tenantId] of tenants.entries()) {
      expect(await store.access.createApiKey(key(`k${i}}:tenant-keys:`, tenantId))).toBe(true);
      await store.access.putTenantLimits(tenantId, { requestsPerSecond: 5, maxPendingTasks: null }, T0);
    }
    await store.access.revokeApiKey('k0}:tenant-keys:', T0 + 1);

    const keys = await keysOf(admin(), store.prefix);
    const access = new AccessKeys(store.prefix);
    expect(keys.filter((k) => !k.startsWith(`{${store.prefix}}:`))).toEqual([]);
    expect(keys.sort()).toEqual(
      [
        `{${store.prefix}}:layout`,
        access.apiKeys,
        access.activeApiKeys,
        access.tenantLimits,
        ...tenants.map((tenantId, i) => [access.apiKey(`k${i}}:tenant-keys:`), access.apiKeysOf(tenantId)]).flat(),
      ].sort(),
    );
    expect(new Set(keys.map(keySlot))).toEqual(new Set([keySlot(`{${store.prefix}}:partitions`)]));
    // A tenant named `access` has a partition of its own, apart from the access keys.
    expect(new PartitionKeys(store.prefix, 'access').base).not.toBe(access.base);
    expect(await store.access.getApiKey('k2}:tenant-keys:')).toEqual(key('k2}:tenant-keys:', 'access'));
  });

  it('sees only the API keys of its own prefix', async () => {
    const a = await opened();
    const b = await opened();
    await a.access.createApiKey(key('shared-id', 'default'));
    expect(await b.access.hasActiveApiKey()).toBe(false);
    expect(await b.access.getApiKey('shared-id')).toBeUndefined();
    expect(await b.access.createApiKey(key('shared-id', 'default'))).toBe(true);
    await b.access.revokeApiKey('shared-id', T0);
    expect(await a.access.hasActiveApiKey()).toBe(true);
  });
});
