import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { PartitionKeys, subPartitionOf } from '../src/backends/redis/keys.js';
import { RedisStore } from '../src/backends/redis/redis-store.js';
import type { RetryTask } from '../src/domain/task.js';
import { T0, finalOutcome, makeAttempt, makeTask, retryOutcome } from './fixtures/tasks.js';
import { REDIS_URL, dropPrefixes, freshPrefix, keysOf } from './redis-harness.js';
import { admin, closeOpened, expectIndexesExact, opened } from './redis-store-harness.js';

// The move of a store's tasks from one number of sub-partitions per tenant to another, in place, at `init()`.

afterAll(dropPrefixes);
afterEach(closeOpened);

const A = 'https://a.example.com';
const B = 'https://b.example.com';
const lease = { leaseMs: 3_600_000, workerId: 'w' };

/** A store on `prefix` with `subPartitions`, opened (and so migrated). */
const storeOn = (prefix: string, subPartitions: number) => opened(new RedisStore({ url: REDIS_URL, prefix, subPartitions }));

/** Every task as the store reads it back by id, and its attempt log. */
async function snapshot(store: RedisStore, tasks: readonly RetryTask[]) {
  return Promise.all(
    tasks.map(async (task) => ({
      task: await store.getTask(task.tenantId, task.taskId),
      byKey: (await store.getTaskByIdempotencyKey(task.tenantId, task.idempotencyKey))?.taskId,
      attempts: (await store.listAttempts(task.tenantId, task.taskId, { limit: 50 })).items,
    })),
  );
}

describe('Redis sub-partition migration', () => {
  it('moves a store from 1 sub-partition to 4 and back, every task, index, count, limit and hold kept', async () => {
    const prefix = freshPrefix();
    const hold = Date.now() + 3_600_000;
    let store = await storeOn(prefix, 1);
    const tasks = [
      ...Array.from({ length: 60 }, (_, i) => makeTask({ targetUrl: `${A}/hook`, nextAttemptAt: T0 + i })),
      ...Array.from({ length: 30 }, (_, i) => makeTask({ targetUrl: `${B}/hook`, nextAttemptAt: T0 + i })),
      ...Array.from({ length: 20 }, (_, i) => makeTask({ tenantId: 'other', targetUrl: `${A}/hook`, nextAttemptAt: T0 + i })),
    ];
    await store.insertTasks(tasks);
    // Attempts, retries, ends (with retention) and leases held across the move.
    const claimed = await store.claimDue(T0 + 100, { limit: 40, ...lease });
    const [retried, ended, ...held] = claimed;
    if (retried === undefined || ended === undefined) throw new Error('expected claims');
    await store.completeAttempts(
      [
        { ...retried, attempt: makeAttempt(retried), next: retryOutcome(retried, T0 + 5_000) },
        { ...ended, attempt: makeAttempt(ended), next: { ...finalOutcome(ended, 'SUCCEEDED'), expiresAt: T0 + 86_400_000 } },
      ],
      T0 + 200,
    );
    await store.limitTarget({ tenantId: 'default', targetKey: A }, { ratePerSecond: null, burst: null, maxInFlight: 40 }, T0 + 300);
    await store.holdTarget({ tenantId: 'default', targetKey: B }, hold, T0 + 300);
    const before = await snapshot(store, tasks);
    const counts = await store.countByStatus();
    const viewA = await store.admin.getTarget({ tenantId: 'default', targetKey: A }, T0 + 400);
    await store.close();

    store = await storeOn(prefix, 4);
    const client = admin();
    expect(await client.get(`{${prefix}}:sub-partitions`)).toBe('4');
    expect(await snapshot(store, tasks)).toEqual(before);
    expect(await store.countByStatus()).toEqual(counts);
    const parts = [0, 1, 2, 3].map((i) => new PartitionKeys(prefix, subPartitionOf('default', i, 4)));
    for (const k of parts) {
      expect(await client.hlen(k.records)).toBeGreaterThan(5);
      await expectIndexesExact(client, k);
    }
    expect(await store.admin.getTarget({ tenantId: 'default', targetKey: A }, T0 + 400)).toEqual(viewA);
    expect((await store.admin.getTarget({ tenantId: 'default', targetKey: B }, T0 + 400))?.heldUntil).toBe(hold);
    // The leases held across the move end by their tokens, wherever their tasks went.
    const done = await store.completeAttempts(
      held.slice(0, 5).map((t) => ({ ...t, attempt: makeAttempt(t), next: finalOutcome(t, 'SUCCEEDED') })),
      T0 + 500,
    );
    expect(done.map((r) => r.kind)).toEqual(['applied', 'applied', 'applied', 'applied', 'applied']);
    const after4 = await snapshot(store, tasks);
    const counts4 = await store.countByStatus();
    await store.close();

    store = await storeOn(prefix, 1);
    expect(await client.exists(`{${prefix}}:sub-partitions`)).toBe(0);
    expect(await snapshot(store, tasks)).toEqual(after4);
    expect(await store.countByStatus()).toEqual(counts4);
    await expectIndexesExact(client, parts[0] as PartitionKeys);
    // Nothing is left of the parts no longer used.
    const left = (await keysOf(client, prefix)).filter((key) => parts.slice(1).some((k) => key.startsWith(k.base)));
    expect(left).toEqual([]);
    expect(await store.admin.getTarget({ tenantId: 'default', targetKey: A }, T0 + 600)).toMatchObject({
      maxInFlight: 40,
      inFlight: held.slice(5).filter((t) => t.tenantId === 'default' && t.targetKey === A).length,
    });
    // The rest is claimable as before.
    const rest = await store.claimDue(T0 + 10_000, { limit: 500, ...lease });
    expect(rest.length).toBeGreaterThan(0);
    expect(rest.every((t) => t.targetKey !== B)).toBe(true);
    client.disconnect();
  });
});
