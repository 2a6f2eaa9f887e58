import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import type { Random } from '@retryd/core';
import { SOCKET_FAILURE_CODES } from '../store/store-errors.js';
import { BLOB_NAME, checkBlobName, parseBlobRef } from './blob-name.js';
import { BlobNotFoundError, BlobStoreUnavailableError, type AdoptResult, type BlobStore } from './blob-store.js';
import { BlobsUrlError, parseS3ObjectUrl, type S3BlobsLocation } from './s3-blobs-url.js';
import { S3RetryStrategy } from './s3-retry-strategy.js';

/** Largest object {@link S3BlobStore.adopt} takes by default: 10 MiB, the API's limit on an inline body. */
export const DEFAULT_MAX_ADOPT_BYTES = 10 * 1024 * 1024;
/** S3's limit on a key, in bytes (UTF-8). */
const MAX_KEY_BYTES = 1024;
// C0 and C1 controls and DEL: legal in S3 keys, but they break logs and URLs, and no caller needs them.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/; // eslint-disable-line no-control-regex

/** Options of {@link S3BlobStore}. */
export interface S3BlobStoreOptions {
  /** The client to send requests with; the store owns it (and `close()` destroys it). */
  client: S3Client;
  bucket: string;
  /** Key prefix without leading or trailing `/`. Default `''`: objects at `<tenant>/<key>`. */
  prefix?: string;
  /** Largest object `adopt` accepts, in bytes. Default {@link DEFAULT_MAX_ADOPT_BYTES}. */
  maxAdoptBytes?: number;
}

/** Options of {@link openS3BlobStore}, beyond what the `--blobs` URL says. */
export interface OpenS3BlobStoreOptions {
  /** The client's randomness (retry jitter). Default `Math.random`. */
  random?: Random;
  /** Most time to set up a connection, in ms. Default 5,000. */
  connectionTimeoutMs?: number;
  /** Most time a request may sit without a byte moving, in ms. Default 30,000. */
  requestTimeoutMs?: number;
  /** Anything else for the SDK client (tests pass `credentials`). Default: the SDK's default chain. */
  client?: Partial<S3ClientConfig>;
}

/**
 * Large bodies as objects in an S3 bucket (or any S3-compatible server), at `<prefix>/<tenant>/<key>`; the ref is
 * `tenant/key`, as with the other blob stores. Instances on different machines share it without sharing the task
 * store's bandwidth, and a caller can put a body there itself and enqueue it by reference ({@link adopt}).
 *
 * `put` resolves once S3 answered 200 to the `PutObject`, which S3 gives only for a durably stored object (and
 * which later reads see: S3 is strongly consistent), so before the task that refers to it is committed. A request
 * that cannot reach S3 (refused, reset, timed out, 5xx, throttled) is retried by the client (see
 * `S3RetryStrategy`) and then rejects with `BlobStoreUnavailableError` (`STORE_UNAVAILABLE`, so the API answers 503).
 *
 * @example
 * ```ts
 * const blobs = await openS3BlobStore(parseBlobsUrl('s3://retryd/bodies?region=eu-west-1'));
 * const ref = await blobs.put('default', taskId, largeBody); // 'default/<taskId>', object bodies/default/<taskId>
 * ```
 */
export class S3BlobStore implements BlobStore, AsyncDisposable {
  readonly client: S3Client;
  readonly bucket: string;
  readonly prefix: string;
  readonly #maxAdoptBytes: number;

  constructor(options: S3BlobStoreOptions) {
    this.client = options.client;
    this.bucket = options.bucket;
    this.prefix = options.prefix ?? '';
    this.#maxAdoptBytes = options.maxAdoptBytes ?? DEFAULT_MAX_ADOPT_BYTES;
  }

  /** The object key of a tenant's blob: `<prefix>/<tenant>/<key>`. */
  keyOf(tenantId: string, key: string): string {
    return `${this.#tenantPrefix(tenantId)}${key}`;
  }

