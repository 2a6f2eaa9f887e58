import { systemClock, type Clock } from '@retryd/core';
import type { RetrydComponents } from '@retryd/client';
import { DEFAULT_INLINE_BODY_LIMIT } from '../blobs/blob-store.js';
import { RetrydError } from '../domain/errors.js';
import type { RetryTask } from '../domain/task.js';
import { CallerTransaction, type CallerClient } from '../backends/postgres/caller-transaction.js';
import { CallerTransactionError } from '../backends/postgres/caller-transaction-error.js';
import { dueChannel } from '../backends/postgres/connection.js';
import { EnqueueStatements } from '../backends/postgres/enqueue-statements.js';
import { loadMigrations, type Migration } from '../backends/postgres/migrate.js';
import { PostgresBlobStore } from '../backends/postgres/postgres-blob-store.js';
import { checkSchemaVersion } from '../backends/postgres/schema-version.js';
import { CeilingBook, type PolicyCeilings } from '../policies/policy-ceilings.js';
import { PolicyRegistry } from '../policies/policy-registry.js';
import { DEFAULT_POLICY_ID } from '../policies/default-policy.js';
import { POLICY_ID_PATTERN } from '../policies/policy-id.js';
import type { TargetGuard } from '../security/target-guard.js';
import type { TaskSecrets } from '../secrets/task-secrets.js';
import { settleEntries } from '../tasks/enqueuer.js';
import { TaskPreparer, type EnqueueContext, type PreparedEntry } from '../tasks/task-preparer.js';
import { uuidv7 } from '../tasks/uuid-v7.js';
import { MAX_BATCH_TASKS } from '../tasks/task-service.js';
import { pgEnqueuerSettings, type PgEnqueuerOptions } from './pg-enqueuer-options.js';

/** `POST /retry-tasks`'s body, as the API's OpenAPI schema defines it (the type @retryd/client is generated with). */
export type EnqueueRequest = RetrydComponents['schemas']['EnqueueRequest'];

/** A task enqueued in the caller's transaction: the one created, or the one an earlier identical enqueue created. */
export interface PgEnqueued {
  taskId: string;
  /** The task's idempotency key: the one given, or the one made for it (the task's id space, uuid v7). */
  idempotencyKey: string;
  /** True when the key already held a task made by the same request (it was not created again). */
  replayed: boolean;
}

/**
 * Enqueues retryd tasks inside the caller's own PostgreSQL transaction, in retryd's schema on the same database: the
 * tasks commit or roll back with the caller's own writes, and the service's instances are woken at commit (`NOTIFY` on
 * the channel they listen on). No service need run in the process; one must run on the schema to make the calls.
 *
 * Each task gets what `POST /retry-tasks` gives it: the same validation and errors (`RetrydError`, with the API's codes
 * and field names), its policy checked (and within the tenant's ceilings), its target checked at creation (its name
 * resolved; `allowTargets` as `--allow-targets`), credential headers sealed with the service's keys, and the same
 * idempotency: a key that holds a task made by the same request gives that task back (`replayed`), one that holds
 * another request's task is refused (`IDEMPOTENCY_KEY_REUSED`). Every task of a call is checked before any is written;
 * a call either writes all its tasks or none, and a refused call leaves the transaction as it was.
 *
 * The same key in two open transactions: the unique index decides. The second insert waits for the first transaction
 * to end (under READ COMMITTED, the default): if it commits, the second gets its task (`replayed`, or
 * `IDEMPOTENCY_KEY_REUSED`); if it rolls back, the second creates the task. Under REPEATABLE READ or SERIALIZABLE, a
 * first transaction that commits makes the second fail with `CallerTransactionError` `TRANSACTION_CONFLICT` (retry it).
 * A `lock_timeout` set on the transaction bounds that wait (`LOCK_TIMEOUT`).
 *
 * From the enqueue to its commit, the transaction holds the row of each target queue it added to: other writers to those
 * targets (the service's own enqueues, retries scheduled on them, claims of a rate-limited one) wait for its end. Enqueue
 * last, just before COMMIT, and keep such transactions short.
 *
 * @example
 * ```ts
 * import pg from 'pg';
 * import { createPgEnqueuer } from '@retryd/server/pg';
 *
 * const enqueuer = createPgEnqueuer({ schema: 'retryd' });
 * const client = await pool.connect();
 * try {
 *   await client.query('BEGIN');
 *   await client.query('INSERT INTO orders (id, total) VALUES ($1, $2)', [orderId, total]);
 *   await enqueuer.enqueue(client, { targetUrl: 'https://api.example.com/charges', method: 'POST', body: { orderId }, idempotencyKey: `charge-${orderId}` });
 *   await client.query('COMMIT');
 * } catch (error) {
 *   await client.query('ROLLBACK');
 *   throw error;
 * } finally {
 *   client.release();
 * }
 * ```
 */
