import type { RetryPolicy } from '@retryd/core';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { PartitionKeys, partitionOf, subPartitionOf } from '../src/backends/redis/keys.js';
import { RedisStore } from '../src/backends/redis/redis-store.js';
import type { RetryTask } from '../src/domain/task.js';
import { makeTask } from './fixtures/tasks.js';
import { clusterForFile } from './redis-cluster-harness.js';
import { freshPrefix } from './redis-harness.js';
import { expectMoveAndBack } from './redis-sub-partition-move.js';
import { IdempotentDownstream, startServiceProcess, stopService } from './service-harness.js';
import { waitFor } from './wait-for.js';

// The in-place move between numbers of sub-partitions on a real Redis Cluster (3 masters, 3 replicas on loopback),
// where every task that moves changes slot, and most change master; then one tenant over 3 sub-partitions through the
// hard kill of one part's master. The conformance suite and the load spread on sub-partitions are in
// redis-cluster.test.ts.

const clusterOf = clusterForFile();

describe('Redis sub-partitions on Redis Cluster: the move, and a master killed', () => {
  it('moves a store from 1 sub-partition to 3 (one on each master) and back, every task, index, count, limit and hold kept', async () => {
    const prefix = freshPrefix();
    const parts = [0, 1, 2].map((i) => new PartitionKeys(prefix, subPartitionOf('default', i, 3)).base);
    expect(new Set(await Promise.all(parts.map((base) => clusterOf().masterOf(base)))).size).toBeGreaterThan(1);
    const stores: RedisStore[] = [];
    const open = async (subPartitions: number) => {
      const store = new RedisStore({ url: clusterOf().url(prefix), subPartitions });
      stores.push(store);
      await store.init();
      return store;
    };
    const reader = await open(1);
    try {
      await expectMoveAndBack(open, reader.redis as unknown as Redis, 'default', 3);
    } finally {
      for (const store of stores) await store.close().catch(() => undefined);
    }
  }, 120_000);

  // Last in the file: it kills a master.
  it("runs one tenant's tasks through the hard kill of one part's master: only what was not replicated is lost", async () => {
    const prefix = freshPrefix();
    const url = clusterOf().url(prefix);
    const tenantId = await clusterOf().tenantOverMasters(prefix);
    const victimPart = new PartitionKeys(prefix, subPartitionOf(tenantId, 1, 3));
    const victim = await clusterOf().masterOf(victimPart.base);
    const replica = await clusterOf().replicaOf(victim);
    const store = new RedisStore({ url, subPartitions: 3, onError: () => undefined });
    await store.init();
    const downstream = new IdempotentDownstream(1);
    const target = await downstream.start();
    const flags = ['--store', url, '--redis-sub-partitions', '3', '--allow-targets', '127.0.0.1/32', '--attempt-timeout', '1000', '--visibility-timeout', '2000'];
    const services = await Promise.all([0, 1].map(() => startServiceProcess([...flags, '--concurrency', '32', '--grace', '1000'])));
    try {
      // Every key answered 503 once, then retried within milliseconds.
      const policy: RetryPolicy = { maxAttempts: 20, backoffType: 'EXPONENTIAL', initialDelayMs: 1, multiplier: 2, maxDelayMs: 10, jitterType: 'FULL' };
      const taskOf = (key: string): RetryTask => {
        const now = Date.now();
        return makeTask({ tenantId, idempotencyKey: key, targetUrl: `${target}/charge`, policyId: 'inline', policy, nextAttemptAt: now, createdAt: now, updatedAt: now });
      };
      // Sent again until acknowledged (a failover may refuse it): the idempotency key makes a repeat a duplicate.
      const insert = (tasks: RetryTask[]) => waitFor('an insert acknowledged', () => store.insertTasks(tasks).then(() => true, () => false), 60_000);
      const before = Array.from({ length: 600 }, (_, n) => taskOf(`before-${n}`));
      for (let i = 0; i < before.length; i += 200) await insert(before.slice(i, i + 200));
      expect(await clusterOf().admin(victim).call('WAIT', '1', '10000')).toBe(1);
      await waitFor('a quarter of the keys processed', () => downstream.processed.size >= before.length / 4, 60_000);

      // One task after another while the master dies: those it acknowledged but had not replicated are lost.
      const acknowledged: RetryTask[] = [];
      let steady = true;
      const steadily = (async () => {
        for (let n = 0; steady; n++) {
          const task = taskOf(`steady-${n}`);
          await insert([task]);
          acknowledged.push(task);
        }
      })();
      await waitFor('a few steady tasks acknowledged', () => acknowledged.length >= 30, 30_000);
      await clusterOf().kill(victim);
      await waitFor('the replica to take over', async () => (await clusterOf().masterOf(victimPart.base).catch(() => 0)) === replica, 60_000);
      const after = Array.from({ length: 300 }, (_, n) => taskOf(`after-${n}`));
      for (let i = 0; i < after.length; i += 100) await insert(after.slice(i, i + 100));
      steady = false;
      await steadily;

      const found = await Promise.all(acknowledged.map((t) => store.getTask(tenantId, t.taskId)));
      const lost = acknowledged.filter((_, i) => found[i] === undefined);
      // Only the killed master's part can lose a write; the others' masters never went away.
      expect(lost.filter((t) => partitionOf(t, 3) !== victimPart.partition)).toEqual([]);
      const kept = [...before, ...after, ...acknowledged.filter((_, i) => found[i] !== undefined)];
      await waitFor('every key processed downstream', () => kept.every((t) => downstream.processed.has(t.idempotencyKey)), 120_000);
      await waitFor('every task SUCCEEDED', async () => (await store.countByStatus(tenantId).catch(() => undefined))?.SUCCEEDED === kept.length, 60_000);
      expect(kept.filter((t) => downstream.processed.get(t.idempotencyKey) !== 1)).toEqual([]);
      console.info(
        `hard kill of one part's master: ${kept.length} tasks SUCCEEDED; of ${acknowledged.length} enqueued one by one across the kill, ` +
          `${lost.length} acknowledged but lost (all in the killed part); ${downstream.replays} replays`,
      );
    } finally {
      await Promise.all(services.map((service) => stopService(service)));
      await downstream.close();
      await store.close();
    }
  }, 240_000);
});
