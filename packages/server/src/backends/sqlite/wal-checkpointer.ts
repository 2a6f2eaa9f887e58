import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Database } from 'better-sqlite3';

/** What one round of checkpoints did, as the worker reports it. */
export interface CheckpointRound {
  /** `PRAGMA wal_checkpoint(PASSIVE)` runs in the round (more than one while the WAL kept growing meanwhile). */
  passes: number;
  /** Frames in the WAL, and frames copied into the database file, after the round's last pass. */
  log: number;
  checkpointed: number;
}

/** Options of {@link WalCheckpointer.open}. */
export interface WalCheckpointerOptions {
  /** How often a round of checkpoints runs, in ms. */
  intervalMs: number;
  /**
   * WAL file size, in bytes, from which the worker is started. Default {@link WORKER_START_BYTES}: a store that never
   * writes that much (a test's, a CLI's) never starts a thread.
   */
  startAtBytes?: number;
  /** Told of a failed round; the checkpointer then stops, and the connection's own automatic checkpoint takes over. */
  onError: (error: unknown) => void;
  /** Called once it has stopped after a failure, so the connection can checkpoint on its commits again. */
  onStopped: () => void;
}

/** The WAL file size from which the worker starts, by default: 1 MiB. */
export const WORKER_START_BYTES = 1024 * 1024;

/** Passes of one round at most: each copies what the main connection wrote while the one before ran. */
const MAX_PASSES = 4;

// The worker, as source: a file beside this one would be a `.ts` under the tests (which run the sources) and a `.js`
// in the build. It loads the driver the store uses, from the path resolved here.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const failed = (error) => ({ error: { message: String(error && error.message), code: error && error.code } });
let db;
try {
  const Database = require(workerData.driver);
  db = new Database(workerData.path, { fileMustExist: true });
  // With synchronous = FULL a checkpoint fsyncs the WAL before it copies frames, and the database file before it
  // marks them copied: a writer starts the WAL over only frames whose copies are on disk.
  db.pragma('synchronous = FULL');
} catch (error) {
  parentPort.postMessage(failed(error));
}
parentPort.on('message', (message) => {
  if (message === 'close') {
    if (db !== undefined) db.close();
    parentPort.close();
    return;
  }
  if (db === undefined) return;
  try {
    let passes = 0;
    let last;
    for (;;) {
      const [pass] = db.pragma('wal_checkpoint(PASSIVE)');
      passes += 1;
      // Caught up when a pass found no frame the pass before had not seen (or the WAL started over meanwhile); the
      // main connection's next transaction then starts the WAL over from its beginning.
      const caughtUp = last !== undefined && pass.log <= last.log;
      last = pass;
      if (caughtUp || pass.busy !== 0 || passes >= workerData.maxPasses) break;
    }
    parentPort.postMessage({ passes, log: last.log, checkpointed: last.checkpointed });
  } catch (error) {
    parentPort.postMessage(failed(error));
  }
});
`;

/**
 * Checkpoints a WAL-mode SQLite file from a worker thread, so that copying the WAL back into the database file and
 * the two fsyncs around it never hold the store's event loop.
 *
 * SQLite's automatic checkpoint runs inside the commit that takes the WAL past `wal_autocheckpoint`: with the default
 * of 4,000 pages, W4's load (2,000 tasks a second) made one about every second, each a stall of the event loop of
 * several ms that the tasks arriving meanwhile waited behind. Here a second connection, on its own thread, runs
 * `PRAGMA wal_checkpoint(PASSIVE)` every `intervalMs`; a passive checkpoint takes no lock that the store's reads and
 * writes wait for. Each round repeats it (up to {@link MAX_PASSES}) while the WAL grew during the pass before, so that
 * the WAL is caught up and the store's next transaction starts it over; the store keeps an automatic checkpoint
 * at a multiple of its usual size as a backstop (sqlite-store.ts), which only a WAL the worker falls behind reaches.
 *
 * The worker starts once the WAL file reaches `startAtBytes`. It does not keep the process alive.
 */
export class WalCheckpointer {
  readonly #path: string;
  readonly #options: WalCheckpointerOptions;
  readonly #timer: ReturnType<typeof setInterval>;
  #worker: Worker | undefined;
  #exited: Promise<void> | undefined;
  #inRound = false;
  #stopped = false;
  #rounds = 0;
  #last: CheckpointRound | undefined;

  private constructor(path: string, options: WalCheckpointerOptions) {
    this.#path = path;
    this.#options = options;
    this.#timer = setInterval(() => this.#tick(), options.intervalMs);
    this.#timer.unref();
  }

  /**
   * For a connection to a file in WAL mode; undefined for any other (`:memory:`, a temporary database, another
   * journal mode).
   */
  static open(db: Database, options: WalCheckpointerOptions): WalCheckpointer | undefined {
    if (db.memory || db.name === '' || String(db.pragma('journal_mode', { simple: true })).toLowerCase() !== 'wal') return undefined;
    return new WalCheckpointer(db.name, options);
  }

  /** Rounds of checkpoints run so far, and the last one's figures (for tests and diagnostics). */
  get rounds(): { count: number; last: CheckpointRound | undefined } {
    return { count: this.#rounds, last: this.#last };
  }

  /** Stops the timer and the worker, and waits until the worker's connection is closed. Idempotent. */
  async close(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    // A worker that crashed takes no message (and has exited already).
    this.#worker?.postMessage('close');
    this.#worker = undefined;
    await this.#exited;
  }

  #tick(): void {
    if (this.#stopped || this.#inRound) return;
    if (this.#worker === undefined) {
      if (walBytes(this.#path) < (this.#options.startAtBytes ?? WORKER_START_BYTES)) return;
      this.#worker = this.#startWorker();
    }
    this.#inRound = true;
    this.#worker.postMessage('round');
  }

  #startWorker(): Worker {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path: this.#path, driver, maxPasses: MAX_PASSES } });
    worker.unref();
    this.#exited = new Promise((resolve) => worker.once('exit', () => resolve()));
    worker.on('message', (message: CheckpointRound | { error: { message: string; code?: string } }) => {
      this.#inRound = false;
      if ('error' in message) {
        this.#fail(Object.assign(new Error(`SQLite checkpoint failed: ${message.error.message}`), { code: message.error.code }));
        return;
      }
      this.#rounds += 1;
      this.#last = message;
    });
    worker.on('error', (error) => this.#fail(error));
    return worker;
  }

  #fail(error: unknown): void {
    if (this.#stopped) return;
    this.#options.onError(error);
    void this.close().finally(() => this.#options.onStopped());
  }
}

/** The WAL file's size: the most the WAL held since the database was opened (SQLite reuses it from its start). */
function walBytes(path: string): number {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
}
