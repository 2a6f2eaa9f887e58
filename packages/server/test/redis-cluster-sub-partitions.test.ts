import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PartitionKeys, subPartitionOf } from '../src/backends/redis/keys.js';
import { RedisStore } from '../src/backends/redis/redis-store.js';
import { RedisCluster } from './redis-cluster-harness.js';
import { freshPrefix } from './redis-harness.js';
import { expectMoveAndBack } from './redis-sub-partition-move.js';

// The in-place move between numbers of sub-partitions on a real Redis Cluster (3 masters, 3 replicas on loopback),
// where every task that moves changes slot, and most change master. The conformance suite and the load spread on
// sub-partitions are in redis-cluster.test.ts.

let cluster: RedisCluster | undefined;
const clusterOf = (): RedisCluster => {
  if (cluster === undefined) throw new Error('The cluster is only available inside a test.');
  return cluster;
};

beforeAll(async () => {
  cluster = await RedisCluster.start();
}, 90_000);
afterAll(async () => cluster?.stop());

describe('Redis sub-partition migration on Redis Cluster', () => {
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
});
