import { readMigrations, type Migration } from '../sql/migration-files.js';
import type { Database } from 'better-sqlite3';

export type { Migration } from '../sql/migration-files.js';

/** The numbered schema files beside this module (copied into `dist` by `scripts/copy-assets.mjs`). */
const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);

/** Every migration file of `dir` (default: this store's), in version order (see `readMigrations`). */
export function loadMigrations(dir: URL = MIGRATIONS_DIR): Migration[] {
  return readMigrations(dir, 'SQLite');
}

/**
 * Applies the migrations not yet recorded in `schema_migrations`, each in its own IMMEDIATE transaction
 * together with its record. The IMMEDIATE lock makes this safe when several processes start on one file at
 * once: the second waits (busy_timeout), then sees the step recorded and skips it.
 */
export function migrate(db: Database, migrations: readonly Migration[]): number[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    applied_at INTEGER NOT NULL
  ) STRICT`);
  const isApplied = db.prepare<[number], { version: number }>('SELECT version FROM schema_migrations WHERE version = ?');
  // The database's own clock: an audit field that no decision reads.
  const record = db.prepare<[number, string]>(
    'INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, CAST(unixepoch(\'subsec\') * 1000 AS INTEGER))',
  );
  const applied: number[] = [];
  for (const migration of migrations) {
    const apply = db.transaction(() => {
      if (isApplied.get(migration.version) !== undefined) return false;
      db.exec(migration.sql);
      record.run(migration.version, migration.name);
      return true;
    });
    if (apply.immediate()) applied.push(migration.version);
  }
  return applied;
}
