import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { checkBlobName, parseBlobRef } from './blob-name.js';
import { BlobNotFoundError } from './blob-store.js';
import { translateFailures } from '../store/failure-boundary.js';
import { FILE_FAILURE_CODES, FULL_DISK_CODES, StoreFullError, StoreUnavailableError } from '../store/store-errors.js';
import type { BlobStore } from './blob-store.js';

/**
 * Blobs as files, one directory per tenant: the ref `tenant/key` is the file `<dir>/tenant/key`.
 *
 * Each `put` writes a temporary file, fsyncs it, renames it into place and fsyncs the directory, so a
 * blob is complete and durable before the task that refers to it is committed; a crash mid-write leaves
 * only a `.…tmp` file that no ref can name. Tenant ids and keys must be plain names (letters, digits,
 * `.`, `_`, `-`; not starting with `.`), which rules out path traversal; refs are checked the same way.
 *
 * @example
 * ```ts
 * const blobs = new FileBlobStore('./retryd.db.blobs');
 * const ref = await blobs.put('default', taskId, largeBody);
 * ```
 */
export class FileBlobStore implements BlobStore {
  /** The root directory, absolute. */
  readonly dir: string;
  /** Directories already known to exist durably: spares a mkdir and fsyncs on every put. */
  readonly #durableDirs = new Set<string>();

  constructor(dir: string) {
    this.dir = resolve(dir);
  }

  async put(tenantId: string, key: string, data: Buffer | string): Promise<string> {
    checkBlobName('tenantId', tenantId);
    checkBlobName('key', key);
    const tenantDir = join(this.dir, tenantId);
    await this.#ensureDurableDir(tenantDir);
    const temp = join(tenantDir, `.${key}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      const file = await open(temp, 'wx');
      try {
        await file.writeFile(data);
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temp, join(tenantDir, key));
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    // The rename is only durable once the directory entry is.
    await fsyncDir(tenantDir);
    return `${tenantId}/${key}`;
  }

  async get(ref: string): Promise<Buffer> {
    try {
      return await readFile(this.#pathOf(ref));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new BlobNotFoundError(ref, { cause: error });
      throw error;
    }
  }

  async delete(ref: string): Promise<void> {
    // Not fsynced: a delete that a crash undoes leaves an orphan blob, which is harmless.
    await rm(this.#pathOf(ref), { force: true });
  }

  #pathOf(ref: string): string {
    return join(this.dir, ...parseBlobRef(ref));
  }

  /** Creates `dir` if missing, and fsyncs the parent of each directory created so the new entries survive. */
  async #ensureDurableDir(dir: string): Promise<void> {
    if (this.#durableDirs.has(dir)) return;
    const firstCreated = await mkdir(dir, { recursive: true });
    if (firstCreated !== undefined) {
      for (let created = dir; ; created = dirname(created)) {
        await fsyncDir(dirname(created));
        if (created === firstCreated || dirname(created) === created) break;
      }
    }
    this.#durableDirs.add(dir);
  }
}

async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The file blob store's errors as the port's: a full disk is `StoreFullError`, failing files `StoreUnavailableError`. */
function fileFailure(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return error;
  if (FULL_DISK_CODES.has(code)) return StoreFullError.of(error);
  return FILE_FAILURE_CODES.has(code) ? StoreUnavailableError.of(error) : error;
}

translateFailures(FileBlobStore, fileFailure);
