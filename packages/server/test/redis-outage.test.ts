import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { redisFailure } from '../src/backends/redis/errors.js';
import { RedisStore } from '../src/backends/redis/redis-store.js';
import { isStoreUnavailable } from '../src/tasks/store-failure.js';
import { T0, makeTask } from './fixtures/tasks.js';
import { REDIS_URL, TcpProxy, dropPrefixes, freshPrefix } from './redis-harness.js';
import { waitFor } from './wait-for.js';

afterAll(dropPrefixes);

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** How long a call may take to fail while Redis is away: prompt, not queued until it comes back. */
const PROMPT_MS = 1_000;

async function failsPromptly(call: () => Promise<unknown>): Promise<unknown> {
  const started = performance.now();
  const error = await call().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, 'the call should have failed').toBeDefined();
  expect(performance.now() - started).toBeLessThan(PROMPT_MS);
  expect(isStoreUnavailable(error), String(error)).toBe(true);
  return error;
}

describe('Redis outage (through a loopback proxy; the shared server is never touched)', () => {
  it('fails commands at once while Redis is away, and carries on by itself when it is back', async () => {
    const consoleError = vi.spyOn(console, 'error');
    cleanup.push(async () => consoleError.mockRestore());
    const proxy = new TcpProxy();
    await proxy.start();
    cleanup.push(() => proxy.stop());
    const errors: unknown[] = [];
    const prefix = freshPrefix();
    const store = new RedisStore({ url: proxy.url, prefix, onError: (error) => errors.push(error) });
    cleanup.push(() => store.close());
    await store.init();
    const witness = new RedisStore({ url: REDIS_URL, prefix });
    cleanup.push(() => witness.close());
    await witness.init();
    let wakes = 0;
    store.onDue(() => wakes++);

    const before = makeTask();
    await store.insertTasks([before]);

    // A command in flight when the connection drops fails at once too (not resent later). It is sent on the driver's
    // own client, past the store's methods, so its error is named here as the store's boundary would name it.
    const blocked = store.redis.blpop(`{${prefix}:default}:never`, 5).catch((error: unknown) => {
      throw redisFailure(error);
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await proxy.stop();
    await failsPromptly(() => blocked);

    await failsPromptly(() => store.ping());
    await failsPromptly(() => store.insertTasks([makeTask()]));
    await failsPromptly(() => store.claimDue(T0, { limit: 10, leaseMs: 1_000, workerId: 'w' }));
    await failsPromptly(() => store.getTask('default', before.taskId));
    await failsPromptly(() => store.admin.countByStatus());
    // Meanwhile another instance makes work due: the wake-up is lost with the subscriber's connection.
    await witness.insertTasks([makeTask()]);
    // The store keeps trying to reconnect, reporting each refusal through onError (no unhandled 'error' event),
    // and still fails calls at once meanwhile.
    await waitFor('a refused reconnection', () => errors.some((error) => (error as { code?: string }).code === 'ECONNREFUSED'));
    await failsPromptly(() => store.nextDueAt());
    expect(wakes).toBe(0);

    await proxy.start();
    await waitFor('the store to reconnect', () => store.ping().then(() => true, () => false), 10_000);
    // Once its subscriber is back it wakes its listeners, since wake-ups may have been missed meanwhile.
    await waitFor('a wake-up after reconnecting', () => wakes > 0, 10_000);
    const after = makeTask();
    expect(await store.insertTasks([after])).toEqual([{ kind: 'inserted', task: after }]);
    expect((await store.claimDue(T0, { limit: 10, leaseMs: 1_000, workerId: 'w' })).length).toBe(3);
    expect(await store.getTask('default', after.taskId)).toMatchObject({ status: 'IN_FLIGHT' });

    // Wake-ups flow again.
    const seen = wakes;
    await witness.insertTasks([makeTask()]);
    await waitFor('a wake-up from the other instance', () => wakes > seen);
    // ioredis logs "[ioredis] Unhandled error event" when an 'error' has no listener: never here.
    expect(consoleError.mock.calls.flat().join(' ')).not.toMatch(/Unhandled error/);
  });

  it('rejects init promptly, and cleanly, when Redis cannot be reached', async () => {
    const proxy = new TcpProxy();
    await proxy.start();
    await proxy.stop(); // a port nobody listens on
    const store = new RedisStore({ url: proxy.url, prefix: freshPrefix(), onError: () => undefined });
    const started = performance.now();
    const error = await store.init().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isStoreUnavailable(error), String(error)).toBe(true);
    expect(performance.now() - started).toBeLessThan(PROMPT_MS);
    await store.close();
    // Closed for good: it does not connect once something listens on that port again.
    await proxy.start();
    cleanup.push(() => proxy.stop());
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(proxy.connections).toBe(0);
  });
});
