import type pg from 'pg';
import { CallerTransactionError } from './caller-transaction-error.js';
import { storeTypes } from './connection.js';
import { storeError } from './errors.js';
import type { RunQuery } from './postgres-store.js';
import { loadQueries, type Queries } from './queries.js';

/** An application's connection inside its own open transaction: a `pg.Client`, or a pool's `PoolClient`, after `BEGIN`. */
export type CallerClient = Pick<pg.ClientBase, 'query'>;

/** The savepoint that brackets retryd's statements in the caller's transaction. */
const SAVEPOINT = 'retryd_enqueue';
/** Where the caller's search path waits while retryd's statements run (a transaction-local setting). */
const SAVED_PATH = 'retryd.caller_search_path';

/** Clients with a scope open: a second enqueue on one of them would interleave its savepoint with the first's. */
const busy = new WeakSet<CallerClient>();

/**
 * retryd's statements on an application's connection, inside its transaction: a savepoint, and for its length retryd's
 * schema as the search path (the statements name their tables unqualified, as on the store's own connections).
 * {@link release} keeps what they wrote and gives the caller its search path back; {@link rollback} undoes them, the
 * search path included, and the transaction goes on as before the call. What they wrote commits or rolls back with
 * the caller's transaction; a `NOTIFY` among them is delivered only at its commit.
 *
 * Two round trips besides the statements: one to open (savepoint and search path in one simple query), one to close.
 * Every statement runs with the store's type parsers (a `bigint` is a number), whatever the caller's client uses.
 */
export class CallerTransaction {
  /** Runs one of the store's statements (prepared, by name) inside the scope. */
  readonly run: RunQuery;

  private constructor(
    private readonly client: CallerClient,
    queries: Queries,
  ) {
    this.run = async (name, values) => {
      try {
        return await client.query({ ...queries[name], values, types: storeTypes });
      } catch (error) {
        throw callerTransactionError(error);
      }
    };
  }

  /**
   * Opens the scope on `client` for `schema` (already checked: `checkSchemaName`, so safe to write into the SQL).
   *
   * @throws CallerTransactionError NOT_IN_TRANSACTION, TRANSACTION_ABORTED or CLIENT_BUSY
   */
  static async open(client: CallerClient, schema: string): Promise<CallerTransaction> {
    if (busy.has(client)) {
      throw new CallerTransactionError('CLIENT_BUSY', 'another retryd enqueue is still running on this client: await it before the next one (one statement at a time per connection)');
    }
    busy.add(client);
    try {
      const queries = await loadQueries();
      // One simple query, three statements: the SAVEPOINT refuses a client outside a transaction block (25P01).
      await client.query(
        `SAVEPOINT ${SAVEPOINT}; SELECT set_config('${SAVED_PATH}', current_setting('search_path'), true); SELECT set_config('search_path', '${schema}', true)`,
      );
      return new CallerTransaction(client, queries);
    } catch (error) {
      busy.delete(client);
      throw callerTransactionError(error);
    }
  }

  /** Runs an ad hoc statement of retryd's (migration bookkeeping) inside the scope, with the store's type parsers. */
  async query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> {
    try {
      return await this.client.query<R>({ text, values, types: storeTypes });
    } catch (error) {
      throw callerTransactionError(error);
    }
  }

  /** Keeps what the scope wrote (it commits with the caller's transaction) and restores the caller's search path. */
  async release(): Promise<void> {
    try {
      await this.client.query(`SELECT set_config('search_path', current_setting('${SAVED_PATH}'), true); RELEASE SAVEPOINT ${SAVEPOINT}`);
    } catch (error) {
      throw callerTransactionError(error);
    } finally {
      busy.delete(this.client);
    }
  }

  /**
   * Undoes everything the scope did, the search path included. Rejects only when the connection failed, and then
   * with the failure of the statement that ended the scope, `reason`, which says more.
   */
  async rollback(reason: unknown): Promise<void> {
    try {
      await this.client.query(`ROLLBACK TO SAVEPOINT ${SAVEPOINT}; RELEASE SAVEPOINT ${SAVEPOINT}`);
    } catch {
      throw reason;
    } finally {
      busy.delete(this.client);
    }
  }
}

/**
 * A driver error on the caller's connection as the transactional enqueue reports it: a {@link CallerTransactionError}
 * for the SQLSTATEs that say what the caller must do, the store's own mapping (`storeError`: unreachable server) for
 * the rest.
 */
export function callerTransactionError(error: unknown): unknown {
  if (error instanceof CallerTransactionError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const fail = (kind: ConstructorParameters<typeof CallerTransactionError>[0], message: string) => new CallerTransactionError(kind, message, { cause: error });
  switch (code) {
    case '25P01':
      return fail('NOT_IN_TRANSACTION', 'a transactional enqueue needs a client inside a transaction: send BEGIN on it first, and COMMIT after the enqueue');
    case '25P02':
      return fail('TRANSACTION_ABORTED', 'the transaction has already failed (a statement before this enqueue was refused): roll it back; nothing can be written in it');
    case '40001':
    case '40P01':
      return fail(
        'TRANSACTION_CONFLICT',
        `PostgreSQL gave up this transaction for a concurrent one's sake (${code === '40P01' ? 'a deadlock' : 'a serialization failure: under REPEATABLE READ or SERIALIZABLE, a concurrent transaction committed the same idempotency key'}): roll it back and run it again`,
      );
    case '55P03':
    case '57014':
      return fail(
        'LOCK_TIMEOUT',
        'the enqueue was cancelled by lock_timeout or statement_timeout while it waited, most likely for a concurrent transaction holding the same idempotency key or target queue: roll back, and retry once that transaction has ended',
      );
    default:
      return storeError(error);
  }
}
