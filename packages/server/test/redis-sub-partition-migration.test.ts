import { afterAll, afterEach, describe, it } from 'vitest';
import { RedisStore } from '../src/backends/redis/redis-store.js';
import { REDIS_URL, dropPrefixes, freshPrefix } from './redis-harness.js';
import { admin, closeOpened, opened } from './redis-store-harness.js';
import { expectMoveAndBack } from './redis-sub-partition-move.js';

// The move of a store's tasks from one number of sub-partitions per tenant to another, in place, at `init()`, on
// one Redis server (redis-cluster-sub-partitions.test.ts runs it on the cluster).

afterAll(dropPrefixes);
afterEach(closeOpened);

describe('Redis sub-partition migration', () => {
  it('moves a store from 1 sub-partition to 4 and back, every task, index, count, limit and hold kept', async () => {
    const prefix = freshPrefix();
    const client = admin();
    try {
      await expectMoveAndBack((subPartitions) => opened(new RedisStore({ url: REDIS_URL, prefix, subPartitions })), client, 'default', 4);
    } finally {
      client.disconnect();
    }
  });
});
