import Database from 'better-sqlite3';
import { nameFailuresOf } from './errors.js';

/** Options of {@link SqliteStore}. */
export interface SqliteStoreOptions {
  /**
   * How hard each commit waits for the disk. Default `'FULL'`: with WAL, every commit fsyncs the log, so an
   * acknowledged write survives `kill -9` and power loss.
   *
   * `'NORMAL'` (opt-in) fsyncs only at checkpoints. It is still safe against a process crash (`kill -9`,
   * out-of-memory): the log is in the OS page cache. On power loss or an OS crash, the last transactions
   * committed since the previous checkpoint (up to `wal_autocheckpoint`, 1000 pages, i.e. about 4 MiB of
   * changes) may roll back: acknowledged enqueues and recorded attempts among them are lost, and a lost
   * attempt is made again. The database itself stays consistent.
   */
  synchronous?: 'FULL' | 'NORMAL';
  /** How long a write waits for another process's write lock before failing, in ms. Default 5000. */
  busyTimeoutMs?: number;
  /** Page cache per connection, in KiB. Default {@link DEFAULT_SQLITE_CACHE_MIB} MiB. */
  cacheSizeKiB?: number;
  /**
   * Pages the WAL may grow to before a commit copies them back into the database file (`wal_autocheckpoint`).
   * Default 4000 (16 MiB, with 4 KiB pages). See {@link DEFAULT_WAL_AUTOCHECKPOINT_PAGES}.
   */
  walAutocheckpointPages?: number;
  /**
   * How often a worker thread checkpoints the WAL of a file database, in ms (wal-checkpointer.ts). Default
   * {@link DEFAULT_CHECKPOINT_INTERVAL_MS}. The connection's own automatic checkpoint, which runs inside a commit and
   * so on the event loop, then waits until the WAL reaches {@link CHECKPOINT_BACKSTOP_FACTOR} times
   * `walAutocheckpointPages`, which only a WAL the worker cannot keep up with does. `0`: no worker; every checkpoint
   * runs in the commit that takes the WAL past `walAutocheckpointPages`.
   */
  checkpointIntervalMs?: number;
  /** Told of a failure off the store's calls (a checkpoint on the worker thread). Default: ignored. */
  onError?: (error: unknown) => void;
}

/**
 * The default `wal_autocheckpoint`, in pages: 4000 (about 16 MiB), four times SQLite's own 1000.
 *
 * Every claim and completion dirties pages all over the task table and its indexes, and a checkpoint writes each
 * distinct page once, however often it changed since the last one: fewer, larger checkpoints write the hot pages
 * (due, lease and in-flight indexes) far fewer times, and fsync the database file less often. The WAL still stays
 * bounded: a checkpoint is attempted at the first commit past this size and the file is then reused from its start
 * (its size stays near this many pages unless a reader pins it). Larger values save little more and make the one
 * commit that runs the checkpoint slower (it copies up to this many pages before it returns).
 */
export const DEFAULT_WAL_AUTOCHECKPOINT_PAGES = 4_000;

/**
 * How often the checkpointer's worker copies the WAL into the database file, in ms: 1,000. Under W4's load (2,000
 * tasks a second) the service wrote about 18 MB a second to disk, the WAL and the checkpoints' copies together
 * (`/proc/<pid>/io`): about what takes the WAL past {@link DEFAULT_WAL_AUTOCHECKPOINT_PAGES} in a second, so a round
 * writes each hot page about as often as the automatic checkpoint did.
 */
export const DEFAULT_CHECKPOINT_INTERVAL_MS = 1_000;

/**
 * With the checkpointer, the connection's own automatic checkpoint waits for this many times `walAutocheckpointPages`:
 * a backstop that keeps the WAL bounded if the worker falls behind or has failed.
 */
export const CHECKPOINT_BACKSTOP_FACTOR = 4;

/**
 * The default page cache, in MiB: 16 (4,096 pages of 4 KiB).
 *
 * A steady load's working set fits in it: the queues, the head of the due index, the rows claimed and completed in
 * the last seconds and the newest pages of each index (W4's 2,000 tasks a second ran as fast and with the same CPU
 * as with 32 MiB; at 8 MiB it took 1.13 to 1.17× the CPU per attempt). What a larger cache adds is more of a large
 * backlog's idempotency-key index, whose pages an insert touches at random: a million pending tasks make about 27 MiB
 * of it. Kept in the cache, those pages cost the process their size in resident memory; left out, an insert reads
 * its page from the operating system's file cache instead (W2's enqueue rate stayed within its runs' spread).
 * `--sqlite-cache` sets it.
 */
