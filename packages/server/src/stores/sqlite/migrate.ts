import { readdirSync, readFileSync } from 'node:fs';
import type { Database } from 'better-sqlite3';

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
 * Reads every migration file once, in version order. Two files with the same number are refused: which
 * of them ran would depend on directory order.
 */
export function loadMigrations(dir: URL = MIGRATIONS_DIR): Migration[] {
  const migrations: Migration[] = [];
  for (const file of readdirSync(dir)) {
    const match = MIGRATION_FILE.exec(file);
    if (match?.[1] === undefined) continue;
    migrations.push({
      version: Number(match[1]),
      name: file,
      sql: readFileSync(new URL(file, dir), 'utf8'),
    });
  }
  migrations.sort((a, b) => a.version - b.version);
  for (let i = 1; i < migrations.length; i++) {
    if (migrations[i]?.version === migrations[i - 1]?.version) {
      throw new Error(`Two SQLite migrations share version ${migrations[i]?.version}: rename one of them.`);
    }
  }
  return migrations;
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
