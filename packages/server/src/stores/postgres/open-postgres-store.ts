import { StoreUrlError } from '../../store/store-url-error.js';
import { DEFAULT_SCHEMA, checkSchemaName } from './connection.js';
import type { PostgresStoreOptions } from './connection.js';
import type { PostgresBlobStore } from './postgres-blob-store.js';
import { PostgresStore } from './postgres-store.js';

/** Options of {@link openPostgresStore}: those of the store, with the URL given apart. */
export type OpenPostgresStoreOptions = Omit<PostgresStoreOptions, 'connectionString'>;

const FORM = '`postgres://user[:password]@host[:port]/database[?schema=name]` (or `postgresql://…`)';

/**
 * Reads a `--store` PostgreSQL URL: the connection string pg receives (without `schema`, which pg does not know)
 * and the schema from `?schema=` (default `retryd`). Other parameters (`sslmode`, `options`, …) pass through.
 *
 * @throws StoreUrlError naming `--store` when the URL is not a PostgreSQL URL or its schema breaks the naming rule
 * @example
 * ```ts
 * parsePostgresStoreUrl('postgres://retryd@db/retryd?schema=jobs');
 * // { connectionString: 'postgres://retryd@db/retryd', schema: 'jobs' }
 * ```
 */
export function parsePostgresStoreUrl(url: string): { connectionString: string; schema: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new StoreUrlError(`Expected \`--store\` to be ${FORM}; got a value that is not a URL.`);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new StoreUrlError(`Expected \`--store\` to be ${FORM}; got the scheme ${JSON.stringify(parsed.protocol)}.`);
  }
  const schemas = parsed.searchParams.getAll('schema');
  if (schemas.length > 1) throw new StoreUrlError('Expected `--store` to give `?schema=` at most once.');
  const schema = schemas[0] ?? DEFAULT_SCHEMA;
  try {
    checkSchemaName(schema);
  } catch (error) {
    throw new StoreUrlError((error as Error).message);
  }
  if (schemas.length === 0) return { connectionString: url, schema };
  parsed.searchParams.delete('schema');
  return { connectionString: parsed.toString(), schema };
}

/**
 * Opens the PostgreSQL store a `--store` URL names, creates or migrates its schema (safe when several instances
 * start at once), and returns it with the blob store in the same schema. `options.schema`, when given, takes
 * precedence over the URL's `?schema=`. Nothing is left open when it rejects.
 *
 * @example
 * ```ts
 * const { store, blobs } = await openPostgresStore('postgres://retryd@127.0.0.1:5432/retryd?schema=retryd');
 * ```
 */
export async function openPostgresStore(
  url: string,
  options: OpenPostgresStoreOptions = {},
): Promise<{ store: PostgresStore; blobs: PostgresBlobStore }> {
  const { connectionString, schema } = parsePostgresStoreUrl(url);
  const store = new PostgresStore({ ...options, connectionString, schema: options.schema ?? schema });
  try {
    await store.init();
  } catch (error) {
    await store.close();
    throw error;
  }
  return { store, blobs: store.blobs };
}
