import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { BlobNotFoundError } from '../src/blobs/blob-store.js';
import type { PostgresStore } from '../src/backends/postgres/postgres-store.js';
import { dropSchemas, freshSchema, makeStore, withClient } from './postgres-harness.js';

const stores: PostgresStore[] = [];

async function opened(schema = freshSchema()): Promise<PostgresStore> {
  const store = makeStore(schema, { poolSize: 2 });
  stores.push(store);
  await store.init();
  return store;
}

afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
  await dropSchemas();
});

describe('PostgresBlobStore', () => {
  it('stores strings and buffers up to the 10 MiB body limit and reads back the same bytes', async () => {
    const { blobs } = await opened();
    const text = 'é'.repeat(100_000);
    const bytes = randomBytes(10 * 1024 * 1024);
    const textRef = await blobs.put('default', 'task-1', text);
    const bytesRef = await blobs.put('default', 'task-2', bytes);
    expect(textRef).toBe('default/task-1');
    expect((await blobs.get(textRef)).toString('utf8')).toBe(text);
    expect((await blobs.get(bytesRef)).equals(bytes)).toBe(true);
  });

  it('shares blobs between instances on one schema, in its blobs table, apart from other schemas', async () => {
    const schema = freshSchema();
    const [a, b, elsewhere] = [await opened(schema), await opened(schema), await opened()];
    const ref = await a.blobs.put('acme', 'k1', 'from a');
    expect((await b.blobs.get(ref)).toString()).toBe('from a');
    await expect(elsewhere.blobs.get(ref)).rejects.toBeInstanceOf(BlobNotFoundError);
    const list = 'SELECT tenant_id, key FROM blobs';
    const rows = await withClient(schema, async (client) => (await client.query(list)).rows);
    expect(rows).toEqual([{ tenant_id: 'acme', key: 'k1' }]);
  });

  it('replaces a blob put again under the same key', async () => {
    const { blobs } = await opened();
    const ref = await blobs.put('default', 'same', 'first');
    expect(await blobs.put('default', 'same', 'second')).toBe(ref);
    expect((await blobs.get(ref)).toString()).toBe('second');
  });

  it('deletes a blob; deleting it again is fine and reading it is BlobNotFoundError', async () => {
    const { blobs } = await opened();
    const ref = await blobs.put('default', 'gone', 'x');
    await blobs.delete(ref);
    await blobs.delete(ref);
    await expect(blobs.get(ref)).rejects.toBeInstanceOf(BlobNotFoundError);
    const never = 'default/never-written';
    await expect(blobs.get(never)).rejects.toMatchObject({ code: 'BLOB_NOT_FOUND', ref: never });
  });

  it('refuses tenant ids and keys that are not plain names, and refs it did not make', async () => {
    const { blobs } = await opened();
    for (const bad of ['', '.', '..', '../etc', 'a/b', '.hidden', 'nul\0byte', 'x'.repeat(201), 'sp ace']) {
      await expect(blobs.put(bad, 'key', 'x')).rejects.toThrow(/`tenantId`/);
      await expect(blobs.put('default', bad, 'x')).rejects.toThrow(/`key`/);
    }
    for (const ref of ['default', 'a/b/c', 'default/..', '/etc/passwd', 'default/.x', "default/x' OR '1'='1"]) {
      await expect(blobs.get(ref)).rejects.toThrow(/blob ref/);
      await expect(blobs.delete(ref)).rejects.toThrow(/blob ref/);
    }
  });
});
