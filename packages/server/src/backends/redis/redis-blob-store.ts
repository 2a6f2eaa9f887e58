import type { RedisClient } from './connection.js';
import { BlobNotFoundError } from '../../blobs/blob-store.js';
import type { BlobStore } from '../../blobs/blob-store.js';
import { PartitionKeys, partitionOfTenant } from './keys.js';
import { checkBlobName, parseBlobRef } from '../../blobs/blob-name.js';
import { redisFailure } from './errors.js';
import { translateFailures } from '../../store/failure-boundary.js';

/**
 * Large bodies as Redis strings, `{prefix:tenant}:blob:<key>`, beside the tenant's tasks (same hash tag), so
 * instances on different machines share them through the store they already share. The ref is `tenant/key`,
 * as with `FileBlobStore`.
 *
 * `put` resolves once Redis acknowledged the write: durable as far as the server's AOF setting makes any write
 * durable (see `docs/stores.md`), and always before the task that refers to it is inserted.
 *
 * @example
 * ```ts
 * const blobs = new RedisBlobStore(store.redis, store.prefix);
 * const ref = await blobs.put('default', taskId, largeBody);
 * ```
 */
export class RedisBlobStore implements BlobStore {
  constructor(
    private readonly client: RedisClient,
    private readonly prefix: string,
  ) {}

  async put(tenantId: string, key: string, data: Buffer | string): Promise<string> {
    checkBlobName('tenantId', tenantId);
    checkBlobName('key', key);
    await this.client.set(this.#keyOf(tenantId, key), data);
    return `${tenantId}/${key}`;
  }

  async get(ref: string): Promise<Buffer> {
    const [tenantId, key] = parseBlobRef(ref);
    const data = await this.client.getBuffer(this.#keyOf(tenantId, key));
    if (data === null) throw new BlobNotFoundError(ref);
    return data;
  }

  async delete(ref: string): Promise<void> {
    const [tenantId, key] = parseBlobRef(ref);
    await this.client.del(this.#keyOf(tenantId, key));
  }

  #keyOf(tenantId: string, key: string): string {
    return new PartitionKeys(this.prefix, partitionOfTenant(tenantId)).blob(key);
  }
}

translateFailures(RedisBlobStore, redisFailure);
