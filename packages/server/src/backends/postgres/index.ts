export { PostgresStore } from './postgres-store.js';
export { PostgresBlobStore } from './postgres-blob-store.js';
export { openPostgresStore, parsePostgresStoreUrl } from './open-postgres-store.js';
export type { OpenPostgresStoreOptions } from './open-postgres-store.js';
export { DEFAULT_SCHEMA, checkSchemaName, dueChannel } from './connection.js';
export type { PostgresStoreOptions } from './connection.js';
export { PostgresUnavailableError } from './errors.js';
