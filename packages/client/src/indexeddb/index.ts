/**
 * `@retryd/client/indexeddb`: keeps a `RetryQueue`'s calls ({@link indexedDbPersistence}) or a `HandoffSpool`'s
 * ({@link indexedDbSpoolStorage}) in the browser's IndexedDB.
 *
 * @packageDocumentation
 */
export { indexedDbPersistence, type IndexedDbPersistenceOptions } from './indexeddb-persistence.js';
export { indexedDbSpoolStorage, type IndexedDbSpoolStorageOptions } from './indexeddb-spool-storage.js';