export class PgEnqueuer {
  /** retryd's schema this enqueuer writes to. */
  readonly schema: string;
  /** The tenant of its tasks. */
  readonly tenantId: string;
  readonly #guard: TargetGuard;
  readonly #secrets: TaskSecrets;
  readonly #ceilings: PolicyCeilings;
  readonly #clock: Pick<Clock, 'now'>;
  readonly #channel: string;
  readonly #migrations: readonly Migration[];
  /** Set once the schema was found at this build's version: read once per enqueuer, on its first call. */
  #versionChecked = false;

  /** @see createPgEnqueuer */
  constructor(options: PgEnqueuerOptions = {}) {
    const settings = pgEnqueuerSettings(options);
    this.schema = settings.schema;
    this.tenantId = settings.tenantId;
    this.#guard = settings.guard;
    this.#secrets = settings.secrets;
    this.#ceilings = settings.ceilings;
    const clock = options.clock ?? systemClock;
    // Stored times are whole epoch milliseconds, as the service's (TaskService).
    this.#clock = { now: () => Math.floor(clock.now()) };
    this.#channel = dueChannel(this.schema);
    this.#migrations = loadMigrations();
  }

  /**
   * Enqueues one task in the transaction open on `client` (`POST /retry-tasks`'s body). Resolves once it is written,
   * uncommitted: it runs only if the transaction commits.
   *
   * @throws RetrydError the API's error for this task (`VALIDATION_FAILED`, `TARGET_NOT_ALLOWED`,
   *   `TARGET_LOOKUP_FAILED`, `IDEMPOTENCY_KEY_REUSED`), before anything is written
   * @throws CallerTransactionError when the transaction or retryd's schema does not allow it (see its codes)
   */
  async enqueue(client: CallerClient, task: EnqueueRequest, context: EnqueueContext = {}): Promise<PgEnqueued> {
    const [enqueued] = await this.#enqueue(client, [task], () => '', context);
    if (enqueued === undefined) throw new Error('enqueue produced no result');
    return enqueued;
  }

  /**
   * Enqueues up to 1,000 tasks in one statement of the transaction open on `client`: a result per task, in order.
   * All or none: one refused task refuses the call (its fields named `tasks[i].…`; when only validation failed, every
   * broken rule of every task in one `VALIDATION_FAILED`), and nothing of it is written.
   *
   * @throws RetrydError as {@link enqueue}, or `VALIDATION_FAILED` on `tasks` for more than 1,000 tasks
   * @throws CallerTransactionError as {@link enqueue}
   */
  enqueueBatch(client: CallerClient, tasks: readonly EnqueueRequest[], context: EnqueueContext = {}): Promise<PgEnqueued[]> {
    if (!Array.isArray(tasks) || tasks.length > MAX_BATCH_TASKS) {
      const rule = `an array of at most ${MAX_BATCH_TASKS} tasks`;
      const got = Array.isArray(tasks) ? `, got ${tasks.length}` : '';
      return Promise.reject(RetrydError.validation([{ field: 'tasks', rule, message: `tasks must be ${rule}${got}` }]));
    }
    return this.#enqueue(client, tasks, (i) => `tasks[${i}].`, context);
  }

