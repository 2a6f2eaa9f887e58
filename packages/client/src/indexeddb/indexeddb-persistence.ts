import { createStore, del, set, values } from 'idb-keyval';
import type { QueuedCall, QueuePersistence } from '../queue/queued-call.js';

/** Options of {@link indexedDbPersistence}. */
export interface IndexedDbPersistenceOptions {
  /** The IndexedDB database. Default `retryd-queue`. */
  database?: string;
  /** Its object store; one per queue. Default `calls`. */
  store?: string;
}

/**
 * A {@link QueuePersistence} in the browser's IndexedDB (through `idb-keyval`), so that a `RetryQueue`'s calls survive
 * a reload or a closed tab: each call is a record under its id.
 *
 * @example
 * ```ts
 * const queue = await RetryQueue.open({ persistence: indexedDbPersistence({ store: 'analytics' }) });
 * ```
 */
export function indexedDbPersistence(options: IndexedDbPersistenceOptions = {}): QueuePersistence {
  const store = createStore(options.database ?? 'retryd-queue', options.store ?? 'calls');
  return {
    load: () => values<QueuedCall>(store),
    save: (call) => set(call.id, call, store),
    remove: (id) => del(id, store),
  };
}
