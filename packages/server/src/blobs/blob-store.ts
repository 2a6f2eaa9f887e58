/**
 * Bodies at or under this size (64 KiB) stay inline in the task row; larger ones go to the blob store and
 * the task keeps only their `bodyRef`.
 */
export const DEFAULT_INLINE_BODY_LIMIT = 64 * 1024;

/**
 * Where large request bodies live, apart from the task rows that refer to them.
 *
 * Write order is the durability contract: `put` resolves only once the blob is durable, and the caller
 * commits the task that refers to it after that. A crash in between leaves an unreferenced blob (harmless),
 * never a task whose body is missing.
 */
export interface BlobStore {
  /**
   * Stores `data` under `key` for `tenantId` (overwriting an earlier blob with the same key) and returns the
   * ref to keep in the task. Rejects a `tenantId` or `key` that is not a plain name (see the implementation).
   */
  put(tenantId: string, key: string, data: Buffer | string): Promise<string>;
  /** The blob's bytes. Rejects with `BlobNotFoundError` when there is none, and on a ref it did not make. */
  get(ref: string): Promise<Buffer>;
  /** Removes a blob; removing one that is absent is not an error. */
  delete(ref: string): Promise<void>;
}

/** No blob under the given ref (deleted, or never written). */
export class BlobNotFoundError extends Error {
  readonly code = 'BLOB_NOT_FOUND';
  readonly ref: string;
  constructor(ref: string, options?: ErrorOptions) {
    super(`No blob under ref "${ref}".`, options);
    this.name = 'BlobNotFoundError';
    this.ref = ref;
  }
}
