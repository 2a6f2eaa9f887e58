import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { PartitionKeys, partitionOf, subIndexOf, subPartitionOf } from '../src/backends/redis/keys.js';
import { shareOf } from '../src/backends/redis/target-gate.js';
import { T0, makeAttempt, makeTask, retryOutcome } from './fixtures/tasks.js';
import { REDIS_URL, dropPrefixes, freshPrefix, freshStore, keySlot } from './redis-harness.js';
import { admin, closeOpened, opened } from './redis-store-harness.js';
import { runCli, startServiceProcess, stopService } from './service-harness.js';

// One tenant over several sub-partitions (`subPartitions`): where its tasks go, and what the gate does with a target
// whose queue is split. The conformance suite runs on such a store too (redis-store.test.ts).

afterAll(dropPrefixes);
afterEach(closeOpened);

const lease = { leaseMs: 60_000, workerId: 'w' };
const A = 'https://a.example.com';

describe('Redis sub-partitions', () => {
  it('spreads one tenant over every sub-partition, each task with its key and its log in one slot', async () => {
    const store = await opened(freshStore({ subPartitions: 4 }));
    const tasks = Array.from({ length: 200 }, () => makeTask());
    await store.insertTasks(tasks);
    const client = admin();
    const parts = [0, 1, 2, 3].map((i) => new PartitionKeys(store.prefix, subPartitionOf('default', i, 4)));
    // Evenly spaced round the slot space from the home's slot: a quarter of the way apart, within 32 slots.
    const slots = parts.map((k) => keySlot(k.records));
    for (const [i, slot] of slots.entries()) expect((slot - (slots[0] as number) - i * 4_096 + 16_384) % 16_384).toBeLessThan(32);
    const sizes = await Promise.all(parts.map((k) => client.hlen(k.records)));
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(200);
    for (const size of sizes) expect(size).toBeGreaterThan(20);
    const [claimed] = await store.claimDue(T0, { limit: 1, ...lease });
    if (claimed === undefined) throw new Error('expected a claim');
    await store.completeAttempts([{ ...claimed, attempt: makeAttempt(claimed), next: retryOutcome(claimed, T0 + 5_000) }], T0 + 1);
    const home = parts.find((k) => k.partition === partitionOf(claimed, 4)) as PartitionKeys;
    expect(await client.hget(home.idem, claimed.idempotencyKey)).toBe(claimed.taskId);
    expect(await client.hexists(home.records, claimed.taskId)).toBe(1);
    expect(await client.zcard(home.attempts(claimed.taskId))).toBe(1);
    expect(new Set([home.idem, home.records, home.attempts(claimed.taskId)].map(keySlot)).size).toBe(1);
    expect((await store.countByStatus('default')).PENDING).toBe(200);
    client.disconnect();
  });

  it('keeps one task per idempotency key, whichever task id a later enqueue brings', async () => {
    const store = await opened(freshStore({ subPartitions: 8 }));
    const first = makeTask({ idempotencyKey: 'order-42' });
    await store.insertTasks([first]);
    for (let i = 0; i < 10; i++) {
      const [result] = await store.insertTasks([makeTask({ idempotencyKey: 'order-42' })]);
      expect(result?.kind).toBe('duplicate');
      expect(result?.task.taskId).toBe(first.taskId);
    }
    expect((await store.getTaskByIdempotencyKey('default', 'order-42'))?.taskId).toBe(first.taskId);
    expect((await store.countByStatus('default')).PENDING).toBe(1);
  });

  it("shares a target's in-flight limit over the sub-partitions, never past it, and holds every part", async () => {
    const store = await opened(freshStore({ subPartitions: 4 }));
    await store.insertTasks(Array.from({ length: 80 }, (_, i) => makeTask({ targetUrl: `${A}/hook`, nextAttemptAt: T0 + i / 1_000 })));
    await store.limitTarget({ tenantId: 'default', targetKey: A }, { ratePerSecond: null, burst: null, maxInFlight: 8 }, T0);
    let inFlight = 0;
    for (let round = 0; round < 5; round++) inFlight += (await store.claimDue(T0 + 1 + round, { limit: 20, ...lease })).length;
    // Each part's share is 2; a part with fewer due tasks than its share leaves the rest of it unused.
    expect(inFlight).toBeLessThanOrEqual(8);
    expect(inFlight).toBeGreaterThan(0);
    const view = await store.admin.getTarget({ tenantId: 'default', targetKey: A }, T0 + 10);
    expect(view).toMatchObject({ maxInFlight: 8, ratePerSecond: null, inFlight });

    await store.limitTarget({ tenantId: 'default', targetKey: A }, { ratePerSecond: null, burst: null, maxInFlight: null }, T0 + 11);
    await store.holdTarget({ tenantId: 'default', targetKey: A }, T0 + 1_000, T0 + 11);
    expect(await store.claimDue(T0 + 12, { limit: 50, ...lease })).toEqual([]);
    expect(await store.nextDueAt()).toBe(T0 + 1_000);
    await store.releaseTarget({ tenantId: 'default', targetKey: A }, T0 + 13);
    expect(await store.claimDue(T0 + 14, { limit: 100, ...lease })).toHaveLength(80 - inFlight);
  });

  it('splits limits into shares that add up to the limit, each part at least one slot and one token', () => {
    const shares = [0, 1, 2, 3].map((i) => shareOf({ ratePerSecond: 10, burst: 6, maxInFlight: 10 }, i, 4));
    expect(shares.map((s) => s.maxInFlight)).toEqual([3, 3, 2, 2]);
    expect(shares.map((s) => s.ratePerSecond)).toEqual([2.5, 2.5, 2.5, 2.5]);
    expect(shares.map((s) => s.burst)).toEqual([1.5, 1.5, 1.5, 1.5]);
    expect([0, 1, 2, 3].map((i) => shareOf({ ratePerSecond: null, burst: null, maxInFlight: 2 }, i, 4).maxInFlight)).toEqual([1, 1, 1, 1]);
    expect(shareOf({ ratePerSecond: null, burst: null, maxInFlight: 0 }, 3, 4).maxInFlight).toBe(0);
  });

  it('places keys and names parts as stored data expects: a change here moves every task, so only a migration may', () => {
    expect([subIndexOf('order-42', 8), subIndexOf('', 4), subIndexOf('019abd2e-5f3a-7c41-9e2b-4f0a1c2d3e4f', 16)]).toEqual([4, 1, 12]);
    expect(new PartitionKeys('retryd', 'default').base).toBe('{retryd:default}:');
    expect(new PartitionKeys('retryd', subPartitionOf('default', 1, 3)).base).toBe('{retryd:default:1.3.342}:');
    expect(new PartitionKeys('retryd', subPartitionOf('default', 2, 3)).base).toBe('{retryd:default:2.3.660}:');
    expect(partitionOf(makeTask({ tenantId: 'acme', idempotencyKey: 'order-42' }), 1)).toBe('acme');
  });

  it('refuses a number of sub-partitions outside 1 to 256, naming the option', () => {
    expect(() => freshStore({ subPartitions: 0 })).toThrow('Expected `subPartitions` to be a whole number from 1 to 256; got 0.');
    expect(() => freshStore({ subPartitions: 2.5 })).toThrow(/subPartitions/);
  });

  it('takes --redis-sub-partitions or RETRYD_REDIS_SUB_PARTITIONS on a Redis store, says so at start, and refuses it elsewhere', async () => {
    const prefix = freshPrefix();
    const running = await startServiceProcess(['--store', `${REDIS_URL}?prefix=${prefix}`], { RETRYD_REDIS_SUB_PARTITIONS: '3' });
    try {
      expect(running.logs.find((l) => l.event === 'start')).toMatchObject({ redisSubPartitions: 3 });
    } finally {
      await stopService(running);
    }
    const client = admin();
    expect(await client.get(`{${prefix}}:sub-partitions`)).toBe('3');
    client.disconnect();
    const elsewhere = await runCli(['serve', '--port', '0', '--store', 'sqlite::memory:', '--redis-sub-partitions', '4']);
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr.trim()).toBe('retryd: --redis-sub-partitions applies to a Redis store (redis://, rediss://, redis+cluster://) only; --store is not one');
    const tooMany = await runCli(['serve', '--port', '0', '--store', `${REDIS_URL}?prefix=${prefix}`, '--redis-sub-partitions', '257']);
    expect(tooMany.code).toBe(2);
    expect(tooMany.stderr).toContain('--redis-sub-partitions must be an integer from 1 to 256');
  }, 60_000);
});
