import { readMigrations, type Migration } from '../sql/migration-files.js';
import type pg from 'pg';

export type { Migration } from '../sql/migration-files.js';

/** The numbered schema files beside this module (copied into `dist` by `scripts/copy-assets.mjs`). */
const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);

/** Every migration file of this store, in version order (see `readMigrations`). */
export function loadMigrations(): Migration[] {
  return readMigrations(MIGRATIONS_DIR, 'PostgreSQL');
}

/**
 * Creates the schema if needed and applies the migrations not yet recorded in its `schema_migrations`, all in one
 * transaction that first takes a transaction-scoped advisory lock keyed by the schema.
 *
 * Several instances starting at once are therefore safe: the first applies the steps while the others wait on the
 * lock; each of those then reads `schema_migrations` afresh (READ COMMITTED: every statement sees what committed
 * before it began), finds the steps recorded and applies nothing. A failed step rolls the whole transaction back,
 * lock included, and leaves the schema as it was. `schema` must already be checked (`checkSchemaName`): it is
 * written into SQL unquoted.
 *
 * @returns the versions applied by this call (empty when the schema was up to date)
 */
export async function migrate(pool: pg.Pool, schema: string, migrations: readonly Migration[]): Promise<number[]> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
    // Advisory locks are per database: keyed by the schema, so stores in other schemas start independently.
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1::text, 0))', [`retryd.migrate.${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${schema}.schema_migrations (
      version    integer     PRIMARY KEY,
      name       text        NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now() -- the server's clock: an audit field no decision reads
    )`);
    const done = await client.query<{ version: number }>(`SELECT version FROM ${schema}.schema_migrations`);
    const recorded = new Set(done.rows.map((row) => row.version));
    const applied: number[] = [];
    for (const migration of migrations) {
      if (recorded.has(migration.version)) continue;
      await client.query(migration.sql);
      await client.query(`INSERT INTO ${schema}.schema_migrations (version, name) VALUES ($1, $2)`, [
        migration.version,
        migration.name,
      ]);
      applied.push(migration.version);
    }
    await client.query('COMMIT');
    return applied;
  } catch (error) {
    await client.query('ROLLBACK').catch((rollbackError: unknown) => {
      // The connection itself failed: hand it back as broken so that the pool drops it.
      broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
    });
    throw error;
  } finally {
    client.release(broken);
  }
}
