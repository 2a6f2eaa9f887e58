import { BlobNotFoundError } from '../../blobs/blob-store.js';
import type { BlobStore } from '../../blobs/blob-store.js';
import type { RunQuery } from './postgres-store.js';
import { checkBlobName, parseBlobRef } from '../../blobs/blob-name.js';
import { postgresFailure } from './errors.js';
import { translateFailures } from '../../store/failure-boundary.js';

/**
 * Large bodies in the `blobs` table (bytea) of the store's schema, so that instances on different machines, which
 * share no disk, read each other's bodies. The ref is `tenant/key`, as with `FileBlobStore`.
 *
 * `put` resolves once its row is committed, hence durable (with `synchronous_commit = on`) before the task that
 * refers to it is inserted; a crash in between leaves an unreferenced blob, never a task without its body. A body
 * travels as one binary parameter and one bytea value, so bodies up to the API's limit (10 MiB) fit easily.
 * Get one from `PostgresStore.blobs`; it shares the store's pool and closes with it.
 *
 * @example
 * ```ts
 * const ref = await store.blobs.put('default', taskId, largeBody); // 'default/<taskId>'
 * const body = (await store.blobs.get(ref)).toString('utf8');
 * ```
 */
export class PostgresBlobStore implements BlobStore {
  readonly #run: RunQuery;

  /** @param run - runs the store's statements (`put-blob`, `get-blob`, `delete-blob`) */
  constructor(run: RunQuery) {
    this.#run = run;
  }

  async put(tenantId: string, key: string, data: Buffer | string): Promise<string> {
    checkBlobName('tenantId', tenantId);
    checkBlobName('key', key);
    await this.#run('put-blob', [tenantId, key, typeof data === 'string' ? Buffer.from(data, 'utf8') : data]);
    return `${tenantId}/${key}`;
  }

  async get(ref: string): Promise<Buffer> {
    const [tenantId, key] = parseBlobRef(ref);
    const row = (await this.#run<{ data: Buffer }>('get-blob', [tenantId, key])).rows[0];
    if (row === undefined) throw new BlobNotFoundError(ref);
    return row.data;
  }

  async delete(ref: string): Promise<void> {
    const [tenantId, key] = parseBlobRef(ref);
    await this.#run('delete-blob', [tenantId, key]);
  }
}

translateFailures(PostgresBlobStore, postgresFailure);
