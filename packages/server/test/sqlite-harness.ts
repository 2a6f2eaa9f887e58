import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { RetryTask } from '../src/domain/task.js';
import { SqliteStore } from '../src/backends/sqlite/sqlite-store.js';
import type { SqliteStoreOptions } from '../src/backends/sqlite/sqlite-store.js';
import { makeTask } from './fixtures/tasks.js';

// What the SQLite store's test files share: database files in a temporary directory of their own, removed by
// `afterAll(removeTempDir)` in each file (each test file loads this module afresh, so each has its own directory),
// three targets, and the planner's view of a statement.

/** The directory of this test file's databases. */
export const tempDir = mkdtempSync(join(tmpdir(), 'retryd-sqlite-'));

/** A database file that does not exist yet. */
export const freshPath = (): string => join(tempDir, `${randomUUID()}.db`);

/** Deletes {@link tempDir} and everything in it (an `afterAll` hook). */
export function removeTempDir(): void {
  rmSync(tempDir, { recursive: true, force: true });
}

/**
 * A bare connection to a file database in WAL mode, with the store's durable settings, that has written (so its WAL
 * exists): a table `t` of one column `v`.
 */
export function walDatabase(path = freshPath(), autocheckpointPages = 4_000): Database.Database {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma(`wal_autocheckpoint = ${autocheckpointPages}`);
  db.exec('CREATE TABLE t (v)');
  return db;
}

/** A store on `path` (default: a new file), initialised. */
export async function opened(path = freshPath(), options: SqliteStoreOptions = {}): Promise<SqliteStore> {
  const store = new SqliteStore(path, options);
  await store.init();
  return store;
}

export const lease = { leaseMs: 1_000, workerId: 'w' };
export const A = 'https://a.example.com';
export const B = 'https://b.example.com';
export const C = 'https://c.example.com';

/** A task for `origin` (a target key). */
export const forTarget = (origin: string, overrides: Partial<RetryTask> = {}): RetryTask =>
  makeTask({ targetUrl: `${origin}/hook`, ...overrides });

/** The `EXPLAIN QUERY PLAN` of `sql` with `params`, one detail per line. */
export const plan = (db: Database.Database, sql: string, params: Record<string, unknown> | unknown[] = {}): string =>
  (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...(Array.isArray(params) ? params : [params])) as { detail: string }[])
    .map((r) => r.detail)
    .join('\n');

/** A plan that walks a whole table or sorts in a temporary b-tree. */
export const NO_SCAN = /SCAN (tasks|target_queues)(?! USING)|TEMP B-TREE/;
