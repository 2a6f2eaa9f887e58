import type { Database } from 'better-sqlite3';

/** The part of a prepared better-sqlite3 statement the store uses, typed by its parameters and rows. */
export interface Prepared<P extends unknown[], R> {
  run(...params: P): { changes: number };
  get(...params: P): R | undefined;
  all(...params: P): R[];
}

/**
 * Prepares `sql` (once: keep the result). Positional parameters are given as a tuple type, named ones (`@name`) as
 * an object type. With `raw`, rows are arrays of column values in SELECT order, with no object built per row.
 */
export function prepare<P extends unknown[] | object, R = never>(
  db: Database,
  sql: string,
  raw = false,
): Prepared<P extends unknown[] ? P : [P], R> {
  const statement = db.prepare(sql);
  return (raw ? statement.raw(true) : statement) as unknown as Prepared<P extends unknown[] ? P : [P], R>;
}
