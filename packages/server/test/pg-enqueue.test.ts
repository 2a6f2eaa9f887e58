import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPgEnqueuer, CallerTransactionError, RetrydError, type EnqueueRequest, type PgEnqueuerOptions } from '../src/pg-enqueue/index.js';
import { loadMigrations } from '../src/backends/postgres/migrate.js';
import { DEFAULT_SERVICE_POLICY } from '../src/policies/default-policy.js';
import { createLogger } from '../src/service/logger.js';
import { DEFAULT_CONFIG } from '../src/service/retryd-config.js';
import { startRetryd } from '../src/service/start-retryd.js';
import { TEST_ENCRYPTION_KEY } from './api-harness.js';
import { POSTGRES_URL, freshSchema, postgresInstances } from './postgres-harness.js';
import { cleanupAfterEach, runCli } from './service-harness.js';
import { reply, startServer } from './test-server.js';
import { waitFor } from './wait-for.js';

// The transactional enqueue (`@retryd/server/pg`) on the real PostgreSQL: tasks written in the caller's own transaction,
// on the caller's own connection, into a schema a store migrated; a real service on the same schema makes the calls.

const instances = postgresInstances();
const cleanup = cleanupAfterEach();
const LATEST = Math.max(...loadMigrations().map((m) => m.version));

/** An application's own connection: its own search path (not retryd's schema), pg's default type parsers. */
async function appClient(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  cleanup.push(() => client.end());
  return client;
}

/** A schema a store migrated, an application table beside it, and the store (to read what was written). */
async function setup() {
  const [store] = await instances(1);
  if (store === undefined) throw new Error('expected a store');
  // As a service registers it at start: the default tenant's `default` policy.
  await store.putPolicy({ tenantId: 'default', policyId: 'default', policy: DEFAULT_SERVICE_POLICY, callback: null, createdAt: 1, updatedAt: 1, version: 1 }, 'create');
  const app = freshSchema();
  const admin = await appClient();
  await admin.query(`CREATE SCHEMA ${app}; CREATE TABLE ${app}.orders (id text PRIMARY KEY)`);
  return { store, schema: store.schema, orders: `${app}.orders`, admin };
}

/** An enqueuer on `schema` whose tasks may call loopback (the tests' targets), as the service here is started. */
const enqueuerOn = (schema: string, options: PgEnqueuerOptions = {}) => createPgEnqueuer({ schema, allowTargets: '127.0.0.1/32', ...options });

const task = (key: string, extra: Partial<EnqueueRequest> = {}): EnqueueRequest => ({
  targetUrl: 'http://127.0.0.1:9/hooks',
  method: 'POST',
  body: { key },
  idempotencyKey: key,
  ...extra,
});

