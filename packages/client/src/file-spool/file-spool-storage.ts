import { mkdir, open, readFile, rename, type FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { DeadSpoolEntry, SpoolContents, SpoolEntry, SpoolStorage } from '../spool/spool-entry.js';
import { journalLine, replayJournal, type JournalRecord } from './journal-records.js';
import { takeSpoolLock } from './spool-lock.js';

/** Options of {@link fileSpoolStorage}. */
export interface FileSpoolStorageOptions {
  /**
   * The spool's directory, made if missing (mode 0700): it holds `journal.ndjson` (mode 0600: request bodies are in it)
   * and `LOCK`. One spool, in one process, per directory; on a disk that outlives the process (not a tmpfs).
   */
  directory: string;
  /**
   * The journal is rewritten with only what it still needs once it is over this size and more than twice what it
   * needs. Default 1 MiB. (It is cut to nothing, whatever its size, each time nothing waits and nothing is set aside.)
   */
  compactAtBytes?: number;
}

const JOURNAL = 'journal.ndjson';

/** One record waiting to be written, and what to do once it is on disk. */
interface PendingWrite {
  line: string;
  applied: () => void;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * A {@link SpoolStorage} in a file-backed, append-only journal (`journal.ndjson` in `directory`): each change is a line
 * appended and fdatasynced before its promise resolves, so an entry survives a crash, a `kill -9` or a power cut once
 * `spool` resolves. Writes made while one is on its way are written and synced together (one fdatasync for all of
 * them). The journal is compacted as entries leave: cut to nothing when the spool is empty, rewritten (to a new file,
 * synced, renamed over the old one) when most of it is records of entries already forwarded. A new process opening the
 * same directory replays it; a torn last line (a write cut short) is dropped, as it was never acknowledged.
 *
 * @example
 * ```ts
 * const spool = await HandoffSpool.open({ client, storage: fileSpoolStorage({ directory: '/var/lib/orders/retryd-spool' }) });
 * ```
 */
export function fileSpoolStorage(options: FileSpoolStorageOptions): SpoolStorage {
  return new FileJournal(resolve(options.directory), options.compactAtBytes ?? 1024 * 1024);
}

class FileJournal implements SpoolStorage {
  readonly #path: string;
  #handle: FileHandle | undefined;
  #release: (() => Promise<void>) | undefined;
  /** Between a successful `load` and `close`. */
  #open = false;
  readonly #pending: PendingWrite[] = [];
  #flushing: Promise<void> | undefined;
  /** The journal's size in bytes. */
  #fileBytes = 0;
  /** The bytes of the lines still needed, by entry (`a12` the add of entry 12, `d12` its setting aside). */
  readonly #needed = new Map<string, number>();
  #neededBytes = 0;

  constructor(
    private readonly directory: string,
    private readonly compactAtBytes: number,
  ) {
    this.#path = join(directory, JOURNAL);
    if (!Number.isInteger(compactAtBytes) || compactAtBytes < 0) throw new RangeError(`compactAtBytes must be an integer >= 0, got ${String(compactAtBytes)}`);
  }

  async load(): Promise<SpoolContents> {
    if (this.#release !== undefined) throw new Error(`the spool journal ${this.#path} is loaded already: a storage is opened once`);
    await mkdir(this.directory, { recursive: true, mode: 0o700 });
    this.#release = await takeSpoolLock(this.directory);
    try {
      const bytes = await readFile(this.#path).catch((error: unknown) => {
        if ((error as { code?: string }).code === 'ENOENT') return Buffer.alloc(0);
        throw error;
      });
      // A line feed byte is never part of a multi-byte UTF-8 character, so this finds the last whole line.
      const whole = bytes.lastIndexOf(0x0a) + 1;
      const contents = replayJournal(bytes.subarray(0, whole).toString('utf8'), this.#path);
      const handle = await this.#appendHandle();
      if (whole < bytes.length) {
        await handle.truncate(whole);
        await handle.datasync();
      }
      this.#fileBytes = whole;
      for (const entry of contents.entries) this.#need(`a${entry.seq}`, journalLine({ op: 'add', entry }));
      for (const entry of contents.dead) this.#need(`d${entry.seq}`, journalLine({ op: 'dead', entry }));
      this.#open = true;
      return contents;
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  append(entry: SpoolEntry): Promise<void> {
    const line = journalLine({ op: 'add', entry });
    return this.#write({ op: 'add', entry }, line, () => this.#need(`a${entry.seq}`, line));
  }

  remove(seq: number): Promise<void> {
    return this.#write({ op: 'done', seq }, undefined, () => this.#forget(`a${seq}`));
  }

  setAside(entry: DeadSpoolEntry): Promise<void> {
    const line = journalLine({ op: 'dead', entry });
    return this.#write({ op: 'dead', entry }, line, () => {
      this.#forget(`a${entry.seq}`);
      this.#need(`d${entry.seq}`, line);
    });
  }

  discardDead(seq: number): Promise<void> {
    return this.#write({ op: 'drop', seq }, undefined, () => this.#forget(`d${seq}`));
  }

  async close(): Promise<void> {
    this.#open = false;
    while (this.#flushing !== undefined) await this.#flushing;
    await this.#handle?.close();
    this.#handle = undefined;
    await this.#release?.();
    this.#release = undefined;
  }

  async #appendHandle(): Promise<FileHandle> {
    return (this.#handle ??= await open(this.#path, 'a', 0o600));
  }

  #need(key: string, line: string): void {
    const bytes = Buffer.byteLength(line);
    this.#needed.set(key, bytes);
    this.#neededBytes += bytes;
  }

  #forget(key: string): void {
    this.#neededBytes -= this.#needed.get(key) ?? 0;
    this.#needed.delete(key);
  }

  #write(record: JournalRecord, line: string | undefined, applied: () => void): Promise<void> {
    if (!this.#open) return Promise.reject(new Error(`the spool journal ${this.#path} is not open: load it first, and not after close`));
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({ line: line ?? journalLine(record), applied, resolve, reject });
      this.#startFlush();
    });
  }

  #startFlush(): void {
    this.#flushing ??= this.#flush().finally(() => {
      this.#flushing = undefined;
      // A write that came after the loop saw the queue empty, but before this ran, found a flush under way.
      if (this.#pending.length > 0) this.#startFlush();
    });
  }

  /** Writes what waits, all of it with one fdatasync, until nothing waits; compacts after a batch when it is time. */
  async #flush(): Promise<void> {
    while (this.#pending.length > 0) {
      const batch = this.#pending.splice(0);
      const text = batch.map((write) => write.line).join('');
      try {
        const handle = await this.#appendHandle();
        await handle.appendFile(text);
        await handle.datasync();
        this.#fileBytes += Buffer.byteLength(text);
      } catch (error) {
        await this.#cutTo(this.#fileBytes);
        for (const write of batch) write.reject(error);
        continue;
      }
      for (const write of batch) write.applied();
      // Before answering, so that a storage that says an entry is gone has its journal compacted already.
      await this.#compactIfDue().catch(() => {
        // The journal is whole as it was: compacting is tried again after the next write.
      });
      for (const write of batch) write.resolve();
    }
  }

  /**
   * Cuts off what a failed write left (a partial line, which would make the next record unreadable). If even that
   * fails, the handle is dropped and the next write reopens the file; the partial line is then a torn line in the
   * middle, which a restart refuses, naming it, rather than guessing.
   */
  async #cutTo(bytes: number): Promise<void> {
    try {
      await this.#handle?.truncate(bytes);
    } catch {
      await this.#handle?.close().catch(() => undefined);
      this.#handle = undefined;
    }
  }

  async #compactIfDue(): Promise<void> {
    if (this.#fileBytes === 0) return;
    if (this.#neededBytes === 0) {
      const handle = await this.#appendHandle();
      await handle.truncate(0);
      await handle.datasync();
      this.#fileBytes = 0;
      return;
    }
    if (this.#fileBytes < this.compactAtBytes || this.#fileBytes <= 2 * this.#neededBytes) return;
    await this.#rewrite();
  }

  /** The journal as the lines still needed, written aside, synced and renamed over it (atomic: a crash leaves one or the other). */
  async #rewrite(): Promise<void> {
    const current = replayJournal((await readFile(this.#path)).toString('utf8'), this.#path);
    const lines = [
      ...current.entries.map((entry) => journalLine({ op: 'add', entry })),
      ...current.dead.map((entry) => journalLine({ op: 'dead', entry })),
    ].join('');
    const next = `${this.#path}.compact`;
    const handle = await open(next, 'w', 0o600);
    try {
      await handle.writeFile(lines);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(next, this.#path);
    // The old handle writes to the file that was renamed over: every later write must go to the new one.
    await this.#handle?.close().catch(() => undefined);
    this.#handle = undefined;
    this.#fileBytes = Buffer.byteLength(lines);
    const directory = await open(this.directory, 'r');
    try {
      await directory.sync();
    } finally {
      await directory.close();
    }
  }
}
