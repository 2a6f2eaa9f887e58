import type { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { TaskStatus } from '@retryd/core';
import { PartitionKeys } from '../src/backends/redis/keys.js';
import { shareOut } from '../src/backends/redis/purge-expired.js';
import type { RedisStore } from '../src/backends/redis/redis-store.js';
import { DATA_FIELDS } from '../src/backends/redis/task-codec.js';
import type { RetryTask } from '../src/domain/task.js';
import type { AttemptCompletion, PurgedTask, TaskOutcome } from '../src/store/store.js';
import { T0, finalOutcome, makeAttempt, makeTask, retryOutcome } from './fixtures/tasks.js';
import { adminClient, dropPrefixes, keysOf } from './redis-harness.js';
import { admin, closeOpened, expectIndexesExact, monitorCommands, opened, readRecord } from './redis-store-harness.js';
import { waitFor } from './wait-for.js';
import { insertStoredTasks } from './fixtures/stored-tasks.js';

// The Redis store's retention: the `expiring` index the scripts keep, and what `purge-expired.lua` deletes (the
// behaviour every store shares is in the conformance suite, store-conformance/retention-cases.ts).

afterAll(dropPrefixes);
afterEach(closeOpened);

const DAY = 86_400_000;
const lease = { leaseMs: 1_000, workerId: 'w' };

/** A task inserted as having ended in `status`, to be deleted at `expiresAt`. */
const ended = (status: TaskStatus, expiresAt: number | null, overrides: Partial<RetryTask> = {}) =>
  makeTask({ status, nextAttemptAt: null, attemptNumber: 1, updatedAt: T0 + 1, expiresAt, ...overrides });

/** Inserts `task` (due at `now`, the only task due then) and claims it. */
async function claimOne(store: RedisStore, task: RetryTask, now = T0): Promise<RetryTask> {
  await store.insertTasks([task]);
  return claimAgain(store, task, now);
}

async function claimAgain(store: RedisStore, task: RetryTask, now: number): Promise<RetryTask> {
  const held = await store.claimDue(now, { limit: 1, ...lease });
  expect(held.map((t) => t.taskId)).toEqual([task.taskId]);
  return held[0] as RetryTask;
}

/** Ends the attempt of `held` with `next`, logging it. */
async function complete(store: RedisStore, held: RetryTask, next: TaskOutcome, extra: Partial<AttemptCompletion> = {}): Promise<void> {
  const completion: AttemptCompletion = { tenantId: held.tenantId, taskId: held.taskId, fencingToken: held.fencingToken, attempt: makeAttempt(held), next, ...extra };
  expect(await store.completeAttempts([completion], T0 + 50)).toMatchObject([{ kind: 'applied' }]);
}

/**
 * Every key of a prefix with its whole content (hashes and sets sorted, sorted sets with their scores), the `counts`
 * hashes without their zero counts (a status whose last task went keeps its field at 0).
 */
async function contentOf(client: Redis, prefix: string): Promise<Record<string, unknown>> {
  const content: Record<string, unknown> = {};
  for (const key of (await keysOf(client, prefix)).sort()) {
    const type = await client.type(key);
    if (type === 'hash') {
      const entries = Object.entries(await client.hgetall(key)).sort();
      content[key] = key.endsWith('}:counts') ? entries.filter(([, n]) => n !== '0') : entries;
    } else if (type === 'zset') content[key] = await client.zrange(key, 0, -1, 'WITHSCORES');
    else if (type === 'set') content[key] = (await client.smembers(key)).sort();
    else content[key] = [type, await client.get(key)];
  }
  return content;
}

const byTenant = (purged: readonly PurgedTask[]) => {
  const counts: Record<string, number> = {};
  for (const { tenantId } of purged) counts[tenantId] = (counts[tenantId] ?? 0) + 1;
  return counts;
};

describe('Redis store: retention', () => {
  it('deletes every key and entry a purged task had: the keys come back to what they were before its tasks, entry for entry', async () => {
    const store = await opened();
    const client = admin();
    const tenants = ['default', 'other'];
    // What stays: a live task in each tenant, on the target the others use, claimed once and retried far ahead, so
    // that what belongs to the target (its place in `targets`, its gate) is there before.
    for (const tenantId of tenants) {
      const anchor = await claimOne(store, makeTask({ tenantId }));
      await complete(store, anchor, retryOutcome(anchor, T0 + 60 * DAY));
    }
    const before = await contentOf(client, store.prefix);

    const made: { task: RetryTask; status: TaskStatus; bodyRef: string | null }[] = [];
    for (const tenantId of tenants) {
      // Succeeded at its first attempt.
      const succeeded = await claimOne(store, makeTask({ tenantId }));
      await complete(store, succeeded, { ...finalOutcome(succeeded, 'SUCCEEDED'), expiresAt: T0 + 1_000 });
      // Failed at its second, after a retry: two log entries.
      const failed = await claimOne(store, makeTask({ tenantId }));
      await complete(store, failed, retryOutcome(failed, T0 + 10));
      const again = await claimAgain(store, failed, T0 + 10);
      await complete(store, again, { ...finalOutcome(again, 'FAILED'), expiresAt: T0 + 2_000 });
      // Cancelled while PENDING, and during its attempt (the cancel alternative and its own log entry).
      const pending = makeTask({ tenantId, nextAttemptAt: T0 + DAY });
      await store.insertTasks([pending]);
      expect((await store.cancelTask({ tenantId, taskId: pending.taskId }, T0 + 3, T0 + 3_000)).kind).toBe('applied');
      const cancelled = await claimOne(store, makeTask({ tenantId }));
      await store.requestCancel({ tenantId, taskId: cancelled.taskId }, T0 + 4);
      await complete(store, cancelled, retryOutcome(cancelled, T0 + 20), {
        ifCancelRequested: { ...finalOutcome(cancelled, 'CANCELLED'), expiresAt: T0 + 4_000 },
        attemptIfCancelRequested: makeAttempt(cancelled, { outcome: 'cancelled', nextAttemptAt: null }),
      });
      // Inserted as a dead letter, its body kept apart.
      const exhausted = ended('EXHAUSTED', T0 + 5_000, { tenantId, body: null, bodyRef: `${tenantId}/body-1` });
      await insertStoredTasks(store, [exhausted]);
      made.push(
        { task: succeeded, status: 'SUCCEEDED', bodyRef: null },
        { task: failed, status: 'FAILED', bodyRef: null },
        { task: pending, status: 'CANCELLED', bodyRef: null },
        { task: cancelled, status: 'CANCELLED', bodyRef: null },
        { task: exhausted, status: 'EXHAUSTED', bodyRef: exhausted.bodyRef },
      );
      const k = new PartitionKeys(store.prefix, tenantId);
      await expectIndexesExact(client, k);
      expect(await client.zcard(k.expiring)).toBe(5);
      expect(await client.zcard(k.attempts(failed.taskId))).toBe(2);
    }

    // The purge takes each partition's earliest first, and nothing later than now.
    const first = await store.purgeExpired(T0 + 4_999, 100);
    expect(byTenant(first)).toEqual({ default: 4, other: 4 });
    for (const tenantId of tenants) await expectIndexesExact(client, new PartitionKeys(store.prefix, tenantId));
    const rest = await store.purgeExpired(T0 + 5_000, 100);
    const expected = made.map(({ task, status, bodyRef }) => ({ tenantId: task.tenantId, taskId: task.taskId, status, bodyRef }));
    const order = (a: PurgedTask, b: PurgedTask) => (a.taskId < b.taskId ? -1 : 1);
    expect([...first, ...rest].sort(order)).toEqual(expected.sort(order));
    expect(await contentOf(client, store.prefix)).toEqual(before);
    expect(await store.purgeExpired(T0 + 60 * DAY, 100)).toEqual([]);
  });

  it('shares one call\'s limit among the partitions with expired tasks, each earliest first, and never deletes more', async () => {
    const store = await opened();
    const sizes: Record<string, number> = { few: 1, many: 6, more: 6 };
    const tasks = Object.entries(sizes).flatMap(([tenantId, n]) => Array.from({ length: n }, (_, i) => ended('SUCCEEDED', T0 + i, { tenantId })));
    await insertStoredTasks(store, [...tasks, ended('SUCCEEDED', T0 + 500, { tenantId: 'many' })]);

    const first = await store.purgeExpired(T0 + 100, 5);
    expect(byTenant(first)).toEqual({ few: 1, many: 2, more: 2 });
    for (const tenantId of ['many', 'more']) {
      const earliest = tasks.filter((t) => t.tenantId === tenantId).slice(0, 2);
      expect(first.filter((p) => p.tenantId === tenantId).map((p) => p.taskId)).toEqual(earliest.map((t) => t.taskId));
    }
    const purged = [...first];
    for (let call = 0; call < 5; call++) {
      const batch = await store.purgeExpired(T0 + 100, 5);
      expect(batch.length).toBeLessThanOrEqual(5);
      purged.push(...batch);
    }
    expect(purged.map((p) => p.taskId).sort()).toEqual(tasks.map((t) => t.taskId).sort());
    expect(await store.admin.countByStatus()).toMatchObject({ SUCCEEDED: 1 });
  });

  it('shares a limit so that the shares add up to it (or to all there is), the partitions with the fewest first', () => {
    expect(shareOut(10, [1, 50, 0, 50])).toEqual([1, 5, 0, 4]);
    expect(shareOut(2, [2, 1])).toEqual([1, 1]);
    expect(shareOut(5, [3, 3, 3])).toEqual([2, 2, 1]);
    expect(shareOut(100, [3, 0, 7])).toEqual([3, 0, 7]);
    expect(shareOut(2, [9, 1, 1, 1])).toEqual([0, 1, 1, 0]);
    expect(shareOut(7, [0, 0])).toEqual([0, 0]);
    for (let limit = 1; limit < 40; limit++) {
      const counts = [0, 3, 11, 1, 25, 7];
      const shares = shareOut(limit, counts);
      expect(shares.reduce((a, b) => a + b, 0)).toBe(Math.min(limit, 47));
      shares.forEach((share, i) => expect(share).toBeLessThanOrEqual(counts[i] as number));
    }
  });

  it('reads a record written before `expires` existed as kept for good, and mends entries a retryd without retention left behind', async () => {
    const store = await opened();
    const client = admin();
    const k = new PartitionKeys(store.prefix, 'default');
    const live = makeTask();
    const old = ended('SUCCEEDED', null);
    const later = ended('SUCCEEDED', T0 + 10_000);
    await insertStoredTasks(store, [live, old, later]);
    // Layout 6's record: 18 values, `sortKey` last (`expires` and then `callback` came after it).
    await client.eval("local v = cmsgpack.unpack(redis.call('HGET', KEYS[1], ARGV[1])) v[#v] = nil v[#v] = nil redis.call('HSET', KEYS[1], ARGV[1], cmsgpack.pack(v))", 1, k.records, old.taskId);
    const length = "return #cmsgpack.unpack(redis.call('HGET', KEYS[1], ARGV[1]))";
    expect(await client.eval(length, 1, k.records, old.taskId)).toBe(18);
    expect((await readRecord(client, k, old.taskId))?.expires).toBeNull();
    expect(await store.getTask('default', old.taskId)).toEqual(old);

    // A live task, a finished one without `expires`, one whose `expires` is later, and one that is gone.
    await client.zadd(k.expiring, String(T0), live.taskId, String(T0), old.taskId, String(T0), later.taskId, String(T0), 'no-such-task');
    expect(await store.purgeExpired(T0 + 5_000, 10)).toEqual([]);
    for (const task of [live, old, later]) expect(await store.getTask('default', task.taskId)).toEqual(task);
    expect(await client.zrange(k.expiring, 0, -1, 'WITHSCORES')).toEqual([later.taskId, String(T0 + 10_000)]);
    await expectIndexesExact(client, k);
    expect((await store.purgeExpired(T0 + 10_000, 10)).map((p) => p.taskId)).toEqual([later.taskId]);
  });

  it('frees idempotency keys of any text, and reads the data JSON of layout 4 (an object)', async () => {
    const store = await opened();
    const client = admin();
    const k = new PartitionKeys(store.prefix, 'default');
    // A lone surrogate (JSON.stringify writes the escape cjson refuses; `idem` holds U+FFFD), control characters, and
    // a backslash before text that reads like an escape.
    const keys = ['k"\\\u0001\né\u{1F600}\ud800', 'a\\ud800b', 'a\\\ud800b'];
    const tasks = keys.map((idempotencyKey, i) => ended('SUCCEEDED', T0 + i, { idempotencyKey }));
    const object = ended('EXHAUSTED', T0 + 10, { body: null, bodyRef: 'default/b1' });
    await insertStoredTasks(store, [...tasks, object]);
    await client.hset(k.taskData, object.taskId, JSON.stringify(Object.fromEntries(DATA_FIELDS.map((name) => [name, object[name]]))));
    expect(await store.getTask('default', object.taskId)).toEqual(object);

    const purged = await store.purgeExpired(T0 + 10, 10);
    expect(purged.map((p) => [p.taskId, p.bodyRef])).toEqual([...tasks.map((t) => [t.taskId, null]), [object.taskId, 'default/b1']]);
    expect(await client.hlen(k.idem)).toBe(0);
    for (const idempotencyKey of keys) {
      expect(await store.getTaskByIdempotencyKey('default', idempotencyKey)).toBeUndefined();
      expect((await store.insertTasks([makeTask({ idempotencyKey })]))[0]?.kind).toBe('inserted');
    }
  });

  it('keeps a task whose data JSON cannot be read, out of the index, rather than leave its idempotency key naming nothing', async () => {
    const store = await opened();
    const client = admin();
    const k = new PartitionKeys(store.prefix, 'default');
    const [broken, fine] = [ended('SUCCEEDED', T0), ended('SUCCEEDED', T0 + 1)];
    await insertStoredTasks(store, [broken, fine]);
    await client.hset(k.taskData, broken.taskId, '[not json');
    expect((await store.purgeExpired(T0 + 1, 10)).map((p) => p.taskId)).toEqual([fine.taskId]);
    expect(await client.hexists(k.records, broken.taskId)).toBe(1);
    expect(await client.hget(k.idem, broken.idempotencyKey)).toBe(broken.taskId);
    expect(await client.zcard(k.expiring)).toBe(0);
  });

  it('costs an attempt that is retried no more than before, and one that ends a single ZADD', async () => {
    const store = await opened();
    const k = new PartitionKeys(store.prefix, 'default');
    const writes: string[][] = [];
    await monitorCommands((source, args) => {
      if (source === 'lua' && args[1] === k.expiring) writes.push(args);
      if (args[0]?.toLowerCase() === 'echo' && args[1] === k.base) writes.push(['done']);
    });
    const task = await claimOne(store, makeTask());
    await complete(store, task, retryOutcome(task, T0 + 10));
    const again = await claimAgain(store, task, T0 + 10);
    await complete(store, again, { ...finalOutcome(again, 'SUCCEEDED'), expiresAt: T0 + DAY });
    const client = adminClient();
    try {
      await client.echo(k.base);
    } finally {
      client.disconnect();
    }
    await waitFor('the monitor to see the echo', () => writes.some((w) => w[0] === 'done'));
    const zadds = writes.filter((w) => w[0] !== 'done').map(([command, ...args]) => [command?.toUpperCase(), ...args]);
    expect(zadds).toEqual([['ZADD', k.expiring, String(T0 + DAY), task.taskId]]);
  });
});
