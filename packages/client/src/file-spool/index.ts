/**
 * `@retryd/client/file-spool`: keeps a `HandoffSpool`'s calls in a file-backed journal ({@link fileSpoolStorage}), for
 * Node. Only this entry point loads `node:fs`.
 *
 * @packageDocumentation
 */
export { fileSpoolStorage, type FileSpoolStorageOptions } from './file-spool-storage.js';
export { SpoolJournalError, SpoolLockedError } from './spool-file-errors.js';
