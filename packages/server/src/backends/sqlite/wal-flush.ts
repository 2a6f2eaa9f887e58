import { closeSync, fdatasync, openSync } from 'node:fs';
import type { Database } from 'better-sqlite3';
import { readSettings } from './connection.js';

/**
 * A commit that does not wait for the disk, and the wait for it afterwards, off the event loop: how the SQLite store
 * answers `Store.insertTasksVisible` when every commit is otherwise fsynced (`synchronous = FULL`).
 *
 * {@link commitUnsynced} runs a write transaction with `synchronous = OFF`: its frames reach the WAL file (the
 * operating system's page cache) and other connections see them, but nothing waits for the disk. {@link flush} then
 * `fdatasync`s the WAL file on libuv's thread pool: once it resolves, every frame written before it began is on disk,
 * which is what `synchronous = FULL` would have waited for inside the commit. A hand-off's attempt so starts while the
 * disk works, and the event loop is not blocked by that wait.
 *
 * The automatic checkpoint is off while such a commit runs: a checkpoint run by it would copy frames into the
 * database file without syncing either file, and a later commit could then reuse the WAL from its start over frames
 * whose copies are not yet on disk. Checkpoints thus run only in commits made with `synchronous = FULL`, which sync
 * the WAL before copying from it (and so also make this commit's frames durable).
 *
 * Only a file database in WAL mode has a WAL to sync; {@link open} answers undefined otherwise, and for
 * `synchronous = NORMAL`, where no commit waits for the disk anyway.
 */
export class WalFlush {
  readonly #db: Database;
  readonly #fd: number;
  #checkpointPages: number;
  /** The fdatasync running, and the one that waits to start after it (which covers every commit made meanwhile). */
  #running: Promise<void> | undefined;
  #next: Promise<void> | undefined;
  #closed = false;
  #closing: Promise<void> | undefined;

  private constructor(db: Database, fd: number, checkpointPages: number) {
    this.#db = db;
    this.#fd = fd;
    this.#checkpointPages = checkpointPages;
  }

  /**
   * For a connection that fsyncs every commit (`synchronous = FULL`) to a file in WAL mode; undefined for any other
   * (`:memory:`, another journal mode, `NORMAL`), or when the WAL file cannot be opened.
   */
  static open(db: Database): WalFlush | undefined {
    if (db.memory) return undefined;
    const { journalMode, synchronous } = readSettings(db);
    if (journalMode.toLowerCase() !== 'wal' || synchronous !== 'FULL') return undefined;
    const checkpointPages = Number(db.pragma('wal_autocheckpoint', { simple: true }));
    let fd: number;
    try {
      // The WAL exists once the connection has written in WAL mode (the store's migrations have); SQLite keeps the
      // same file while any connection is open, reusing it from its start after a checkpoint. A temporary database
      // (an empty path) has none to open.
      fd = openSync(`${db.name}-wal`, 'r+');
    } catch {
      return undefined;
    }
    return new WalFlush(db, fd, checkpointPages);
  }

  /** Sets the automatic checkpoint each unsynced commit restores (the store's, once its checkpointer has stopped). */
  setCheckpointPages(pages: number): void {
    this.#checkpointPages = pages;
  }

  /** Runs `write` (one transaction) without waiting for the disk; {@link flush} then makes it durable. */
  commitUnsynced<T>(write: () => T): T {
    // Run, not prepared once: SQLite applies `PRAGMA synchronous` when the statement is compiled, not when it runs.
    this.#db.exec('PRAGMA wal_autocheckpoint = 0; PRAGMA synchronous = OFF');
    try {
      return write();
    } finally {
      this.#db.exec(`PRAGMA synchronous = FULL; PRAGMA wal_autocheckpoint = ${this.#checkpointPages}`);
    }
  }

  /** Resolves once every commit made before the call is on disk; rejects when the fdatasync failed. */
  flush(): Promise<void> {
    if (this.#closed) return Promise.reject(new Error('The SQLite store is closed.'));
    if (this.#running === undefined) return this.#start();
    // One that has not started yet covers this call's commits too.
    this.#next ??= this.#running
      .catch(() => undefined)
      .then(() => {
        this.#next = undefined;
        return this.#start();
      });
    return this.#next;
  }

  /** Waits for the flushes asked for, then closes the WAL file's descriptor (before the connection closes). */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await (this.#next ?? this.#running)?.catch(() => undefined);
      this.#closed = true;
      closeSync(this.#fd);
    })();
    return this.#closing;
  }

  #start(): Promise<void> {
    const running = new Promise<void>((resolve, reject) => {
      fdatasync(this.#fd, (error) => (error === null ? resolve() : reject(error)));
    }).finally(() => {
      if (this.#running === running) this.#running = undefined;
    });
    this.#running = running;
    return running;
  }
}