export const DEFAULT_SQLITE_CACHE_MIB = 16;

/** The settings a connection actually runs with, read back from SQLite. */
export interface SqliteSettings {
  journalMode: string;
  synchronous: 'OFF' | 'NORMAL' | 'FULL' | 'EXTRA';
  busyTimeoutMs: number;
  foreignKeys: boolean;
  /** The page cache's size, in KiB. */
  cacheSizeKiB: number;
  /**
   * The file's `auto_vacuum` mode: `INCREMENTAL` for a database this version created (the purge then gives freed pages
   * back to the file system), whatever it was created with otherwise (see {@link openConnection}).
   */
  autoVacuum: 'NONE' | 'FULL' | 'INCREMENTAL';
  /**
   * The connection's automatic checkpoint, in WAL pages (`wal_autocheckpoint`; 0: none): with the checkpointer
   * (wal-checkpointer.ts), its backstop.
   */
  walAutocheckpointPages: number;
}

const SYNCHRONOUS_NAMES = ['OFF', 'NORMAL', 'FULL', 'EXTRA'] as const;
/** `PRAGMA auto_vacuum`'s values, by number. */
export const AUTO_VACUUM_NAMES = ['NONE', 'FULL', 'INCREMENTAL'] as const;

/**
 * Opens (creating if needed) a database file with the store's settings. Closes it again if one fails.
 *
 * A new database (no page yet) is made `auto_vacuum = INCREMENTAL`, so that the retention purge can give the pages it
 * frees back to the file system (`PRAGMA incremental_vacuum`, purge-expired.ts); SQLite otherwise keeps them in the
 * file for new rows and never shrinks it. The mode is fixed when the file's first page is written (switching WAL on
 * writes it, hence first), so an existing database keeps the mode it has: SQLite would switch it only by a `VACUUM`,
 * which rewrites the whole file under an exclusive lock, and the store never runs one by itself (see
 * 011-retention.sql for converting one by hand). The mode's cost: a pointer map (5 bytes per page of the file, one
 * map page per 819 pages of 4 KiB), which SQLite writes when a page is allocated or a b-tree page gets a new parent,
 * not per row (on W1's store work, `bench/service/cycle-cost.mjs`, about 2 % more CPU per attempt, within the rounds'
 * spread); freed pages are moved only when the purge asks.
 */
export function openConnection(path: string, options: SqliteStoreOptions): Database.Database {
  const busyTimeoutMs = Math.trunc(options.busyTimeoutMs ?? 5000);
  const db = new Database(path, { timeout: busyTimeoutMs });
  try {
    if (Number(db.pragma('page_count', { simple: true })) === 0) db.pragma('auto_vacuum = INCREMENTAL');
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.synchronous === 'NORMAL' ? 'NORMAL' : 'FULL'}`);
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    db.pragma('foreign_keys = ON');
    db.pragma(`cache_size = -${Math.trunc(options.cacheSizeKiB ?? DEFAULT_SQLITE_CACHE_MIB * 1024)}`);
    db.pragma(`wal_autocheckpoint = ${Math.trunc(options.walAutocheckpointPages ?? DEFAULT_WAL_AUTOCHECKPOINT_PAGES)}`);
    // Bounds the ANALYZE that `PRAGMA optimize` may run at close, so closing a large store reads at most about 1,000 rows an index.
    db.pragma('analysis_limit = 1000');
  } catch (error) {
    db.close();
    throw error;
  }
  return nameFailuresOf(db);
}

/** Reads the settings back through PRAGMA: what SQLite runs with, not what was asked for. */
export function readSettings(db: Database.Database): SqliteSettings {
  const read = (name: string) => db.pragma(name, { simple: true });
  return {
    journalMode: String(read('journal_mode')),
    synchronous: SYNCHRONOUS_NAMES[Number(read('synchronous'))] ?? 'FULL',
    busyTimeoutMs: Number(read('busy_timeout')),
    foreignKeys: Number(read('foreign_keys')) === 1,
    // A negative cache_size is in KiB, a positive one in pages.
    cacheSizeKiB: cacheSizeKiB(Number(read('cache_size')), Number(read('page_size'))),
    autoVacuum: AUTO_VACUUM_NAMES[Number(read('auto_vacuum'))] ?? 'NONE',
    walAutocheckpointPages: Number(read('wal_autocheckpoint')),
  };
}

function cacheSizeKiB(cacheSize: number, pageSize: number): number {
  return cacheSize < 0 ? -cacheSize : (cacheSize * pageSize) / 1024;
}
