export { SqliteStore } from './sqlite-store.js';
export type { SqliteSettings, SqliteStoreOptions } from './connection.js';
export { DuplicateAttemptError, InvalidCursorError } from '../../store/store-errors.js';
