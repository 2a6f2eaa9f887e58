import type { EnqueueRequest } from '../service/api-types.js';

/**
 * One call a {@link HandoffSpool} keeps until the retryd service takes it: the enqueue request exactly as it will be
 * sent (credentials already stripped or turned into `{{secret:NAME}}` references, its `idempotencyKey` set). Plain
 * data: it is what a {@link SpoolStorage} stores.
 */
export interface SpoolEntry {
  /** Its place in the spool: entries are forwarded in `seq` order. Unique in one spool, never reused. */
  seq: number;
  /** The body of `POST /retry-tasks`, with its `idempotencyKey`. */
  request: EnqueueRequest & { idempotencyKey: string };
  /** When it was spooled, in epoch ms. */
  spooledAt: number;
  /** What it counts against `maxBytes`: the UTF-8 length of its request as JSON. */
  bytes: number;
}

/**
 * An entry the service refused in a way no retry will change (a 400 naming a field, a 422 for a key already used by
 * another request, a 413): set aside so that it no longer blocks the ones behind it, and kept, with the service's
 * answer, until {@link HandoffSpool.discardDead} forgets it.
 */
export interface DeadSpoolEntry extends SpoolEntry {
  /** When it was set aside, in epoch ms. */
  deadAt: number;
  /** The HTTP status the service answered. */
  status: number;
  /** The problem's code, e.g. `VALIDATION_FAILED`, `IDEMPOTENCY_KEY_REUSED`. */
  code: string;
  /** The problem's detail: the field and the rule. */
  detail: string;
}

/** What a spool's storage holds when it is opened: the waiting entries and those set aside, each in `seq` order. */
export interface SpoolContents {
  entries: SpoolEntry[];
  dead: DeadSpoolEntry[];
}

/**
 * Where a {@link HandoffSpool} keeps its entries so that they outlive the process or the page: a file-backed journal
 * in Node (`fileSpoolStorage` from `@retryd/client/file-spool`), IndexedDB in a browser (`indexedDbSpoolStorage` from
 * `@retryd/client/indexeddb`). Every write is durable (fsynced, or a strict IndexedDB transaction) before its promise
 * resolves: a spooled call is on disk when the caller is told so.
 *
 * Not in it on purpose: reading one entry, updating one in place, or any order but `seq`'s; the spool keeps what it
 * needs in memory and the storage only has to replay it.
 */
export interface SpoolStorage {
  /** Everything stored, for a spool that starts (the first call; a storage is opened once). */
  load(): Promise<SpoolContents>;
  /** Stores a new entry. */
  append(entry: SpoolEntry): Promise<void>;
  /** Forgets an entry the service took. */
  remove(seq: number): Promise<void>;
  /** Moves an entry aside (it is no longer waiting). */
  setAside(dead: DeadSpoolEntry): Promise<void>;
  /** Forgets an entry set aside. */
  discardDead(seq: number): Promise<void>;
  /** Releases the storage (a file handle and its lock, a database connection). */
  close(): Promise<void>;
}
