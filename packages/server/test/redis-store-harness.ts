import { expect } from 'vitest';
import type { Redis } from 'ioredis';
import type { PartitionKeys } from '../src/backends/redis/keys.js';
import type { RedisStore } from '../src/backends/redis/redis-store.js';
import { adminClient, freshStore } from './redis-harness.js';

// What the Redis store's test files share: stores and admin clients that are closed after each test, and the check
// that a partition's indexes agree with its tasks. Each file registers the clean-ups itself:
//
//   afterAll(dropPrefixes);
//   afterEach(closeOpened);

const open: RedisStore[] = [];
const admins: Redis[] = [];

/** Initialises `store` (default: a fresh one on its own prefix) and closes it after the test. */
export async function opened(store = freshStore()): Promise<RedisStore> {
  open.push(store);
  await store.init();
  return store;
}

/** A plain client for looking at keys from outside the store, disconnected after the test. */
export function admin(): Redis {
  const client = adminClient();
  admins.push(client);
  return client;
}

/** Registers a client made elsewhere (a MONITOR connection) to be disconnected after the test. */
export function disconnectAfterTest(client: Redis): void {
  admins.push(client);
}

/** Closes the stores and disconnects the clients of the test that just ended (an `afterEach` hook). */
export async function closeOpened(): Promise<void> {
  await Promise.all(open.splice(0).map((store) => store.close()));
  for (const client of admins.splice(0)) client.disconnect();
}

/**
 * Checks a partition's indexes against its tasks: each target's queue holds exactly its PENDING tasks by due time,
 * and `ready` scores exactly the targets with a PENDING task, at max(earliest due, hold).
 */
export async function expectIndexesExact(client: Redis, k: PartitionKeys): Promise<void> {
  const targets = await client.zrange(k.targets, 0, -1);
  const holds = await client.hgetall(k.holds);
  const ready = await client.zrange(k.ready, 0, -1, 'WITHSCORES');
  const readyScores = new Map<string, number>();
  for (let i = 0; i + 1 < ready.length; i += 2) readyScores.set(ready[i] as string, Number(ready[i + 1]));
  const pending = new Set((await client.zrange(k.status('PENDING'), 0, -1)).map((member) => member.slice(16)));
  let queued = 0;
  for (const target of targets) {
    const queue = await client.zrange(k.queue(target), 0, -1, 'WITHSCORES');
    for (let i = 0; i < queue.length; i += 2) {
      const [status, due, owner] = await client.hmget(k.task(queue[i] as string), 'status', 'due', 'target');
      expect([status, Number(due), owner]).toEqual(['PENDING', Number(queue[i + 1]), target]);
      expect(pending.has(queue[i] as string)).toBe(true);
      queued++;
    }
    const hold = holds[target] === undefined ? -Infinity : Number(holds[target]);
    expect(readyScores.get(target), target).toBe(queue.length === 0 ? undefined : Math.max(Number(queue[1]), hold));
  }
  expect(queued).toBe(pending.size);
  expect([...readyScores.keys()].every((target) => targets.includes(target))).toBe(true);
}
