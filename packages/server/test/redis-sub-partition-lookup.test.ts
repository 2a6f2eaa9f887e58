import { describe, expect, it } from 'vitest';
import type { RedisClient } from '../src/backends/redis/connection.js';
import type { PartitionRegistry } from '../src/backends/redis/partitions.js';
import { SubPartitions } from '../src/backends/redis/sub-partitions.js';

// Where a task is without a round trip: with one sub-partition, or for tasks this store remembers. The connection and
// the registry handed in throw on any use, so a test passes only if nothing was read.

const untouchable = <T extends object>(name: string): T =>
  new Proxy({} as T, {
    get: (_, property) => {
      throw new Error(`${name}.${String(property)} was used`);
    },
  });

const subPartitions = (count: number) => new SubPartitions(count, untouchable<RedisClient>('client'), untouchable<PartitionRegistry>('registry'));

describe('SubPartitions.locateWithoutReading', () => {
  it("answers each task's tenant at once with one sub-partition, as locate does", async () => {
    const subs = subPartitions(1);
    const refs = [
      { tenantId: 'a', taskId: '1' },
      { tenantId: 'b', taskId: '2' },
    ];
    expect(subs.locateWithoutReading(refs)).toEqual(['a', 'b']);
    expect(await subs.locate(refs)).toEqual(['a', 'b']);
  });

  it('answers remembered tasks with several, and leaves the rest to locate', () => {
    const subs = subPartitions(4);
    subs.remember('a', '1', 'a:2');
    subs.remember('a', '2', 'a:3');
    expect(subs.locateWithoutReading([{ tenantId: 'a', taskId: '1' }, { tenantId: 'a', taskId: '2' }])).toEqual(['a:2', 'a:3']);
    expect(subs.locateWithoutReading([{ tenantId: 'a', taskId: '1' }, { tenantId: 'a', taskId: '9' }])).toBeUndefined();
    subs.forget('a', '1');
    expect(subs.locateWithoutReading([{ tenantId: 'a', taskId: '1' }])).toBeUndefined();
    expect(subs.locateWithoutReading([])).toEqual([]);
  });
});
