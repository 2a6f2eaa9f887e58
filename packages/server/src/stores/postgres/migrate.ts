import { readdir, readFile } from 'node:fs/promises';
import type pg from 'pg';

/** The numbered schema files beside this module (copied into `dist` by `scripts/copy-assets.mjs`). */
const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);
const MIGRATION_FILE = /^(\d+)-[a-z0-9-]+\.sql$/;

/** One schema step: `NNN-name.sql`, applied in ascending `version` order. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * Reads every migration file, in version order. Two files with the same number are refused: which of them ran
 * would depend on directory order.
 */
export async function loadMigrations(): Promise<Migration[]> {
  const migrations: Migration[] = [];
  for (const file of await readdir(MIGRATIONS_DIR)) {
    const match = MIGRATION_FILE.exec(file);
    if (match?.[1] === undefined) continue;
    const sql = await readFile(new URL(file, MIGRATIONS_DIR), 'utf8');
    migrations.push({ version: Number(match[1]), name: file, sql });
  }
  migrations.sort((a, b) => a.version - b.version);
  for (let i = 1; i < migrations.length; i++) {
    if (migrations[i]?.version === migrations[i - 1]?.version) {
      throw new Error(`Two PostgreSQL migrations share version ${migrations[i]?.version}: rename one of them.`);
    }
  }
  return migrations;
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