  async #enqueue(client: CallerClient, inputs: readonly unknown[], pathOf: (i: number) => string, context: EnqueueContext): Promise<PgEnqueued[]> {
    if (inputs.length === 0) return [];
    const scope = await CallerTransaction.open(client, this.schema);
    let enqueued: PgEnqueued[];
    try {
      if (!this.#versionChecked) {
        await checkSchemaVersion(scope, this.schema, this.#migrations);
        this.#versionChecked = true;
      }
      const statements = new EnqueueStatements(scope.run, this.#channel);
      const blobs = new PostgresBlobStore(scope.run);
      const ceilings = new CeilingBook({ state: statements, service: this.#ceilings, now: this.#clock.now });
      const policies = new PolicyRegistry({ store: statements, clock: this.#clock, ceilings });
      await readAhead(inputs, this.tenantId, ceilings, policies);
      const batch = this.#preparer(statements, blobs, ceilings, policies).prepare(this.tenantId, inputs, pathOf, context);
      const { entries } = batch instanceof Promise ? await batch : batch;
      const refused = refusalOf(entries);
      if (refused !== undefined) throw unwrapped(refused);
      const inserted = await statements.insertTasks(entries.map((p) => (p as { task: RetryTask }).task));
      const { results, orphans } = settleEntries(entries, inserted);
      const conflict = results.find((r) => r.kind === 'error');
      if (conflict !== undefined) throw conflict.error;
      // A replayed entry's body went to a blob no task refers to: deleted in the same scope.
      for (const ref of orphans) if (ref !== null) await blobs.delete(ref);
      enqueued = results.map((r) => {
        if (r.kind === 'error') throw r.error;
        return { taskId: r.task.taskId, idempotencyKey: r.task.idempotencyKey, replayed: r.kind === 'replayed' };
      });
    } catch (error) {
      const reported = unwrapped(error);
      await scope.rollback(reported);
      throw reported;
    }
    await scope.release();
    return enqueued;
  }

  /**
   * The API's checks on this call's connection. The policy registry and the ceilings are made for the call: what they
   * read is seen by the caller's transaction (a tenant's `default` policy it registers is kept only if it commits), so
   * nothing read is remembered past it. The target guard and the secrets are the enqueuer's.
   */
  #preparer(statements: EnqueueStatements, blobs: PostgresBlobStore, ceilings: CeilingBook, policies: PolicyRegistry): TaskPreparer {
    return new TaskPreparer({
      store: statements,
      blobs,
      guard: this.#guard,
      policies,
      clock: this.#clock,
      newId: () => uuidv7(),
      inlineBodyLimit: DEFAULT_INLINE_BODY_LIMIT,
      secrets: this.#secrets,
      ceilings,
    });
  }
}

/**
 * Reads, once for the call, what its entries will ask of the schema: the tenant's ceilings when some entry has an
 * inline policy, and each policy named (`default` when none). The entries then find them known and are decided in
 * place, without a promise and a read each. Only a hint from the raw fields: the checks themselves decide.
 */
async function readAhead(inputs: readonly unknown[], tenantId: string, ceilings: CeilingBook, policies: PolicyRegistry): Promise<void> {
  const named = new Set<string>();
  let inline = false;
  for (const input of inputs) {
    if (typeof input !== 'object' || input === null) continue;
    const { policy, policyId } = input as { policy?: unknown; policyId?: unknown };
    if (policy !== undefined && policy !== null) inline = true;
    else if (policyId === undefined) named.add(DEFAULT_POLICY_ID);
    else if (typeof policyId === 'string' && POLICY_ID_PATTERN.test(policyId)) named.add(policyId);
  }
  await Promise.all([inline ? ceilings.resolve(tenantId) : undefined, ...[...named].map((id) => policies.exists(tenantId, id))]);
}

/**
 * What the caller is told of a failure: a read that failed is reported as the insert's failures are, by what the
 * connection said (a `CallerTransactionError`, or the driver's error), not as the API's 500, which no one logs here.
 */
function unwrapped(error: unknown): unknown {
  if (!(error instanceof RetrydError) || error.cause === undefined) return error;
  return error.cause instanceof CallerTransactionError || error.code === 'INTERNAL' ? error.cause : error;
}

/**
 * The error a call with refused entries throws: a failed read's (what the transaction or the server said, not the
 * entries' fault) first; else every validation error at once when only validation failed; else the first refused
 * entry's.
 */
function refusalOf(entries: readonly PreparedEntry[]): RetrydError | undefined {
  // A loop, not `flatMap`: an empty array for each of a batch's 1,000 valid entries was a visible share of the call.
  const errors: RetrydError[] = [];
  for (const p of entries) if ('error' in p) errors.push(p.error);
  if (errors.length === 0) return undefined;
  const failed = errors.find((e) => e.code === 'STORE_UNAVAILABLE' || e.code === 'INTERNAL');
  if (failed !== undefined) return failed;
  if (errors.length === 1 || !errors.every((e) => e.code === 'VALIDATION_FAILED')) return errors[0];
  return RetrydError.validation(errors.flatMap((e) => e.errors ?? []));
}

/**
 * An enqueuer for transactions on retryd's PostgreSQL schema (see {@link PgEnqueuer}). Make one per process and schema,
 * and share it: it checks its options now, and the schema's version on its first call.
 *
 * @throws TypeError or RangeError naming a bad option or variable; `EncryptionKeyError`, `InvalidAllowListError`,
 *   `SecretsFileError` as `retryd serve` throws them
 * @example
 * ```ts
 * const enqueuer = createPgEnqueuer({ schema: 'retryd', allowTargets: '10.0.0.0/8' });
 * ```
 */
export function createPgEnqueuer(options: PgEnqueuerOptions = {}): PgEnqueuer {
  return new PgEnqueuer(options);
}
