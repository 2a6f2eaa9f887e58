import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BlobNotFoundError, type BlobStore } from '../src/blobs/blob-store.js';

/** A blob store under test, and how to release what it holds open. */
export interface BlobStoreUnderTest {
  blobs: BlobStore;
  close(): Promise<void>;
}

/** Tenant ids and keys that are not plain names: separators, dots, NUL, spaces, Redis hash-tag braces, too long. */
const BAD_NAMES = ['', '.', '..', '../etc', 'a/b', 'a\\b', '.hidden', 'nul\0byte', 'x'.repeat(201), 'sp ace', 't{x}'];

/** Refs no store makes: the wrong number of parts, traversal, absolute paths, SQL, another bucket. */
const BAD_REFS = [
  'default',
  'a/b/c',
  '/k',
  'default/..',
  'default/.x',
  '/etc/passwd',
  '../../outside',
  'default/../../x',
  'default\\..\\x',
  "default/x' OR '1'='1",
  's3://no-store-uses-this-bucket/default/x',
];

/** What a backend used in tests cannot show of the contract. */
export interface BlobStoreConformanceOptions {
  /**
   * The backend is an emulator that writes a replaced blob in place (s3rver), so a read during the write may fail:
   * the case that a replacement is one step is left out. S3 itself (and MinIO) replace an object in one step.
   */
  replacesInPlace?: boolean;
}

/**
 * The one behavioural contract of the `BlobStore` port, run unchanged against every blob store on a real backend
 * (a directory, PostgreSQL, Redis, an S3-compatible server).
 *
 * `open` must return a new, empty blob store of its own (a fresh directory, schema, key prefix or bucket prefix);
 * the suite closes it after each test.
 *
 * @example
 * ```ts
 * describeBlobStoreConformance('file', async () => ({ blobs: new FileBlobStore(freshDir()), close: async () => {} }));
 * ```
 */
export function describeBlobStoreConformance(
  name: string,
  open: () => Promise<BlobStoreUnderTest>,
  options: BlobStoreConformanceOptions = {},
): void {
  describe(`BlobStore conformance: ${name}`, () => {
    let current: BlobStoreUnderTest | undefined;
    const blobs = (): BlobStore => {
      if (current === undefined) throw new Error('The blob store is only available inside a test.');
      return current.blobs;
    };
    beforeEach(async () => {
      current = await open();
    });
    afterEach(async () => {
      await current?.close();
      current = undefined;
    });

    it('reads back UTF-8 text and binary bytes exactly, under the ref `tenant/key`', async () => {
      const text = 'é{"order":1}\n'.repeat(10_000);
      const bytes = randomBytes(200 * 1024);
      const textRef = await blobs().put('default', 'task-1', text);
      const bytesRef = await blobs().put('default', 'task-2', bytes);
      expect(textRef).toBe('default/task-1');
      expect(bytesRef).toBe('default/task-2');
      expect((await blobs().get(textRef)).toString('utf8')).toBe(text);
      expect((await blobs().get(bytesRef)).equals(bytes)).toBe(true);
    });

    it('keeps a body as large as the API takes (10 MiB) intact, and an empty one', async () => {
      const large = randomBytes(10 * 1024 * 1024);
      const ref = await blobs().put('default', 'large', large);
      expect((await blobs().get(ref)).equals(large)).toBe(true);
      const empty = await blobs().put('default', 'empty', '');
      expect((await blobs().get(empty)).length).toBe(0);
    });

    it('replaces a blob put again under the same key', async () => {
      const ref = await blobs().put('default', 'same', 'first');
      expect(await blobs().put('default', 'same', Buffer.from('second'))).toBe(ref);
      expect((await blobs().get(ref)).toString()).toBe('second');
    });

    it.skipIf(options.replacesInPlace === true)('replaces a blob in one step: a read meanwhile gets the old bytes or the new, never part or none', async () => {
      // A key rotation rewrites a sealed body under its name while attempts may be loading it.
      const [older, newer] = ['a'.repeat(256 * 1024), 'b'.repeat(256 * 1024)];
      const ref = await blobs().put('default', 'rewritten', older);
      const writes = (async () => {
        for (let i = 0; i < 5; i++) await blobs().put('default', 'rewritten', i % 2 === 0 ? newer : older);
      })();
      const reads: string[] = [];
      for (let i = 0; i < 20; i++) reads.push((await blobs().get(ref)).toString());
      await writes;
      expect(reads.filter((read) => read !== older && read !== newer)).toEqual([]);
    });

    it('deletes a blob; deleting it again resolves, and reading it is BlobNotFoundError naming the ref', async () => {
      const ref = await blobs().put('default', 'gone', 'x');
      await blobs().delete(ref);
      await blobs().delete(ref);
      await expect(blobs().get(ref)).rejects.toBeInstanceOf(BlobNotFoundError);
      await expect(blobs().get(ref)).rejects.toMatchObject({ code: 'BLOB_NOT_FOUND', ref });
    });

    it('answers a ref never written with BlobNotFoundError, and deletes it without complaint', async () => {
      const never = 'default/never-written';
      await expect(blobs().get(never)).rejects.toMatchObject({ code: 'BLOB_NOT_FOUND', ref: never });
      await expect(blobs().delete(never)).resolves.toBeUndefined();
    });

    it('refuses tenant ids and keys that are not plain names with a TypeError naming the field', async () => {
      for (const bad of BAD_NAMES) {
        await expect(blobs().put(bad, 'key', 'x')).rejects.toThrow(TypeError);
        await expect(blobs().put(bad, 'key', 'x')).rejects.toThrow(/`tenantId`/);
        await expect(blobs().put('default', bad, 'x')).rejects.toThrow(/`key`/);
      }
    });

    it('refuses refs it did not make, on get and on delete', async () => {
      await blobs().put('default', 'inside', 'ok');
      for (const ref of BAD_REFS) {
        await expect(blobs().get(ref)).rejects.toThrow(TypeError);
        await expect(blobs().get(ref)).rejects.toThrow(/blob ref/);
        await expect(blobs().delete(ref)).rejects.toThrow(/blob ref/);
      }
      expect((await blobs().get('default/inside')).toString()).toBe('ok');
    });

    it('keeps tenants apart: the same key under two tenants is two blobs', async () => {
      const a = await blobs().put('tenant-a', 'k', 'from a');
      const b = await blobs().put('tenant-b', 'k', 'from b');
      expect(a).not.toBe(b);
      expect((await blobs().get(a)).toString()).toBe('from a');
      expect((await blobs().get(b)).toString()).toBe('from b');
      await blobs().delete(a);
      expect((await blobs().get(b)).toString()).toBe('from b');
      await expect(blobs().get('tenant-c/k')).rejects.toBeInstanceOf(BlobNotFoundError);
    });

    it('takes concurrent puts of different keys', async () => {
      const refs = await Promise.all(Array.from({ length: 20 }, (_, i) => blobs().put(i % 2 ? 'acme' : 'default', `k${i}`, `v${i}`)));
      const read = await Promise.all(refs.map(async (ref) => (await blobs().get(ref)).toString()));
      expect(read).toEqual(Array.from({ length: 20 }, (_, i) => `v${i}`));
    });
  });
}