/** The error `promise` rejects with. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('transactional enqueue (@retryd/server/pg)', () => {
  it('leaves no task when the transaction rolls back, and gives the caller its search path back', async () => {
    const { store, schema, orders } = await setup();
    const wakes: number[] = [];
    store.onDue(() => wakes.push(1));
    await store.whenListening();
    const client = await appClient();
    // A tenant that never enqueued: its `default` policy is registered in the same transaction.
    const enqueuer = enqueuerOn(schema, { tenantId: 'acme' });
    const pathBefore = (await client.query<{ search_path: string }>('SHOW search_path')).rows[0]?.search_path;
    await client.query('BEGIN');
    await client.query(`INSERT INTO ${orders} VALUES ('o-1')`);
    const enqueued = await enqueuer.enqueue(client, task('order-1'));
    expect(enqueued.replayed).toBe(false);
    expect((await client.query<{ search_path: string }>('SHOW search_path')).rows[0]?.search_path).toBe(pathBefore);
    // Seen inside the transaction, nowhere else yet.
    expect((await client.query(`SELECT 1 FROM ${schema}.tasks WHERE idempotency_key = 'order-1'`)).rowCount).toBe(1);
    expect(await store.admin.getTaskByIdempotencyKey('acme', 'order-1')).toBeUndefined();
    await client.query('ROLLBACK');
    expect(await store.admin.getTaskByIdempotencyKey('acme', 'order-1')).toBeUndefined();
    expect(await store.getPolicy('acme', 'default')).toBeUndefined();
    expect((await client.query(`SELECT 1 FROM ${orders}`)).rowCount).toBe(0);
    // A committed marker's wake-up arrives; the rolled-back enqueue's never was sent.
    const marker = enqueuerOn(schema);
    await client.query('BEGIN');
    await marker.enqueue(client, task('marker'));
    await client.query('COMMIT');
    await waitFor('the marker wake-up', () => wakes.length === 1);
    expect(wakes).toHaveLength(1);
  });

  it('commits with the caller: the service is woken and calls the target with the key and the sealed credential', async () => {
    const { store, schema, orders } = await setup();
    const downstream = await startServer((_req, res) => reply(res, 200, 'ok'));
    cleanup.push(() => downstream.close());
    const logs: string[] = [];
    const service = await startRetryd(
      { ...DEFAULT_CONFIG, port: 0, store: `${POSTGRES_URL}?schema=${schema}`, allowTargets: ['127.0.0.1/32'], graceMs: 500, encryptionKey: TEST_ENCRYPTION_KEY },
      createLogger('warn', { write: (line: string) => void logs.push(line) }),
    );
    cleanup.push(() => service.close());
    const client = await appClient();
    const enqueuer = enqueuerOn(schema, { encryptionKey: TEST_ENCRYPTION_KEY });
    await client.query('BEGIN');
    await client.query(`INSERT INTO ${orders} VALUES ('o-2')`);
    const { taskId } = await enqueuer.enqueue(client, task('charge-o-2', { targetUrl: `${downstream.url}/charges`, headers: { Authorization: 'Bearer s3cr3t' } }));
    const stored = await client.query<{ headers: Record<string, unknown> }>(`SELECT headers FROM ${schema}.tasks WHERE task_id = $1`, [taskId]);
    expect(JSON.stringify(stored.rows[0]?.headers)).not.toContain('s3cr3t');
    expect(downstream.requests).toHaveLength(0);
    await client.query('COMMIT');
    await waitFor('the call to the target', () => downstream.requests.length === 1, 20_000);
    expect(downstream.requests[0]?.headers['idempotency-key']).toBe('charge-o-2');
    expect(downstream.requests[0]?.headers.authorization).toBe('Bearer s3cr3t');
    expect(JSON.parse(downstream.requests[0]?.body ?? '')).toEqual({ key: 'charge-o-2' });
    await waitFor('the task to succeed', async () => (await store.getTask('default', taskId))?.status === 'SUCCEEDED');
  });

  it('gives one task for one key enqueued in two transactions: the second waits for the first, then gets its task', async () => {
    const { store, schema } = await setup();
    const [first, second, watcher] = await Promise.all([appClient(), appClient(), appClient()]);
    const enqueuer = enqueuerOn(schema);
    await first.query('BEGIN');
    await second.query('BEGIN');
    const winner = await enqueuer.enqueue(first, task('pay-7'));
    const secondPid = (await second.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
    let settled = false;
    const loser = enqueuer.enqueue(second, task('pay-7')).finally(() => (settled = true));
    // The second insert waits on the first transaction's key (a lock wait the server shows), not on a timer.
    await waitFor(
      'the second enqueue to wait for the first transaction',
      async () => {
        const { rows } = await watcher.query<{ wait_event_type: string | null }>('SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1', [secondPid]);
        return rows[0]?.wait_event_type === 'Lock';
      },
    );
    expect(settled).toBe(false);
    await first.query('COMMIT');
    expect(await loser).toEqual({ taskId: winner.taskId, idempotencyKey: 'pay-7', replayed: true });
    await second.query('COMMIT');
    const { rows } = await watcher.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.tasks WHERE idempotency_key = 'pay-7'`);
    expect(rows[0]?.n).toBe(1);
    expect((await store.admin.getTaskByIdempotencyKey('default', 'pay-7'))?.taskId).toBe(winner.taskId);
  });

  it('creates the task in the second transaction when the first rolls back, and refuses another request on a held key', async () => {
    const { store, schema, orders } = await setup();
    const [first, second] = await Promise.all([appClient(), appClient()]);
    const enqueuer = enqueuerOn(schema);
    await first.query('BEGIN');
    await second.query('BEGIN');
    const lost = await enqueuer.enqueue(first, task('pay-8'));
    const waiting = enqueuer.enqueue(second, task('pay-8'));
    await first.query('ROLLBACK');
    const made = await waiting;
    expect(made.replayed).toBe(false);
    expect(made.taskId).not.toBe(lost.taskId);
    // The same key for another request: the API's 422, and the transaction goes on.
    const reused = await rejection(enqueuer.enqueue(second, task('pay-8', { method: 'PUT' })));
    expect(reused).toBeInstanceOf(RetrydError);
    expect((reused as RetrydError).code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect((reused as RetrydError).detail).toContain(made.taskId);
    await second.query(`INSERT INTO ${orders} VALUES ('o-8')`);
    await second.query('COMMIT');
    expect((await store.admin.getTaskByIdempotencyKey('default', 'pay-8'))?.method).toBe('POST');
  });

  it('enqueues a batch in one call, giving back the task of a key already stored', async () => {
    const { store, schema } = await setup();
    const client = await appClient();
    const enqueuer = enqueuerOn(schema);
    await client.query('BEGIN');
    const earlier = await enqueuer.enqueue(client, task('batch-3'));
    await client.query('COMMIT');
    await client.query('BEGIN');
    const tasks = Array.from({ length: 50 }, (_, i) => task(`batch-${i}`, { notBefore: '2099-01-01T00:00:00Z' }));
    tasks[3] = task('batch-3');
    const results = await enqueuer.enqueueBatch(client, tasks);
    await client.query('COMMIT');
    expect(results).toHaveLength(50);
    expect(results[3]).toEqual({ taskId: earlier.taskId, idempotencyKey: 'batch-3', replayed: true });
    expect(results.filter((r) => r.replayed)).toHaveLength(1);
    expect(new Set(results.map((r) => r.taskId)).size).toBe(50);
    expect((await store.admin.countByStatus()).PENDING).toBe(50);
    expect((await store.admin.getTaskByIdempotencyKey('default', 'batch-49'))?.nextAttemptAt).toBe(Date.parse('2099-01-01T00:00:00Z'));
  });

  it('keeps a callback given in the transaction, checked as the API checks it', async () => {
    const { store, schema } = await setup();
    const client = await appClient();
    const enqueuer = enqueuerOn(schema);
    await client.query('BEGIN');
    const callback = { url: 'http://127.0.0.1:9/payments/settled', on: ['succeeded', 'failed'] as ('succeeded' | 'failed')[] };
    const made = await enqueuer.enqueue(client, task('with-callback', { callback }));
    await expect(enqueuer.enqueue(client, task('bad-callback', { callback: { url: 'http://10.1.2.3/x' } }))).rejects.toMatchObject({
      code: 'TARGET_NOT_ALLOWED',
      errors: [expect.objectContaining({ field: 'callback.url' })],
    });
    await client.query('COMMIT');
    expect((await store.getTask('default', made.taskId))?.callback).toEqual({ ...callback, policyId: null });
  });

  it('refuses an invalid task and a refused target before writing anything, and the transaction goes on', async () => {
    const { store, schema, orders } = await setup();
    const client = await appClient();
    const enqueuer = enqueuerOn(schema, { env: {} });
    await client.query('BEGIN');
    const invalid = await rejection(enqueuer.enqueue(client, task('bad-1', { method: 'FETCH' as 'GET' })));
    expect(invalid).toBeInstanceOf(RetrydError);
    expect((invalid as RetrydError).code).toBe('VALIDATION_FAILED');
    expect((invalid as RetrydError).errors?.map((e) => e.field)).toEqual(['method']);
    const metadata = await rejection(enqueuer.enqueue(client, task('bad-2', { targetUrl: 'http://169.254.169.254/latest/meta-data' })));
    expect((metadata as RetrydError).code).toBe('TARGET_NOT_ALLOWED');
    expect((metadata as RetrydError).errors?.[0]?.field).toBe('targetUrl');
    // No key to seal a credential with: refused, as the API refuses it.
    const credential = await rejection(enqueuer.enqueue(client, task('bad-3', { headers: { Authorization: 'Bearer x' } })));
    expect((credential as RetrydError).errors?.[0]?.field).toBe('headers.Authorization');
    // A batch is refused whole: its valid entries are not written either; every broken rule is named.
    const batch = await rejection(enqueuer.enqueueBatch(client, [task('ok-1'), task('bad-4', { method: 'FETCH' as 'GET' }), task('bad-5', { body: undefined, notBefore: 'soon' })]));
    expect((batch as RetrydError).code).toBe('VALIDATION_FAILED');
    expect((batch as RetrydError).errors?.map((e) => e.field)).toEqual(['tasks[1].method', 'tasks[2].notBefore']);
    const refused = await rejection(enqueuer.enqueueBatch(client, [task('ok-2'), task('bad-6', { targetUrl: 'http://10.1.2.3/x' })]));
    expect((refused as RetrydError).errors?.[0]?.field).toBe('tasks[1].targetUrl');
    await client.query(`INSERT INTO ${orders} VALUES ('o-9')`);
    await client.query('COMMIT');
    expect((await client.query(`SELECT 1 FROM ${orders}`)).rowCount).toBe(1);
    expect(Object.values(await store.admin.countByStatus()).reduce((a, b) => a + b, 0)).toBe(0);
  });

  it('needs an open, unbroken transaction and one enqueue at a time per client', async () => {
    const { schema } = await setup();
    const client = await appClient();
    const enqueuer = enqueuerOn(schema);
    const outside = await rejection(enqueuer.enqueue(client, task('no-tx')));
    expect(outside).toBeInstanceOf(CallerTransactionError);
    expect((outside as CallerTransactionError).code).toBe('NOT_IN_TRANSACTION');
    await client.query('BEGIN');
    const [one, two] = await Promise.allSettled([enqueuer.enqueue(client, task('busy-1')), enqueuer.enqueue(client, task('busy-2'))]);
    expect(one.status).toBe('fulfilled');
    expect(two.status === 'rejected' && (two.reason as CallerTransactionError).code).toBe('CLIENT_BUSY');
    await client.query('SELECT 1/0').catch(() => undefined);
    const aborted = await rejection(enqueuer.enqueue(client, task('aborted')));
    expect((aborted as CallerTransactionError).code).toBe('TRANSACTION_ABORTED');
    await client.query('ROLLBACK');
  });

  it('refuses a schema migrated by a newer retryd, and one never or not fully migrated, naming the versions', async () => {
    const { schema, admin } = await setup();
    const client = await appClient();
    await admin.query(`INSERT INTO ${schema}.schema_migrations (version, name) VALUES (${LATEST + 1}, 'from-a-newer-retryd.sql')`);
    await client.query('BEGIN');
    const newer = await rejection(enqueuerOn(schema).enqueue(client, task('newer')));
    expect(newer).toBeInstanceOf(CallerTransactionError);
    expect((newer as CallerTransactionError).code).toBe('SCHEMA_TOO_NEW');
    expect((newer as Error).message).toContain(`at version ${LATEST + 1}, migrated by a newer retryd`);
    expect((newer as Error).message).toContain(`knows versions up to ${LATEST}`);
    await admin.query(`DELETE FROM ${schema}.schema_migrations WHERE version >= ${LATEST}`);
    const older = await rejection(enqueuerOn(schema).enqueue(client, task('older')));
    expect((older as CallerTransactionError).code).toBe('SCHEMA_NOT_MIGRATED');
    expect((older as Error).message).toContain(`at version ${LATEST - 1}, and this @retryd/server writes version ${LATEST}`);
    const missing = await rejection(enqueuerOn(freshSchema()).enqueue(client, task('missing')));
    expect((missing as CallerTransactionError).code).toBe('SCHEMA_NOT_MIGRATED');
    expect((missing as Error).message).toContain('retryd migrate');
    // Each refusal rolled back to its savepoint: the transaction still works.
    expect((await client.query('SELECT 1 AS one')).rows[0]).toEqual({ one: 1 });
    await client.query('COMMIT');
  });

  it("reads the service's settings from the variables retryd serve reads, and names a bad one", async () => {
    const { schema } = await setup();
    expect(() => createPgEnqueuer({ schema: 'Not-A-Schema' })).toThrow(/schema of `schema`/);
    expect(() => createPgEnqueuer({ tenantId: '' })).toThrow(/`tenantId`/);
    expect(() => createPgEnqueuer({ env: { RETRYD_MAX_POLICY_BUDGET: 'soon' } })).toThrow(/RETRYD_MAX_POLICY_BUDGET must be a period/);
    expect(() => createPgEnqueuer({ env: { RETRYD_ENCRYPTION_KEY: 'c2hvcnQ=' } })).toThrow(/RETRYD_ENCRYPTION_KEY entry 1 must be base64 of 32 bytes/);
    const client = await appClient();
    const enqueuer = enqueuerOn(schema, { env: { RETRYD_MAX_POLICY_ATTEMPTS: '3' } });
    const policy = { maxAttempts: 5, backoffType: 'EXPONENTIAL', initialDelayMs: 100, multiplier: 2, maxDelayMs: 1000, jitterType: 'FULL' } as const;
    await client.query('BEGIN');
    const over = await rejection(enqueuer.enqueue(client, task('ceiling', { policy })));
    expect((over as RetrydError).errors?.[0]).toMatchObject({ field: 'policy.maxAttempts', rule: "at most 3 (the service's ceiling on policies)" });
    expect((await enqueuer.enqueue(client, task('ceiling', { policy: { ...policy, maxAttempts: 3 } }))).replayed).toBe(false);
    await client.query('ROLLBACK');
  });

  it('retryd migrate makes a schema the enqueuer writes to', async () => {
    const schema = freshSchema();
    const run = await runCli(['migrate', '--store', `${POSTGRES_URL}?schema=${schema}`]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const client = await appClient();
    await client.query('BEGIN');
    expect((await enqueuerOn(schema).enqueue(client, task('after-migrate'))).replayed).toBe(false);
    await client.query('COMMIT');
  });
});
