import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_INLINE_BODY_LIMIT } from '../src/blobs/blob-store.js';
import { FileBlobStore } from '../src/blobs/file-blob-store.js';
import { describeBlobStoreConformance } from './blob-store-conformance.js';

const root = mkdtempSync(join(tmpdir(), 'retryd-blobs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const freshStore = () => new FileBlobStore(join(root, randomUUID(), 'retryd.db.blobs'));

describeBlobStoreConformance('file (temporary directory)', async () => ({ blobs: freshStore(), close: async () => {} }));

describe('FileBlobStore', () => {
  it('keeps bodies over 64 KiB out of the task row by default', () => {
    expect(DEFAULT_INLINE_BODY_LIMIT).toBe(65_536);
  });

  it('writes one file per blob under its tenant, leaving no temporary file behind', async () => {
    const blobs = freshStore();
    await Promise.all(Array.from({ length: 20 }, (_, i) => blobs.put(i % 2 ? 'acme' : 'default', `k${i}`, `v${i}`)));
    expect(readdirSync(blobs.dir).sort()).toEqual(['acme', 'default']);
    expect(readdirSync(join(blobs.dir, 'acme'))).toHaveLength(10);
    expect(readdirSync(join(blobs.dir, 'default')).every((name) => !name.endsWith('.tmp'))).toBe(true);
  });

  it('refuses refs that could leave its directory, and leaves the file outside alone', async () => {
    const outside = join(root, `outside-${randomUUID()}`);
    writeFileSync(outside, 'secret');
    const blobs = freshStore();
    await blobs.put('default', 'inside', 'ok');
    for (const ref of [`../${outside}`, outside, 'default/.x.tmp']) {
      await expect(blobs.get(ref)).rejects.toThrow(/blob ref/);
      await expect(blobs.delete(ref)).rejects.toThrow(/blob ref/);
    }
    expect(readFileSync(outside, 'utf8')).toBe('secret');
  });
});
