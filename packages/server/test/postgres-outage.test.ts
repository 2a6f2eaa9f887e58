import { createServer, connect } from 'node:net';
import type { Server, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { isStoreUnavailable } from '../src/tasks/store-failure.js';
import type { PostgresStore } from '../src/backends/postgres/postgres-store.js';
import { T0, makeTask } from './fixtures/tasks.js';
import { POSTGRES_URL, dropSchemas, freshSchema, makeStore, withClient } from './postgres-harness.js';
import { waitFor } from './wait-for.js';

/**
 * A TCP proxy on loopback in front of the shared PostgreSQL server: stopping it looks like the server going away
 * (open connections cut, new ones refused) without touching the server other tests use.
 */
class LoopbackProxy {
  port = 0;
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();
  readonly #upstream = new URL(POSTGRES_URL);

  async start(): Promise<void> {
    const server = createServer((downstream) => {
      const upstream = connect(Number(this.#upstream.port || 5432), this.#upstream.hostname);
      for (const socket of [downstream, upstream]) {
        this.#sockets.add(socket);
        socket.on('close', () => this.#sockets.delete(socket));
        socket.on('error', () => {
          downstream.destroy();
          upstream.destroy();
        });
      }
      downstream.pipe(upstream).pipe(downstream);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('expected a TCP address');
    this.port = address.port;
    this.#server = server;
  }

  /** Refuses new connections and cuts the open ones, as a server that died would. */
  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    const closed = new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
    for (const socket of this.#sockets) socket.destroy();
    await closed;
  }

  get url(): string {
    const url = new URL(POSTGRES_URL);
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString();
  }
}

const proxy = new LoopbackProxy();
const stores: PostgresStore[] = [];

afterEach(async () => {
  await proxy.stop();
  await Promise.all(stores.splice(0).map((store) => store.close()));
  await dropSchemas();
});

describe('PostgresStore through an outage', () => {
  it('rejects calls with a recognisable error while the server is away, and recovers by itself', async () => {
    await proxy.start();
    const schema = freshSchema();
    const backgroundErrors: Error[] = [];
    const store = makeStore(schema, {
      connectionString: proxy.url,
      connectTimeoutMs: 1_000,
      onError: (error) => backgroundErrors.push(error),
    });
    const direct = makeStore(schema);
    stores.push(store, direct);
    await store.init();
    await direct.init();
    const task = makeTask();
    await store.insertTasks([task]);
    let wakes = 0;
    store.onDue(() => wakes++);
    await store.whenListening();

    // A call in flight when the connection is cut: an update held up by a row lock taken on a direct connection.
    const cut = await withClient(schema, async (locker) => {
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM tasks WHERE task_id = $1 FOR UPDATE', [task.taskId]);
      const lockerPid = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
      const inFlight = store.cancelTask({ tenantId: 'default', taskId: task.taskId }, T0, T0 + 60_000).catch((e: unknown) => e);
      const blocked = async () =>
        (await locker.query('SELECT 1 FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))', [lockerPid]))
          .rowCount === 1;
      await waitFor('the update to wait on the row lock', blocked);
      await proxy.stop();
      const error = await inFlight;
      await locker.query('ROLLBACK');
      return error;
    });
    expect(cut).toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(isStoreUnavailable(cut)).toBe(true);

    const calls: [string, () => Promise<unknown>][] = [
      ['ping', () => store.ping()],
      ['getTask', () => store.getTask('default', task.taskId)],
      ['insertTasks', () => store.insertTasks([makeTask()])],
      ['claimDue', () => store.claimDue(T0, { limit: 10, leaseMs: 1_000, workerId: 'w' })],
    ];
    for (const [name, call] of calls) {
      const started = Date.now();
      const error = await call().then(
        () => new Error(`${name} resolved while the server was away`),
        (e: unknown) => e,
      );
      expect(error, name).toMatchObject({ code: 'STORE_UNAVAILABLE', name: 'PostgresUnavailableError' });
      expect(isStoreUnavailable(error), name).toBe(true);
      // Fails fast: a refused connection, not a queue that waits for the server.
      expect(Date.now() - started, name).toBeLessThan(1_500);
    }
    // The cut connections were reported, not thrown: no unhandled 'error' event, no crash.
    await waitFor('the lost connections to be reported', () => backgroundErrors.length > 0);

    // The listener keeps trying while the server is away; one insert from elsewhere goes unheard meanwhile.
    await direct.insertTasks([makeTask()]);
    await proxy.start();
    await waitFor('the pool to reconnect', async () => store.ping().then(() => true, () => false));
    // The cut call's outcome is unknown, as with any lost connection: its backend went on once the lock was
    // released and may have committed before noticing the client was gone. Either way the row is whole, and
    // the caller's retry is safe (a stale version conflicts, a replayed key is a duplicate, a stale token is
    // fenced out).
    const after = await store.getTask('default', task.taskId);
    const cancelled = { ...task, status: 'CANCELLED', nextAttemptAt: null, updatedAt: T0, version: 2, expiresAt: T0 + 60_000 };
    expect(after).toEqual(after?.version === 1 ? task : cancelled);
    expect((await store.admin.countByStatus()).PENDING).toBe(after?.version === 1 ? 2 : 1);

    // Back listening: the reconnect itself wakes the listener once (what was sent meanwhile is lost), and new
    // notifications arrive again.
    await store.whenListening();
    await waitFor('the wake-up after the listener reconnected', () => wakes === 1);
    await direct.insertTasks([makeTask()]);
    await waitFor('a wake-up after the outage', () => wakes === 2);
  });
});
