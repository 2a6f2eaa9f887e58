import type Database from 'better-sqlite3';
import { FILE_FAILURE_CODES, FULL_DISK_CODES, StoreFullError, StoreUnavailableError } from '../../store/store-errors.js';

/**
 * better-sqlite3's primary codes for a database that cannot be used now (locked by another process, failing I/O, not
 * openable, read-only, out of memory, interrupted). The driver puts the extended code on `code`
 * (`SQLITE_BUSY_SNAPSHOT`, `SQLITE_IOERR_FSYNC`, ...), whose primary code is its first two words.
 */
const UNAVAILABLE_CODES: ReadonlySet<string> = new Set([
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_IOERR',
  'SQLITE_CANTOPEN',
  'SQLITE_READONLY',
  'SQLITE_NOMEM',
  'SQLITE_PROTOCOL',
  'SQLITE_INTERRUPT',
]);

/** What better-sqlite3 throws (a TypeError, no code) for a call on a closed database. */
const CLOSED = 'The database connection is not open';

/**
 * The SQLite store's errors as the port's: a full disk is `StoreFullError`, a database that cannot be used now is
 * `StoreUnavailableError` (both answered 503); anything else (a constraint, a bug) passes through as raised.
 */
export function sqliteFailure(error: unknown): unknown {
  if (typeof error !== 'object' || error === null || (error as { code?: unknown }).code === 'STORE_UNAVAILABLE') return error;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    const primary = code.replace(/^(SQLITE_[A-Z]+)_.*$/, '$1');
    if (primary === 'SQLITE_FULL' || FULL_DISK_CODES.has(code)) return StoreFullError.of(error);
    if (UNAVAILABLE_CODES.has(primary) || FILE_FAILURE_CODES.has(code)) return StoreUnavailableError.of(error);
  }
  if (typeof message === 'string' && message.includes(CLOSED)) return StoreUnavailableError.of(error);
  return error;
}

type Call = (...args: never[]) => unknown;

/** `call` on `self`, its throw named by {@link sqliteFailure}. Synchronous, as the driver is: no promise, no tick. */
function named<F extends Call>(call: F, self: unknown): F {
  return function (...args: Parameters<F>) {
    try {
      return call.apply(self, args);
    } catch (error) {
      throw sqliteFailure(error);
    }
  } as F;
}

/** What the store runs a statement with: every way of running it names its failures. */
function namedStatement<S extends Database.Statement>(statement: S): S {
  for (const method of ['run', 'get', 'all', 'iterate'] as const) {
    Object.defineProperty(statement, method, { value: named(statement[method] as Call, statement), configurable: true });
  }
  return statement;
}

/**
 * Makes `db` throw the port's errors where better-sqlite3 throws its own: its statements (prepared from it), its
 * transactions (BEGIN IMMEDIATE on a locked file), `pragma` and `exec`. The store's boundary, at the driver itself
 * and synchronous like it, so a failing call costs nothing more and a succeeding one keeps its timing.
 */
export function nameFailuresOf(db: Database.Database): Database.Database {
  const { prepare, transaction, pragma, exec } = db;
  Object.defineProperties(db, {
    prepare: { value: named((source: string) => namedStatement(prepare.call(db, source)), db), configurable: true },
    transaction: {
      value: (fn: (...args: never[]) => unknown) => {
        const tx = transaction.call(db, fn);
        return Object.assign(named(tx, undefined), {
          default: named(tx.default, undefined),
          deferred: named(tx.deferred, undefined),
          immediate: named(tx.immediate, undefined),
          exclusive: named(tx.exclusive, undefined),
        });
      },
      configurable: true,
    },
    pragma: { value: named(pragma, db), configurable: true },
    exec: { value: named(exec, db), configurable: true },
  });
  return db;
}
