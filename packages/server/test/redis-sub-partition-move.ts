import type { Redis } from 'ioredis';
import { expect } from 'vitest';
import { PartitionKeys, subPartitionOf } from '../src/backends/redis/keys.js';
import type { RedisStore } from '../src/backends/redis/redis-store.js';
import type { RetryTask } from '../src/domain/task.js';
import { T0, finalOutcome, makeAttempt, makeTask, retryOutcome } from './fixtures/tasks.js';
import { expectIndexesExact } from './redis-store-harness.js';

// One check of the in-place move between numbers of sub-partitions, run on one Redis server and on the cluster.

const A = 'https://a.example.com';
const B = 'https://b.example.com';
const lease = { leaseMs: 3_600_000, workerId: 'w' };

/** Every task as the store reads it back by id and by key, and its attempt log. */
async function snapshot(store: RedisStore, tasks: readonly RetryTask[]) {
  return Promise.all(
    tasks.map(async (task) => ({
      task: await store.getTask(task.tenantId, task.taskId),
      byKey: (await store.getTaskByIdempotencyKey(task.tenantId, task.idempotencyKey))?.taskId,
      attempts: (await store.listAttempts(task.tenantId, task.taskId, { limit: 50 })).items,
    })),
  );
}

/**
 * Fills a store of `tenantId` (and of a second tenant) on 1 sub-partition with PENDING, IN_FLIGHT, retried and ended
 * tasks, a limit and a hold; reopens it on `n`, then on 1 again (`open(n)` opens, and so moves, the same prefix),
 * and checks after each move that every task, attempt log, count, index, limit and hold is as it was, and that
 * nothing is left of the parts no longer used. `client` reads the keys (a `Cluster` on Redis Cluster).
 */
export async function expectMoveAndBack(open: (subPartitions: number) => Promise<RedisStore>, client: Redis, tenantId: string, n: number): Promise<void> {
  const hold = Date.now() + 3_600_000;
  let store = await open(1);
  const prefix = store.prefix;
  const tasks = [
    ...Array.from({ length: 60 }, (_, i) => makeTask({ tenantId, targetUrl: `${A}/hook`, nextAttemptAt: T0 + i })),
    ...Array.from({ length: 30 }, (_, i) => makeTask({ tenantId, targetUrl: `${B}/hook`, nextAttemptAt: T0 + i })),
    ...Array.from({ length: 20 }, (_, i) => makeTask({ tenantId: 'other', targetUrl: `${A}/hook`, nextAttemptAt: T0 + i })),
  ];
  await store.insertTasks(tasks);
  // Attempts, retries, ends (with retention) and leases held across the move.
  const [retried, ended, ...held] = await store.claimDue(T0 + 100, { limit: 40, ...lease });
  if (retried === undefined || ended === undefined) throw new Error('expected claims');
  await store.completeAttempts(
    [
      { ...retried, attempt: makeAttempt(retried), next: retryOutcome(retried, T0 + 5_000) },
      { ...ended, attempt: makeAttempt(ended), next: { ...finalOutcome(ended, 'SUCCEEDED'), expiresAt: T0 + 86_400_000 } },
    ],
    T0 + 200,
  );
  await store.limitTarget({ tenantId, targetKey: A }, { ratePerSecond: null, burst: null, maxInFlight: 40 }, T0 + 300);
  await store.holdTarget({ tenantId, targetKey: B }, hold, T0 + 300);
  const before = await snapshot(store, tasks);
  const counts = await store.countByStatus();
  const viewA = await store.admin.getTarget({ tenantId, targetKey: A }, T0 + 400);
  await store.close();

  store = await open(n);
  expect(await client.get(`{${prefix}}:sub-partitions`)).toBe(String(n));
  expect(await snapshot(store, tasks)).toEqual(before);
  expect(await store.countByStatus()).toEqual(counts);
  const parts = Array.from({ length: n }, (_, i) => new PartitionKeys(prefix, subPartitionOf(tenantId, i, n)));
  for (const k of parts) {
    expect(await client.hlen(k.records)).toBeGreaterThan(5);
    await expectIndexesExact(client, k);
  }
  expect(await store.admin.getTarget({ tenantId, targetKey: A }, T0 + 400)).toEqual(viewA);
  expect((await store.admin.getTarget({ tenantId, targetKey: B }, T0 + 400))?.heldUntil).toBe(hold);
  // The leases held across the move end by their tokens, wherever their tasks went.
  const done = await store.completeAttempts(
    held.slice(0, 5).map((t) => ({ ...t, attempt: makeAttempt(t), next: finalOutcome(t, 'SUCCEEDED') })),
    T0 + 500,
  );
  expect(done.map((r) => r.kind)).toEqual(['applied', 'applied', 'applied', 'applied', 'applied']);
  const afterMove = await snapshot(store, tasks);
  const countsAfterMove = await store.countByStatus();
  await store.close();

  store = await open(1);
  expect(await client.exists(`{${prefix}}:sub-partitions`)).toBe(0);
  expect(await snapshot(store, tasks)).toEqual(afterMove);
  expect(await store.countByStatus()).toEqual(countsAfterMove);
  await expectIndexesExact(client, parts[0] as PartitionKeys);
  // Nothing is left of the parts no longer used (one EXISTS a key: each part is its own slot).
  for (const k of parts.slice(1)) {
    const keys = [k.records, k.taskData, k.idem, k.ready, k.targets, k.leases, k.counts, k.gateSettings, k.gate(A), k.queue(A), ...k.listings];
    for (const key of keys) expect(await client.exists(key), key).toBe(0);
  }
  expect(await store.admin.getTarget({ tenantId, targetKey: A }, T0 + 600)).toMatchObject({
    maxInFlight: 40,
    inFlight: held.slice(5).filter((t) => t.tenantId === tenantId && t.targetKey === A).length,
  });
  // The rest is claimable as before, but the held target's.
  const rest = await store.claimDue(T0 + 10_000, { limit: 500, ...lease });
  expect(rest.length).toBeGreaterThan(0);
  expect(rest.every((t) => !(t.tenantId === tenantId && t.targetKey === B))).toBe(true);
  await store.close();
}
