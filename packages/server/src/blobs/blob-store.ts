/**
 * Bodies at or under this size (64 KiB) stay inline in the task row; larger ones go to the blob store and
 * the task keeps only their `bodyRef`.
 */
export const DEFAULT_INLINE_BODY_LIMIT = 64 * 1024;

/**
 * Where large request bodies live, apart from the task rows that refer to them: a directory beside SQLite, the
 * PostgreSQL `blobs` table, Redis keys, or an S3 bucket (`--blobs`).
 *
 * Write order is the durability contract: `put` resolves only once the blob is durable, and the caller
 * commits the task that refers to it after that. A crash in between leaves an unreferenced blob (harmless),
 * never a task whose body is missing.
 *
 * Deliberately not here: listing blobs, and any notion of which task owns a blob (the task keeps the ref; the
 * store knows nothing of tasks).
 */
export interface BlobStore {
  /**
   * Stores `data` under `key` for `tenantId` (overwriting an earlier blob with the same key, in one step: a `get`
   * meanwhile reads the old bytes or the new, never part of them or none) and returns the ref to keep in the task,
   * `tenant/key`. Rejects with a `TypeError` a `tenantId` or `key` that is not a plain
   * name (`BLOB_NAME`: letters, digits, `.`, `_`, `-`, not starting with `.`, at most 200 characters).
   */
  put(tenantId: string, key: string, data: Buffer | string): Promise<string>;
  /**
   * The blob's bytes. Rejects with `BlobNotFoundError` when there is none, and with a `TypeError` on a ref it
   * neither made nor adopted.
   */
  get(ref: string): Promise<Buffer>;
  /**
   * Removes a blob that `put` wrote; removing one that is absent is not an error. A ref from {@link adopt}
   * names the caller's object, which retryd never removes: `delete` resolves and leaves it.
   */
  delete(ref: string): Promise<void>;
  /**
   * Optional: takes a body the caller already put in the store's bucket, by its URL (`s3://bucket/key`), after
   * checking that it belongs to `tenantId` and exists. Resolves with the ref to keep in the task (readable with
   * `get`, left alone by `delete`) or with the rule the URL breaks; rejects when the store cannot answer (an
   * error coded `STORE_UNAVAILABLE`). Stores whose blobs callers cannot write (file, PostgreSQL, Redis) leave it
   * out, and an enqueue with `bodyRef` is then refused.
   */
  adopt?(tenantId: string, url: string): Promise<AdoptResult>;
  /** Optional: releases the store's own connections. A blob store that shares the task store's closes with it. */
  close?(): Promise<void>;
}

/**
 * The answer of {@link BlobStore.adopt}: the ref of the caller's object, or the rule its URL breaks (a phrase
 * that completes "bodyRef must be …") and what was found instead.
 */
export type AdoptResult = { ok: true; ref: string } | { ok: false; rule: string; got?: string };

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

/**
 * The blob store cannot answer now (connection refused or lost, timeout, a 5xx or throttling answer): the
 * request may succeed later. Coded `STORE_UNAVAILABLE`, so the API answers 503 like for a task store outage.
 */
export class BlobStoreUnavailableError extends Error {
  readonly code = 'STORE_UNAVAILABLE';
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'BlobStoreUnavailableError';
  }
}
