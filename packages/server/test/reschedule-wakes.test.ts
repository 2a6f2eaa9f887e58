import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { RedisStore } from '../src/backends/redis/redis-store.js';
import type { Store } from '../src/store/store.js';
import { T0, makeTask } from './fixtures/tasks.js';
import { postgresInstances } from './postgres-harness.js';
import { REDIS_URL, dropPrefixes } from './redis-harness.js';
import { closeOpened, opened } from './redis-store-harness.js';
import { waitFor } from './wait-for.js';

// A task rescheduled on one instance wakes the others (PostgreSQL NOTIFY, Redis pub/sub), so an engine whose timer
// aims at the task's old time (an hour away) aims again at once.

const HOUR = 3_600_000;

/** Reschedules a task due in an hour to `T0 + 10` on `writer`: the reader hears it. */
async function expectWake(writer: Store, wakes: () => number, waitFor: (condition: () => boolean, what: string) => Promise<void>) {
  const task = makeTask({ nextAttemptAt: T0 + HOUR });
  await writer.insertTasks([task]);
  await waitFor(() => wakes() === 1, 'the wake-up of the insert');
  const ref = { tenantId: task.tenantId, taskId: task.taskId };
  expect((await writer.rescheduleTask(ref, { expectedVersion: task.version, nextAttemptAt: T0 + 10, updatedAt: T0 + 10 })).kind).toBe('applied');
  await waitFor(() => wakes() === 2, 'the wake-up of the reschedule');
}

describe('a reschedule wakes the other instances', () => {
  describe('PostgreSQL', () => {
    const instances = postgresInstances();
    it('NOTIFY at commit, heard by another pool', async () => {
      const [writer, reader] = await instances(2);
      if (writer === undefined || reader === undefined) throw new Error('expected two stores');
      let wakes = 0;
      reader.onDue(() => wakes++);
      await reader.whenListening();
      await expectWake(writer, () => wakes, async (condition, what) => {
        await waitFor(what, condition);
      });
    });
  });

  describe('Redis', () => {
    afterEach(closeOpened);
    afterAll(dropPrefixes);
    it('PUBLISH on the due channel, heard by another instance on the prefix', async () => {
      const reader = await opened();
      const writer = await opened(new RedisStore({ url: REDIS_URL, prefix: reader.prefix }));
      let wakes = 0;
      reader.onDue(() => wakes++);
      await expectWake(writer, () => wakes, async (condition, what) => {
        await waitFor(what, condition);
      });
    });
  });
});