  async put(tenantId: string, key: string, data: Buffer | string): Promise<string> {
    checkBlobName('tenantId', tenantId);
    checkBlobName('key', key);
    const body = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    const command = new PutObjectCommand({ Bucket: this.bucket, Key: this.keyOf(tenantId, key), Body: body });
    await this.#call('PutObject', () => this.client.send(command));
    return `${tenantId}/${key}`;
  }

  async get(ref: string): Promise<Buffer> {
    const key = this.#objectKeyOf(ref);
    try {
      const answer = await this.#call('GetObject', () => this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key })));
      if (answer.Body === undefined) throw new Error(`S3 GetObject of ${key} answered without a body`);
      if (ref.startsWith('s3://') && (answer.ContentLength ?? 0) > this.#maxAdoptBytes) {
        // The caller replaced the object since the enqueue checked it: not read into memory, the attempt fails.
        (answer.Body as { destroy?: () => void }).destroy?.();
        throw new Error(`${ref} now holds ${answer.ContentLength} bytes, more than the ${this.#maxAdoptBytes} retryd sends`);
      }
      const bytes = await answer.Body.transformToByteArray();
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    } catch (error) {
      if (statusOf(error) === 404) throw new BlobNotFoundError(ref, { cause: error });
      throw error;
    }
  }

  async delete(ref: string): Promise<void> {
    const key = this.#objectKeyOf(ref);
    // An adopted ref names the caller's object: retryd reads it and never removes it.
    if (ref.startsWith('s3://')) return;
    // S3 answers 204 for a key that is not there, so a second delete is no error.
    await this.#call('DeleteObject', () => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key })));
  }

  /**
   * Takes an object the caller put in this bucket, `s3://<bucket>/<prefix>/<tenantId>/…`, after a `HeadObject`:
   * it must be in this store's bucket, under the tenant's part of the prefix (one tenant cannot send another's
   * bodies), exist, and hold at most `maxAdoptBytes`. The ref is the object's URL; `get` reads it at each attempt
   * (so a caller who replaces the object changes later attempts) and `delete` never removes it.
   */
  async adopt(tenantId: string, url: string): Promise<AdoptResult> {
    checkBlobName('tenantId', tenantId);
    const object = parseS3ObjectUrl(url);
    const form = `the URL of an object in the configured bucket, s3://${this.bucket}/${this.#tenantPrefix(tenantId)}<key>`;
    if (object === undefined) return { ok: false, rule: form, got: JSON.stringify(url.slice(0, 100)) };
    if (object.bucket !== this.bucket) {
      return { ok: false, rule: `${form} (the bucket --blobs names)`, got: `bucket ${JSON.stringify(object.bucket)}` };
    }
    const tenantPrefix = this.#tenantPrefix(tenantId);
    if (!object.key.startsWith(tenantPrefix) || object.key.length === tenantPrefix.length) {
      return { ok: false, rule: `${form} (this tenant's part of the bucket)`, got: JSON.stringify(object.key.slice(0, 100)) };
    }
    if (!isPlainKey(object.key)) {
      const rule = `${form}, at most ${MAX_KEY_BYTES} bytes, without control characters or empty, '.' or '..' segments`;
      return { ok: false, rule, got: JSON.stringify(object.key.slice(0, 100)) };
    }
    let size: number | undefined;
    try {
      const command = new HeadObjectCommand({ Bucket: this.bucket, Key: object.key });
      size = (await this.#call('HeadObject', () => this.client.send(command))).ContentLength;
    } catch (error) {
      const status = statusOf(error);
      if (status === 404) return { ok: false, rule: 'the URL of an existing object', got: `no object at ${url}` };
      if (status === 403) {
        // S3 answers 403 rather than 404 for a missing key when the credentials may not list the bucket.
        const got = `S3 answered 403 for ${url} (no such object, or retryd's credentials may not read it)`;
        return { ok: false, rule: 'the URL of an existing object that retryd may read', got };
      }
      throw error;
    }
    if (size !== undefined && size > this.#maxAdoptBytes) {
      return { ok: false, rule: `the URL of an object of at most ${this.#maxAdoptBytes} bytes`, got: `${size} bytes` };
    }
    return { ok: true, ref: `s3://${this.bucket}/${object.key}` };
  }

  /** Closes the client's connections. */
  close(): Promise<void> {
    this.client.destroy();
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #tenantPrefix(tenantId: string): string {
    return this.prefix === '' ? `${tenantId}/` : `${this.prefix}/${tenantId}/`;
  }

  /** The key of a ref made by `put` (`tenant/key`) or by `adopt` (`s3://bucket/<prefix>/<tenant>/…`). */
  #objectKeyOf(ref: string): string {
    if (!ref.startsWith('s3://')) {
      const [tenantId, key] = parseBlobRef(ref);
      return this.keyOf(tenantId, key);
    }
    const object = parseS3ObjectUrl(ref);
    const outerPrefix = this.prefix === '' ? '' : `${this.prefix}/`;
    const tenant = object?.key.startsWith(outerPrefix) ? object.key.slice(outerPrefix.length).split('/')[0] : undefined;
    if (
      object === undefined ||
      object.bucket !== this.bucket ||
      tenant === undefined ||
      !BLOB_NAME.test(tenant) ||
      object.key.length === this.#tenantPrefix(tenant).length ||
      !isPlainKey(object.key)
    ) {
      throw new TypeError(`Expected a blob ref made by put() or adopt() of this store, got ${JSON.stringify(ref)}.`);
    }
    return object.key;
  }

