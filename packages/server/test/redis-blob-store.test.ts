import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { BlobNotFoundError } from '../src/blobs/blob-store.js';
import type { BlobStore } from '../src/blobs/blob-store.js';
import { StoreUrlError } from '../src/service/open-store.js';
import { parseRedisUrl } from '../src/backends/redis/connection.js';
import { openRedisStore } from '../src/backends/redis/open-redis-store.js';
import type { RedisStore } from '../src/backends/redis/redis-store.js';
import { PartitionKeys } from '../src/backends/redis/keys.js';
import { T0, makeTask } from './fixtures/tasks.js';
import { describeBlobStoreConformance } from './blob-store-conformance.js';
import { REDIS_URL, dropPrefixes, freshPrefix } from './redis-harness.js';

afterAll(dropPrefixes);

const open: RedisStore[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((store) => store.close()));
});

async function openFresh(): Promise<{ store: RedisStore; blobs: BlobStore }> {
  const opened = await openRedisStore(`${REDIS_URL}?prefix=${freshPrefix()}`);
  open.push(opened.store);
  return opened;
}

describe('openRedisStore', () => {
  it('opens an initialised store and its blob store from a --store URL', async () => {
    const { store } = await openFresh();
    expect(store.kind).toBe('redis');
    await store.ping();
    expect(await store.insertTasks([makeTask()])).toHaveLength(1);
    expect(await store.nextDueAt()).toBe(T0);
    expect(store.durability()).toMatch(/^(always|everysec|os|snapshots|none|unknown) \(/);
  });

  it('takes the prefix from the URL, else from the options, else `retryd`', async () => {
    const fromOptions = freshPrefix();
    const { store } = await openRedisStore(REDIS_URL, { prefix: fromOptions });
    open.push(store);
    expect(store.prefix).toBe(fromOptions);
    expect(parseRedisUrl('redis://h:6379/2?prefix=staging')).toEqual({ url: 'redis://h:6379/2', prefix: 'staging' });
    expect(parseRedisUrl('rediss://user:secret@h')).toEqual({ url: 'rediss://user:secret@h' });
  });

  it('refuses malformed URLs with a StoreUrlError naming --store and the rule', () => {
    for (const [url, rule] of [
      ['not a url', /`--store`.*redis:\/\/127\.0\.0\.1:6379/],
      ['http://localhost:6379', /`--store` to start with redis:\/\/, rediss:\/\/ or redis\+cluster:\/\//],
      ['redis://h:6379?prefix=a}b', /`--store` `prefix`.*letters, digits/],
      ['redis://h:6379?prefix=', /`--store` `prefix`/],
      ['redis://h:6379?db=1', /only the `prefix` query parameter; got `db`/],
      ['redis://h:6379/queue', /database number/],
    ] as const) {
      expect(() => parseRedisUrl(url)).toThrow(StoreUrlError);
      expect(() => parseRedisUrl(url)).toThrow(rule);
    }
  });

  it('does not echo a password in its errors', () => {
    expect(() => parseRedisUrl('redis://user:hunter2@h:6379?x=1')).toThrow(/^((?!hunter2).)*$/);
  });
});

describeBlobStoreConformance('Redis (fresh prefix)', async () => {
  const { store, blobs } = await openRedisStore(`${REDIS_URL}?prefix=${freshPrefix()}`);
  return { blobs, close: () => store.close() };
});

describe('RedisBlobStore', () => {
  it('stores bytes exactly under the tenant hash tag, beside the tenant\'s tasks', async () => {
    const { store, blobs } = await openFresh();
    const data = randomBytes(200 * 1024);
    const ref = await blobs.put('default', 'body-1', data);
    const key = new PartitionKeys(store.prefix, 'default').blob('body-1');
    expect(await store.redis.getBuffer(key)).toEqual(data);
    await blobs.delete(ref);
    expect(await store.redis.exists(key)).toBe(0);
  });

  it('shares blobs between instances on one prefix', async () => {
    const { store, blobs } = await openFresh();
    const other = await openRedisStore(`${REDIS_URL}?prefix=${store.prefix}`);
    open.push(other.store);
    const ref = await blobs.put('tenant-a', 'k', 'a');
    expect((await other.blobs.get(ref)).toString()).toBe('a');
    await other.blobs.delete(ref);
    await expect(blobs.get(ref)).rejects.toBeInstanceOf(BlobNotFoundError);
  });
});
