import { afterEach, describe, expect, it } from 'vitest';
import { loadQueries } from '../src/backends/postgres/queries.js';
import { T0 } from './fixtures/tasks.js';
import { dropSchemas, makeStore, withClient } from './postgres-harness.js';

// The access sub-port on PostgreSQL beyond the conformance suite: its reads go through their indexes on a table large
// enough for the planner to care.

afterEach(dropSchemas);

describe('PostgresStore access', () => {
  it('reads API keys through their indexes, and finds an active key among many revoked ones in one probe', async () => {
    await using store = makeStore();
    await store.init();
    const queries = await loadQueries();
    const plan = await withClient(
      store.schema,
      async (client) => {
        // 20,000 revoked keys over 200 tenants and a handful of active ones, as after years of rotation.
        await client.query(`
          INSERT INTO api_keys (key_id, tenant_id, scope, name, secret_hash, created_at, revoked_at)
          SELECT 'key-' || lpad(n::text, 6, '0'), 'tenant-' || (n % 200), 'write', 'rotated', md5(n::text), ${T0},
            CASE WHEN n % 5000 = 0 THEN NULL ELSE ${T0} + n END
          FROM generate_series(1, 20000) AS n`);
        await client.query('ANALYZE api_keys');
        const explain = async (sql: string, values: unknown[]) =>
          JSON.stringify((await client.query(`EXPLAIN (FORMAT JSON) ${sql}`, values)).rows[0]);
        return {
          get: await explain(queries['get-api-key'].text, ['key-000007']),
          revoke: await explain(queries['revoke-api-key'].text, ['key-000007', T0, null]),
          ofTenant: await explain(queries['list-api-keys-of-tenant'].text, ['tenant-7', 'key-000100', 51]),
          all: await explain(queries['list-api-keys'].text, ['key-010000', 51]),
          active: await explain(queries['has-active-api-key'].text, []),
        };
      },
      'store',
    );
    const expected = [
      ['get', 'api_keys_pkey'],
      ['revoke', 'api_keys_pkey'],
      ['ofTenant', 'api_keys_by_tenant'],
      ['all', 'api_keys_pkey'],
      ['active', 'api_keys_active'],
    ] as const;
    for (const [name, index] of expected) {
      expect(plan[name], name).toContain(`"Index Name":"${index}"`);
      expect(plan[name], name).not.toContain('Seq Scan');
      expect(plan[name], name).not.toContain('"Node Type":"Sort"');
    }
    expect(await store.access.hasActiveApiKey()).toBe(true);
  });
});
