import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BlobNotFoundError, DEFAULT_INLINE_BODY_LIMIT } from '../src/blobs/blob-store.js';
import { FileBlobStore } from '../src/blobs/file-blob-store.js';

const root = mkdtempSync(join(tmpdir(), 'retryd-blobs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const freshStore = () => new FileBlobStore(join(root, randomUUID(), 'retryd.db.blobs'));

describe('FileBlobStore', () => {
  it('keeps bodies over 64 KiB out of the task row by default', () => {
    expect(DEFAULT_INLINE_BODY_LIMIT).toBe(65_536);
  });

  it('stores strings and buffers and reads back the same bytes', async () => {
    const blobs = freshStore();
    const text = 'é'.repeat(100_000);
    const bytes = randomBytes(3 * 1024 * 1024);
    const textRef = await blobs.put('default', 'task-1', text);
    const bytesRef = await blobs.put('default', 'task-2', bytes);
    expect(textRef).toBe('default/task-1');
    expect((await blobs.get(textRef)).toString('utf8')).toBe(text);
    expect((await blobs.get(bytesRef)).equals(bytes)).toBe(true);
  });

  it('writes one file per blob under its tenant, leaving no temporary file behind', async () => {
    const blobs = freshStore();
    await Promise.all(Array.from({ length: 20 }, (_, i) => blobs.put(i % 2 ? 'acme' : 'default', `k${i}`, `v${i}`)));
    expect(readdirSync(blobs.dir).sort()).toEqual(['acme', 'default']);
    expect(readdirSync(join(blobs.dir, 'acme'))).toHaveLength(10);
    expect(readdirSync(join(blobs.dir, 'default')).every((name) => !name.endsWith('.tmp'))).toBe(true);
  });

  it('replaces a blob put again under the same key', async () => {
    const blobs = freshStore();
    const ref = await blobs.put('default', 'same', 'first');
    expect(await blobs.put('default', 'same', 'second')).toBe(ref);
    expect((await blobs.get(ref)).toString()).toBe('second');
  });

  it('deletes a blob; deleting it again is fine and reading it is BlobNotFoundError', async () => {
    const blobs = freshStore();
    const ref = await blobs.put('default', 'gone', 'x');
    await blobs.delete(ref);
    await blobs.delete(ref);
    await expect(blobs.get(ref)).rejects.toBeInstanceOf(BlobNotFoundError);
    await expect(blobs.get('default/never-written')).rejects.toMatchObject({ code: 'BLOB_NOT_FOUND' });
  });

  it('refuses tenant ids and keys that are not plain names', async () => {
    const blobs = freshStore();
    for (const bad of ['', '.', '..', '../etc', 'a/b', 'a\\b', '.hidden', 'nul\0byte', 'x'.repeat(201), 'sp ace']) {
      await expect(blobs.put(bad, 'key', 'x')).rejects.toThrow(/`tenantId`/);
      await expect(blobs.put('default', bad, 'x')).rejects.toThrow(/`key`/);
    }
  });

  it('refuses refs that could leave its directory', async () => {
    const outside = join(root, `outside-${randomUUID()}`);
    writeFileSync(outside, 'secret');
    const blobs = freshStore();
    await blobs.put('default', 'inside', 'ok');
    const bad = [
      '../../outside',
      `../${outside}`,
      outside,
      '/etc/passwd',
      'default/../../x',
      'default/..',
      'default',
      'a/b/c',
      'default/.x.tmp',
      'default\\..\\x',
    ];
    for (const ref of bad) {
      await expect(blobs.get(ref)).rejects.toThrow(/blob ref/);
      await expect(blobs.delete(ref)).rejects.toThrow(/blob ref/);
    }
  });
});
