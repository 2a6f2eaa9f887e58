import pg from 'pg';
import { JsonCache } from '../../store/json-cache.js';

/** The schema a store uses when neither the URL (`?schema=`) nor the options name one. */
export const DEFAULT_SCHEMA = 'retryd';

/** Options of {@link PostgresStore}. */
export interface PostgresStoreOptions {
  /** A `postgres://` or `postgresql://` URL as `pg` reads it, e.g. `postgres://user@host:5432/db`. */
  connectionString: string;
  /**
   * The schema holding the store's tables, created at `init()` if missing. Default `retryd`. Several stores
   * (or test runs) on one database stay apart by schema. See {@link checkSchemaName} for the rules.
   */
  schema?: string;
  /** Most connections in the pool. Default 10. The LISTEN connection of `onDue` is one more. */
  poolSize?: number;
  /**
   * How long a call waits for a connection (a new one, or a free one from a full pool) before it rejects, in ms.
   * Default 5000: while the server is unreachable, calls fail within this time instead of queueing.
   */
  connectTimeoutMs?: number;
  /**
   * `synchronous_commit` of every connection. Default `'on'`: a call resolves only once its commit is flushed
   * to the write-ahead log on disk (with `fsync = on` on the server), so an acknowledged enqueue or recorded
   * attempt survives a crash of PostgreSQL or of its machine.
   *
   * `'off'` (opt-in) acknowledges before the flush. The database stays consistent, but a crash of the
   * PostgreSQL server (not of retryd) loses the transactions of the last moments — up to three times
   * `wal_writer_delay`, 600 ms by default: acknowledged enqueues among them are gone and their attempts are
   * made again.
   */
  synchronousCommit?: 'on' | 'off';
  /**
   * How often the store vacuums its `tasks` table while tasks change, in ms (see `TaskVacuum`). Default 5000;
   * 0 leaves it to autovacuum (then set `autovacuum_naptime` to a few seconds on the server).
   */
  vacuumIntervalMs?: number;
  /** `application_name` shown in `pg_stat_activity`. Default `retryd`. */
  applicationName?: string;
  /**
   * Errors that belong to no call: an idle pooled connection lost, the LISTEN connection failing or
   * reconnecting. Default: ignored (they are also surfaced by the next call that needs the server).
   */
  onError?: (error: Error) => void;
}

/** A schema name that is safe unquoted in SQL and in a NOTIFY channel (`retryd_due_<schema>`, at most 63 bytes). */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,47}$/;

/**
 * Checks a schema name: 1 to 48 lowercase letters, digits or `_`, not starting with a digit, and not starting with
 * `pg_` (reserved for the system). Returns it unchanged.
 *
 * @param source - where the name came from, for the message: `` `--store` (`?schema=`) `` by default
 * @throws TypeError naming the source and the rule
 */
export function checkSchemaName(schema: string, source = '`--store` (`?schema=`)'): string {
  if (!SCHEMA_NAME.test(schema) || schema.startsWith('pg_')) {
    throw new TypeError(
      `Expected the schema of ${source} to be 1 to 48 lowercase letters, digits or '_', not starting with a digit ` +
        `or with 'pg_'; got ${JSON.stringify(schema)}.`,
    );
  }
  return schema;
}

/** The NOTIFY channel on which a schema's stores announce newly due tasks. */
export function dueChannel(schema: string): string {
  return `retryd_due_${schema}`;
}

// int8 (bigint) columns — version, fencing_token, count(*) — as numbers instead of pg's default strings:
// they count changes and rows, far below 2^53. Set per pool, not on pg's global parsers.
/** The type parsers of every statement of the store: a pool's, or per query on a connection the store does not own. */
export const storeTypes = new pg.TypeOverrides();
storeTypes.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));
// json columns (a task's headers, inline policy and callback; a named policy's callback) through one cache of frozen
// values, as the SQLite store reads them: the tasks of a claim usually carry the same headers and the same inline
// policy, and each distinct text is parsed once instead of once per row (W1's store work with its policy inline cost
// about 5 µs more per attempt on PostgreSQL than with a named one, parsed anew for every row; on SQLite, nothing).
const jsonColumns = new JsonCache();
storeTypes.setTypeParser(pg.types.builtins.JSON, (value: string) => jsonColumns.parse(value));

/**
 * The settings of every connection of a store (pooled and LISTEN): its schema as the search path, READ
 * COMMITTED whatever the server's default (the claim's SKIP LOCKED and the migration lock rely on it), the chosen
 * `synchronous_commit`, and no bitmap scans (see below).
 */
export function clientConfig(options: PostgresStoreOptions, schema: string): pg.ClientConfig {
  const { connectionString, userOptions } = withoutOptionsParameter(options.connectionString);
  const settings = [
    `-c search_path=${schema}`,
    '-c default_transaction_isolation=read\\ committed',
    `-c synchronous_commit=${options.synchronousCommit ?? 'on'}`,
    // Every statement of the store reads by key or walks an index in order. When the statistics lag behind a
    // burst of enqueues, the planner takes the due tasks for few and plans the claim as a bitmap scan that reads
    // every due task and sorts them (37 ms instead of 1 ms for 200 of 19,000 due); without bitmap scans it walks
    // tasks_due and stops after `limit` rows whatever it estimates.
    '-c enable_bitmapscan=off',
    // A young table has no statistics yet (autovacuum's first ANALYZE can be a minute away), and a freshly loaded
    // one has stale ones: the planner then took the few completions of a call for many and joined them to the
    // whole tasks table by a sequential scan, dead rows included: 40 ms per call growing to 1.3 s within the
    // first 10 s of steady load on a new schema, instead of one primary-key lookup per completion. Scans are
    // still made where no index applies; they are only priced out where one does.
    '-c enable_seqscan=off',
  ];
  return {
    connectionString,
    options: [userOptions, ...settings].filter((part) => part !== '').join(' '),
    application_name: options.applicationName ?? 'retryd',
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    // Notices a dropped peer (a server gone without closing the socket) on idle connections.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    types: storeTypes,
  };
}

/** Opens the pool of a store. Connections open lazily; an idle one that breaks is reported to `onError`. */
export function createPool(options: PostgresStoreOptions, schema: string): pg.Pool {
  const pool = new pg.Pool({
    ...clientConfig(options, schema),
    max: options.poolSize ?? 10,
    idleTimeoutMillis: 30_000,
  });
  // Without a listener, an idle client's socket error would be an unhandled 'error' event and end the process.
  pool.on('error', (error) => options.onError?.(error));
  return pool;
}

/**
 * Splits an `options` query parameter off the URL: pg lets a URL's parameters override the config, so a user's
 * `?options=...` would otherwise replace the store's settings instead of joining them.
 */
function withoutOptionsParameter(url: string): { connectionString: string; userOptions: string } {
  if (!/[?&]options=/.test(url)) return { connectionString: url, userOptions: '' };
  const parsed = new URL(url);
  const userOptions = parsed.searchParams.get('options') ?? '';
  parsed.searchParams.delete('options');
  return { connectionString: parsed.toString(), userOptions };
}
