/**
 * `@retryd/client/indexeddb`: keeps a `RetryQueue`'s calls in the browser's IndexedDB ({@link indexedDbPersistence}).
 *
 * @packageDocumentation
 */
export { indexedDbPersistence, type IndexedDbPersistenceOptions } from './indexeddb-persistence.js';
