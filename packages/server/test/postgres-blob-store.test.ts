import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { BlobNotFoundError } from '../src/blobs/blob-store.js';
import type { PostgresStore } from '../src/backends/postgres/postgres-store.js';
import { describeBlobStoreConformance } from './blob-store-conformance.js';
import { dropSchemas, freshSchema, makeStore, withClient } from './postgres-harness.js';

afterAll(dropSchemas);

async function opened(schema = freshSchema()): Promise<PostgresStore> {
  const store = makeStore(schema, { poolSize: 2 });
  await store.init();
  return store;
}

describeBlobStoreConformance('PostgreSQL (fresh schema)', async () => {
  const store = await opened();
  return { blobs: store.blobs, close: () => store.close() };
});

describe('PostgresBlobStore', () => {
  const stores: PostgresStore[] = [];
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()));
  });

  it('shares blobs between instances on one schema, in its blobs table, apart from other schemas', async () => {
    const schema = freshSchema();
    const [a, b, elsewhere] = [await opened(schema), await opened(schema), await opened()];
    stores.push(a, b, elsewhere);
    const ref = await a.blobs.put('acme', 'k1', 'from a');
    expect((await b.blobs.get(ref)).toString()).toBe('from a');
    await expect(elsewhere.blobs.get(ref)).rejects.toBeInstanceOf(BlobNotFoundError);
    const list = 'SELECT tenant_id, key FROM blobs';
    const rows = await withClient(schema, async (client) => (await client.query(list)).rows);
    expect(rows).toEqual([{ tenant_id: 'acme', key: 'k1' }]);
  });
});