  /** Sends a request; a failure to reach S3 becomes `BlobStoreUnavailableError`, any other failure passes as is. */
  async #call<T>(what: string, send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      if (!isUnavailable(error)) throw error;
      const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      throw new BlobStoreUnavailableError(`S3 ${what} in bucket ${this.bucket} failed: ${detail}`, { cause: error });
    }
  }
}

/**
 * Opens the S3 blob store a `--blobs` URL names. Credentials come from the SDK's default chain (`AWS_ACCESS_KEY_ID`
 * and `AWS_SECRET_ACCESS_KEY`, shared files, SSO, web identity, container and instance roles), never from the URL.
 * Fails with `BlobsUrlError` when no region is known (neither `?region=` nor `AWS_REGION`/the shared config).
 * Does not contact S3: a bucket that is missing or unreachable shows on the first large body.
 */
export async function openS3BlobStore(location: S3BlobsLocation, options: OpenS3BlobStoreOptions = {}): Promise<S3BlobStore> {
  const client = new S3Client({
    ...(location.endpoint === undefined ? {} : { endpoint: location.endpoint }),
    ...(location.region === undefined ? {} : { region: location.region }),
    forcePathStyle: location.forcePathStyle,
    retryStrategy: new S3RetryStrategy(undefined, options.random),
    requestHandler: {
      connectionTimeout: options.connectionTimeoutMs ?? 5_000,
      requestTimeout: options.requestTimeoutMs ?? 30_000,
      // Without it the handler only logs a warning and the request hangs on.
      throwOnRequestTimeout: true,
    },
    ...options.client,
  });
  try {
    await client.config.region();
  } catch {
    client.destroy();
    throw new BlobsUrlError('Expected `--blobs` to name a region (?region=us-east-1) when AWS_REGION and the AWS config file name none.');
  }
  return new S3BlobStore({ client, bucket: location.bucket, prefix: location.prefix });
}

/** A key S3 and every log can carry: at most 1,024 bytes, no control character, no empty, `.` or `..` segment. */
function isPlainKey(key: string): boolean {
  return (
    Buffer.byteLength(key) <= MAX_KEY_BYTES &&
    !CONTROL.test(key) &&
    key.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..')
  );
}

/** The HTTP status S3 answered with, if it answered. */
function statusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
}

/** True when S3 could not answer: no connection, a timeout, a 5xx or a throttling answer. */
function isUnavailable(error: unknown): boolean {
  const status = statusOf(error);
  if (status !== undefined) return status >= 500 || status === 429;
  const { code, name } = (error ?? {}) as { code?: unknown; name?: unknown };
  return (typeof code === 'string' && SOCKET_FAILURE_CODES.has(code)) || name === 'TimeoutError';
}
