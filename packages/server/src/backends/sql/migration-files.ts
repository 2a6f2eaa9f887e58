import { readdirSync, readFileSync } from 'node:fs';

// The numbered schema files of the SQL stores (SQLite and PostgreSQL), each store's beside its own module.

/** One schema step: `NNN-name.sql`, applied in ascending `version` order. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const MIGRATION_FILE = /^(\d+)-[a-z0-9-]+\.sql$/;

/**
 * Reads every migration file of `dir`, in version order (read once, at start-up). Two files with the same number
 * are refused: which of them ran would depend on directory order.
 *
 * @param storeName - for the error: `SQLite`, `PostgreSQL`
 */
export function readMigrations(dir: URL, storeName: string): Migration[] {
  const migrations: Migration[] = [];
  for (const file of readdirSync(dir)) {
    const match = MIGRATION_FILE.exec(file);
    if (match?.[1] === undefined) continue;
    migrations.push({ version: Number(match[1]), name: file, sql: readFileSync(new URL(file, dir), 'utf8') });
  }
  migrations.sort((a, b) => a.version - b.version);
  for (let i = 1; i < migrations.length; i++) {
    if (migrations[i]?.version === migrations[i - 1]?.version) {
      throw new Error(`Two ${storeName} migrations share version ${migrations[i]?.version}: rename one of them.`);
    }
  }
  return migrations;
}
