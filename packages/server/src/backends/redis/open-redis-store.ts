import type { BlobStore } from '../../blobs/blob-store.js';
import { parseRedisUrl } from './connection.js';
import { RedisBlobStore } from './redis-blob-store.js';
import { RedisStore } from './redis-store.js';
import type { RedisStoreOptions } from './redis-store.js';

/** Options of {@link openRedisStore}: those of {@link RedisStore} but the URL. */
export type OpenRedisStoreOptions = Omit<RedisStoreOptions, 'url'>;

/**
 * Opens the Redis store a `--store redis://…` (or `rediss://…`, or `redis+cluster://…` for Redis Cluster) URL names,
 * with its blob store, and initialises
 * it (connects, subscribes to wake-ups, reads the server's persistence settings). `?prefix=name` in the URL
 * selects the key prefix (default `retryd`; `options.prefix` applies when the URL has none).
 *
 * Rejects with a `StoreUrlError` naming `--store` for a malformed URL or prefix, and with the connection error
 * when Redis cannot be reached.
 *
 * @example
 * ```ts
 * const { store, blobs } = await openRedisStore('redis://127.0.0.1:6379?prefix=retryd');
 * logger.info({ durability: store.durability() }, 'store open');
 * ```
 */
export async function openRedisStore(
  url: string,
  options: OpenRedisStoreOptions = {},
): Promise<{ store: RedisStore; blobs: BlobStore }> {
  const location = parseRedisUrl(url);
  const prefix = location.prefix ?? options.prefix;
  const store = new RedisStore({ ...options, url: location.url, ...(prefix === undefined ? {} : { prefix }) });
  await store.init();
  return { store, blobs: new RedisBlobStore(store.redis, store.prefix) };
}
