import { StoreUrlError } from '../../store/store-url-error.js';
import { DEFAULT_SCHEMA, checkSchemaName } from './connection.js';
import type { PostgresStoreOptions } from './connection.js';
import type { PostgresBlobStore } from './postgres-blob-store.js';
import { PostgresStore } from './postgres-store.js';

/** Options of {@link openPostgresStore}: those of the store, with the URL given apart. */
export type OpenPostgresStoreOptions = Omit<PostgresStoreOptions, 'connectionString'>;

const FORM = '`postgres://user[:password]@host[:port]/database[?schema=name]` (or `postgresql://…`)';

/** The parts of a `--store` PostgreSQL URL that are retryd's, not pg's. */
export interface PostgresStoreUrl {
  connectionString: string;
  schema: string;
  /** From `?vacuum_interval_ms=`, when given (see `PostgresStoreOptions.vacuumIntervalMs`). */
  vacuumIntervalMs?: number;
}

/**
 * Reads a `--store` PostgreSQL URL: the connection string pg receives (without retryd's own parameters, which pg
 * does not know), the schema from `?schema=` (default `retryd`) and, from `?vacuum_interval_ms=`, how often the
 * store vacuums its tasks table (0: never; leave it to autovacuum). Other parameters (`sslmode`, `options`, …) pass
 * through.
 *
 * @throws StoreUrlError naming `--store` when the URL is not a PostgreSQL URL or its schema breaks the naming rule
 * @example
 * ```ts
 * parsePostgresStoreUrl('postgres://retryd@db/retryd?schema=jobs');
 * // { connectionString: 'postgres://retryd@db/retryd', schema: 'jobs' }
 * ```
 */
export function parsePostgresStoreUrl(url: string): PostgresStoreUrl {
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
  const vacuum = parsed.searchParams.getAll('vacuum_interval_ms');
  if (vacuum.length > 1) throw new StoreUrlError('Expected `--store` to give `?vacuum_interval_ms=` at most once.');
  const [rawVacuum] = vacuum;
  if (rawVacuum !== undefined && !(/^\d+$/.test(rawVacuum) && Number.isSafeInteger(Number(rawVacuum)))) {
    throw new StoreUrlError(
      `Expected \`--store\` (\`?vacuum_interval_ms=\`) to be a whole number of milliseconds, 0 to turn the vacuum off; got ${JSON.stringify(rawVacuum)}.`,
    );
  }
  const extra = rawVacuum === undefined ? {} : { vacuumIntervalMs: Number(rawVacuum) };
  if (schemas.length === 0 && rawVacuum === undefined) return { connectionString: url, schema };
  parsed.searchParams.delete('schema');
  parsed.searchParams.delete('vacuum_interval_ms');
  return { connectionString: parsed.toString(), schema, ...extra };
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
  // What the URL sets (the vacuum interval) yields to an explicit option; the connection string is the URL's.
  const { connectionString, schema, ...fromUrl } = parsePostgresStoreUrl(url);
  const store = new PostgresStore({ ...fromUrl, ...options, connectionString, schema: options.schema ?? schema });
  try {
    await store.init();
  } catch (error) {
    await store.close();
    throw error;
  }
  return { store, blobs: store.blobs };
}
