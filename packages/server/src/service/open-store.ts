import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { BlobStore } from '../blobs/blob-store.js';
import { FileBlobStore } from '../blobs/file-blob-store.js';
import { parseBlobsUrl } from '../blobs/s3-blobs-url.js';
import { SqliteStore } from '../backends/sqlite/sqlite-store.js';
import type { SqliteStoreOptions } from '../backends/sqlite/connection.js';
import { openPostgresStore } from '../backends/postgres/open-postgres-store.js';
import { openRedisStore } from '../backends/redis/open-redis-store.js';
import type { Store } from '../store/store.js';
import { StoreUrlError } from '../store/store-url-error.js';

export { DEFAULT_STORE_URL } from '../store/default-store-url.js';

const ACCEPTED_FORMS =
  '`sqlite:./retryd.db`, `sqlite:/abs/path.db`, `sqlite::memory:`, `postgres://user@host:5432/db?schema=retryd`, `redis://host:6379?prefix=retryd` or `redis+cluster://host:7000,host:7001?prefix=retryd`';

export { StoreUrlError };

/** Options of {@link openStore}. */
export interface OpenStoreOptions extends SqliteStoreOptions {
  /**
   * Directory of large bodies. Default: beside the database, `<db file>.blobs` (e.g. `retryd.db.blobs/`);
   * for `sqlite::memory:`, a fresh temporary directory.
   */
  blobDir?: string;
  /**
   * A `--blobs` URL (`s3://bucket/prefix?endpoint=…`): large bodies go to that bucket instead of the store's own blob
   * store (and `blobDir` is not used). Default: none.
   */
  blobs?: string;
  /**
   * Background failures (a networked store's lost connection or failed reconnect, a SQLite checkpoint on its worker
   * thread): logged, never thrown.
   */
  onError?: (error: unknown) => void;
  /** Partitions per tenant in a Redis store (`RedisStoreOptions.subPartitions`). Default 1. */
  redisSubPartitions?: number;
}

/** What a `--store` URL names, once parsed. */
export type StoreLocation = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string } | { kind: 'redis'; url: string };

/**
 * Parses a `--store` URL. Relative SQLite paths are resolved against the working directory.
 *
 * @example
 * ```ts
 * parseStoreUrl('sqlite:./retryd.db'); // { kind: 'sqlite', path: '/cwd/retryd.db' }
 * parseStoreUrl('sqlite::memory:');    // { kind: 'sqlite', path: ':memory:' }
 * ```
 */
export function parseStoreUrl(url: string): StoreLocation {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  if (scheme === 'postgres' || scheme === 'postgresql') return { kind: 'postgres', url };
  if (scheme === 'redis' || scheme === 'rediss' || scheme === 'redis+cluster') return { kind: 'redis', url };
  if (scheme !== 'sqlite') {
    throw new StoreUrlError(`Expected \`--store\` to be ${ACCEPTED_FORMS}; got ${JSON.stringify(url)}.`);
  }
  const path = url.slice('sqlite:'.length);
  if (path === ':memory:') return { kind: 'sqlite', path };
  if (path === '' || path.startsWith('//') || path.includes('\0') || path.endsWith('/')) {
    throw new StoreUrlError(
      `Expected \`--store\` to be ${ACCEPTED_FORMS} (a file path after \`sqlite:\`); got ${JSON.stringify(url)}.`,
    );
  }
  return { kind: 'sqlite', path: resolve(path) };
}

/**
 * Opens the store a `--store` URL names, creates or migrates its schema, and opens its blob store: the bucket of
 * `options.blobs` (`--blobs`) when given, else a directory beside a SQLite file (created if missing), or a table /
 * keys in PostgreSQL and Redis, which every instance shares. A bad `--blobs` throws `BlobsUrlError`.
 *
 * @example
 * ```ts
 * const { store, blobs } = await openStore('sqlite:./retryd.db', {});
 * ```
 */
export async function openStore(
  url: string,
  options: OpenStoreOptions = {},
): Promise<{ store: Store; blobs: BlobStore }> {
  const location = parseStoreUrl(url);
  const { blobDir, blobs, onError, redisSubPartitions, ...sqliteOptions } = options;
  // Parsed and opened (it does not contact S3) before the store, so a bad --blobs stops the start untouched.
  // Loaded only when asked for: the AWS SDK is large, and a service that keeps bodies elsewhere should not carry it.
  const s3 = blobs === undefined ? undefined : await (await import('../blobs/s3-blob-store.js')).openS3BlobStore(parseBlobsUrl(blobs));
  try {
    return await openWithBlobs(location, s3, blobDir, onError, sqliteOptions, redisSubPartitions);
  } catch (error) {
    await s3?.close();
    throw error;
  }
}

/**
 * Opens the store, with `blobs` if given, else with the blob store that comes with it (a directory beside SQLite,
 * a table, keys). The directory is only made when it is used.
 */
async function openWithBlobs(
  location: StoreLocation,
  blobs: BlobStore | undefined,
  blobDir: string | undefined,
  onError: ((error: unknown) => void) | undefined,
  sqliteOptions: SqliteStoreOptions,
  redisSubPartitions: number | undefined,
): Promise<{ store: Store; blobs: BlobStore }> {
  const reported = onError === undefined ? {} : { onError };
  const redis = { ...reported, ...(redisSubPartitions === undefined ? {} : { subPartitions: redisSubPartitions }) };
  if (location.kind !== 'sqlite') {
    const opened =
      location.kind === 'postgres' ? await openPostgresStore(location.url, reported) : await openRedisStore(location.url, redis);
    return { store: opened.store, blobs: blobs ?? opened.blobs };
  }
  const inMemory = location.path === ':memory:';
  if (!inMemory) await mkdir(dirname(location.path), { recursive: true });
  if (blobs === undefined) {
    const blobRoot = blobDir ?? (inMemory ? await mkdtemp(join(tmpdir(), 'retryd-blobs-')) : `${location.path}.blobs`);
    await mkdir(blobRoot, { recursive: true });
    blobs = new FileBlobStore(blobRoot);
  }

  const store = new SqliteStore(location.path, { ...sqliteOptions, ...reported });
  try {
    await store.init();
  } catch (error) {
    await store.close();
    throw error;
  }
  return { store, blobs };
}
