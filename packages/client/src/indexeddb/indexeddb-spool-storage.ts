import { entries, promisifyRequest, type UseStore } from 'idb-keyval';
import type { DeadSpoolEntry, SpoolEntry, SpoolStorage } from '../spool/spool-entry.js';

/** Options of {@link indexedDbSpoolStorage}. */
export interface IndexedDbSpoolStorageOptions {
  /** The IndexedDB database; one per spool. Default `retryd-spool`. */
  database?: string;
}

/** The object store of a spool's database: waiting entries under `['live', seq]`, those set aside under `['dead', seq]`. */
const STORE = 'entries';

/**
 * A {@link SpoolStorage} in the browser's IndexedDB: each change is a transaction with `durability: 'strict'` (the
 * browser flushes it to disk before it completes; the default lets it answer first), so a spooled call survives a
 * closed tab or a crashed browser once `spool` resolves. Setting an entry aside is one transaction. What it stores is
 * what `handoffFetch` hands over: credentials already dropped or turned into `{{secret:NAME}}` references, which the
 * retryd service resolves at each attempt, so no token is left in IndexedDB.
 *
 * One spool per database: two tabs opening the same one would both forward its entries (the service makes one task
 * of each all the same: they carry their idempotency keys).
 *
 * @example
 * ```ts
 * const spool = await HandoffSpool.open({ client, storage: indexedDbSpoolStorage() });
 * ```
 */
export function indexedDbSpoolStorage(options: IndexedDbSpoolStorageOptions = {}): SpoolStorage {
  const name = options.database ?? 'retryd-spool';
  let database: Promise<IDBDatabase> | undefined;
  const opened = (): Promise<IDBDatabase> => {
    if (database !== undefined) return database;
    const request = indexedDB.open(name);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE);
    return (database = promisifyRequest(request));
  };
  const store: UseStore = (mode, callback) => opened().then((db) => callback(db.transaction(STORE, mode, { durability: 'strict' }).objectStore(STORE)));
  const change = (apply: (objects: IDBObjectStore) => void): Promise<void> =>
    store('readwrite', (objects) => {
      apply(objects);
      return promisifyRequest(objects.transaction);
    });
  return {
    load: async () => {
      const stored = await entries<[string, number], SpoolEntry>(store);
      const bySeq = (a: SpoolEntry, b: SpoolEntry) => a.seq - b.seq;
      return {
        entries: stored.filter(([[kind]]) => kind === 'live').map(([, entry]) => entry).sort(bySeq),
        dead: stored.filter(([[kind]]) => kind === 'dead').map(([, entry]) => entry as DeadSpoolEntry).sort(bySeq),
      };
    },
    append: (entry) => change((objects) => objects.put(entry, ['live', entry.seq])),
    remove: (seq) => change((objects) => objects.delete(['live', seq])),
    setAside: (dead) =>
      change((objects) => {
        objects.delete(['live', dead.seq]);
        objects.put(dead, ['dead', dead.seq]);
      }),
    discardDead: (seq) => change((objects) => objects.delete(['dead', seq])),
    close: async () => {
      (await database)?.close();
      database = undefined;
    },
  };
}
