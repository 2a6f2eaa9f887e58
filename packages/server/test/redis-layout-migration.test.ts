import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import type { RetryTask } from '../src/domain/task.js';
import { PartitionKeys, globalKeys, sortKeyOf } from '../src/backends/redis/keys.js';
import { LAYOUT_VERSION } from '../src/backends/redis/layout-migration.js';
import { RedisStore } from '../src/backends/redis/redis-store.js';
import { DATA_FIELDS } from '../src/backends/redis/task-codec.js';
import { T0, finalOutcome, makeAttempt, makeTask, retryOutcome } from './fixtures/tasks.js';
import { REDIS_URL, dropPrefixes, freshPrefix } from './redis-harness.js';
import { admin, closeOpened, expectIndexesExact, opened, readRecord } from './redis-store-harness.js';

afterAll(dropPrefixes);
afterEach(closeOpened);

describe('Redis layout migration', () => {
  const lease = { leaseMs: 1_000, workerId: 'w' };
  const [A, B, C] = ['https://a.example.com', 'https://b.example.com', 'https://c.example.com'];
  const layout1Tasks = () => {
    const inFlight = makeTask({ targetUrl: `${A}/f`, status: 'IN_FLIGHT', leaseOwner: 'old', leaseExpiresAt: T0 + 900, fencingToken: 3 });
    return [
      makeTask({ targetUrl: `${A}/1`, nextAttemptAt: T0 + 1 }),
      makeTask({ targetUrl: `${A}/2`, nextAttemptAt: T0, policyId: null, policy: { maxAttempts: 3 } as never }),
      makeTask({ targetUrl: `${B}/1`, nextAttemptAt: T0 + 2, lastError: 'HTTP 503', lastResponseStatus: 503, runStartedAt: T0 - 0.5 }),
      inFlight,
      makeTask({ targetUrl: `${B}/d`, status: 'FAILED', nextAttemptAt: null, deadLetterReason: 'permanent_status:400', attemptNumber: 2 }),
      makeTask({ tenantId: 'other', targetUrl: `${C}/1`, nextAttemptAt: T0 }),
    ];
  };

  it('converts layout 1 in place once, while other instances wait, and claims fairly afterwards', async () => {
    const prefix = freshPrefix();
    const client = admin();
    const tasks = layout1Tasks();
    await writeLayout1(client, prefix, tasks);
    const globals = globalKeys(prefix);
    // A lock left by an instance that died mid-migration: the stores wait for it to lapse, then one takes over.
    await client.set(globals.migrationLock, 'dead-instance', 'PX', 300);
    const [one, two] = await Promise.all([opened(new RedisStore({ url: REDIS_URL, prefix })), opened(new RedisStore({ url: REDIS_URL, prefix }))]);
    expect(await client.get(globals.layout)).toBe(String(LAYOUT_VERSION));
    expect(await client.exists(globals.migrationLock)).toBe(0);
    for (const tenant of ['default', 'other']) {
      const k = new PartitionKeys(prefix, tenant);
      expect(await client.exists(k.legacyDue)).toBe(0);
      await expectIndexesExact(client, k);
    }
    for (const task of tasks) expect(await two.getTask(task.tenantId, task.taskId)).toEqual(task);
    expect(await client.zrange(new PartitionKeys(prefix, 'default').targets, 0, -1)).toEqual([A, B]);
    // Layout 4 keeps no listing set per policy: the ones layout 1 wrote are gone.
    const policySets = tasks.flatMap((t) => (t.policyId === null ? [] : [new PartitionKeys(prefix, t.tenantId).legacyPolicyStatus(t.status, t.policyId)]));
    expect(policySets.length).toBeGreaterThan(0);
    expect(await client.exists(...policySets)).toBe(0);

    expect(await one.nextDueAt()).toBe(T0);
    const claim = await one.claimDue(T0 + 10, { limit: 10, ...lease });
    const byId = (i: number) => (tasks[i] as RetryTask).taskId;
    expect(claim.map((t) => t.taskId)).toEqual([byId(1), byId(2), byId(5), byId(0)]);
    const inFlight = tasks[3] as RetryTask;
    const [done] = await two.completeAttempts([{ ...inFlight, attempt: makeAttempt(inFlight), next: retryOutcome(inFlight, T0 + 50) }], T0 + 20);
    expect(done).toMatchObject({ kind: 'applied', status: 'PENDING' });
    expect(await one.nextDueAt()).toBe(T0 + 50);
    expect(await one.admin.countByStatus()).toMatchObject({ PENDING: 1, IN_FLIGHT: 4, FAILED: 1 });
  });

  it('migrates tasks in chunks, can run again over migrated data without changing it, and refuses a newer layout', async () => {
    const prefix = freshPrefix();
    const client = admin();
    // More tasks than one chunk of the migration (500), spread over three targets and two statuses.
    const many = Array.from({ length: 1_234 }, (_, i) =>
      makeTask({
        targetUrl: `${[A, B, C][i % 3] ?? ''}/n`,
        createdAt: T0 - i,
        ...(i % 5 === 0 ? { status: 'SUCCEEDED', nextAttemptAt: null } : { nextAttemptAt: T0 + i }),
      }),
    );
    const tasks = [...layout1Tasks(), ...many];
    await writeLayout1(client, prefix, tasks);
    await opened(new RedisStore({ url: REDIS_URL, prefix }));
    const k = new PartitionKeys(prefix, 'default');
    await expectIndexesExact(client, k);
    expect((await client.zcard(k.queue(A))) + (await client.zcard(k.queue(B))) + (await client.zcard(k.queue(C)))).toBe(
      tasks.filter((t) => t.status === 'PENDING' && t.tenantId === 'default').length,
    );
    const snapshot = async () => ({ ready: await client.zrange(k.ready, 0, -1, 'WITHSCORES'), a: await client.zrange(k.queue(A), 0, -1) });
    const before = await snapshot();
    // As if the instance that migrated had died before writing the version.
    await client.del(globalKeys(prefix).layout);
    const again = await opened(new RedisStore({ url: REDIS_URL, prefix }));
    expect(await snapshot()).toEqual(before);
    for (const task of tasks) expect(await again.getTask(task.tenantId, task.taskId)).toEqual(task);

    await client.set(globalKeys(prefix).layout, String(LAYOUT_VERSION + 1));
    await expect(new RedisStore({ url: REDIS_URL, prefix }).init()).rejects.toThrow(/newer than this retryd's/);
  });
});

describe('Redis layout migration from layout 2', () => {
  it('moves holds into the targets\' gates and counts the tasks in flight, so limits hold at once', async () => {
    const prefix = freshPrefix();
    const client = admin();
    const [A, B] = ['https://a.example.com', 'https://b.example.com'];
    const lease = { leaseMs: 60_000, workerId: 'w' };
    const before = await opened(new RedisStore({ url: REDIS_URL, prefix }));
    await before.insertTasks([
      ...Array.from({ length: 5 }, (_, i) => makeTask({ targetUrl: `${A}/x`, nextAttemptAt: T0 + i })),
      ...Array.from({ length: 2 }, () => makeTask({ targetUrl: `${B}/x` })),
      makeTask({ tenantId: 'other', targetUrl: `${A}/x` }),
    ]);
    expect(await before.claimDue(T0 + 2, { limit: 4, ...lease })).toHaveLength(4);
    await before.holdTarget({ tenantId: 'default', targetKey: B }, T0 + 9_000, T0);
    await before.close();
    for (const tenant of ['default', 'other']) await toLayout5(client, new PartitionKeys(prefix, tenant));
    // The same data as layout 2 kept it: holds in one hash, no gates.
    for (const tenant of ['default', 'other']) {
      const k = new PartitionKeys(prefix, tenant);
      for (const target of await client.zrange(k.targets, 0, -1)) {
        const held = await client.hget(k.gate(target), 'held');
        if (held !== null) await client.hset(k.legacyHolds, target, held);
        await client.del(k.gate(target));
      }
    }
    await client.set(globalKeys(prefix).layout, '2');

    const store = await opened(new RedisStore({ url: REDIS_URL, prefix }));
    expect(await client.get(globalKeys(prefix).layout)).toBe(String(LAYOUT_VERSION));
    const k = new PartitionKeys(prefix, 'default');
    expect(await client.exists(k.legacyHolds)).toBe(0);
    expect(await client.hgetall(k.gate(A))).toEqual({ inFlight: '2' });
    expect(await client.hgetall(k.gate(B))).toEqual({ inFlight: '1', held: String(T0 + 9_000) });
    expect(await client.hgetall(new PartitionKeys(prefix, 'other').gate(A))).toEqual({ inFlight: '1' });
    for (const tenant of ['default', 'other']) await expectIndexesExact(client, new PartitionKeys(prefix, tenant));
    // Two of A in flight before the upgrade count against its new limit.
    await store.limitTarget({ tenantId: 'default', targetKey: A }, { ratePerSecond: null, burst: null, maxInFlight: 3 }, T0 + 3);
    expect((await store.claimDue(T0 + 10, { limit: 10, ...lease })).map((t) => t.targetKey)).toEqual([A]);
  });
});

describe('Redis layout migration from layout 3', () => {
  it('deletes the listing sets per policy and leaves everything else as it was', async () => {
    const prefix = freshPrefix();
    const client = admin();
    const before = await opened(new RedisStore({ url: REDIS_URL, prefix }));
    const tasks = [makeTask({ policyId: 'gentle' }), makeTask({ policyId: 'gentle', status: 'IN_FLIGHT', leaseOwner: 'w', leaseExpiresAt: T0 + 60_000 })];
    await before.insertTasks(tasks);
    await before.close();
    // The sets layout 3 kept beside the status sets.
    const k = new PartitionKeys(prefix, 'default');
    await toLayout5(client, k);
    for (const task of tasks) await client.zadd(k.legacyPolicyStatus(task.status, 'gentle'), 0, sortKeyOf(task.createdAt, task.taskId));
    await client.set(globalKeys(prefix).layout, '3');
    const gates = await client.hgetall(k.gate(tasks[0]!.targetKey));

    const store = await opened(new RedisStore({ url: REDIS_URL, prefix }));
    expect(await client.get(globalKeys(prefix).layout)).toBe(String(LAYOUT_VERSION));
    expect(await client.exists(k.legacyPolicyStatus('PENDING', 'gentle'), k.legacyPolicyStatus('IN_FLIGHT', 'gentle'))).toBe(0);
    expect(await client.hgetall(k.gate(tasks[0]!.targetKey))).toEqual(gates);
    await expectIndexesExact(client, k);
    const listed = await store.listTasks({ tenantId: 'default', policyId: 'gentle', limit: 10 });
    expect(listed.items.map((t) => t.taskId).sort()).toEqual(tasks.map((t) => t.taskId).sort());
  });
});

describe('Redis layout migration from layout 4', () => {
  it('moves the data JSON objects of layout 4 as they are, and reads them as before', async () => {
    const prefix = freshPrefix();
    const client = admin();
    const before = await opened(new RedisStore({ url: REDIS_URL, prefix }));
    const tasks = [
      makeTask({ policyId: null, policy: { maxAttempts: 2 } as never, traceContext: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }),
      makeTask({ tenantId: 'other', body: null, sensitiveBody: true }),
    ];
    await before.insertTasks(tasks);
    await before.close();
    // The data as layout 4 wrote it: one object, every field by name (those holding nothing left out), and the
    // whole listing key in the hash.
    for (const task of tasks) {
      const k = new PartitionKeys(prefix, task.tenantId);
      await toLayout5(client, k);
      const layout4 = Object.fromEntries(DATA_FIELDS.flatMap((name) => (task[name] === null || task[name] === false ? [] : [[name, task[name]]])));
      await client.set(k.legacyData(task.taskId), JSON.stringify(layout4));
      await client.hset(k.legacyTask(task.taskId), 'sortKey', sortKeyOf(task.createdAt, task.taskId));
    }
    await client.set(globalKeys(prefix).layout, '4');
    const written = await Promise.all(tasks.map((t) => client.get(new PartitionKeys(prefix, t.tenantId).legacyData(t.taskId))));

    const store = await opened(new RedisStore({ url: REDIS_URL, prefix }));
    expect(await client.get(globalKeys(prefix).layout)).toBe(String(LAYOUT_VERSION));
    // Moved into layout 6 as written: the object kept, the listing key cut to its time digits.
    expect(await Promise.all(tasks.map((t) => client.hget(new PartitionKeys(prefix, t.tenantId).taskData, t.taskId)))).toEqual(written);
    for (const task of tasks) {
      const k = new PartitionKeys(prefix, task.tenantId);
      expect((await readRecord(client, k, task.taskId))?.sortKey).toBe(sortKeyOf(task.createdAt, ''));
      expect(await client.exists(k.legacyTask(task.taskId), k.legacyData(task.taskId))).toBe(0);
      expect(await store.getTask(task.tenantId, task.taskId)).toEqual(task);
    }
    // A new task next to them is written as an array, its record keeping the listing key's time digits only.
    const fresh = makeTask();
    await store.insertTasks([fresh]);
    const k = new PartitionKeys(prefix, 'default');
    expect(JSON.parse((await client.hget(k.taskData, fresh.taskId)) ?? '')).toBeInstanceOf(Array);
    expect((await readRecord(client, k, fresh.taskId))?.sortKey).toBe(sortKeyOf(fresh.createdAt, ''));
    expect(await store.getTask('default', fresh.taskId)).toEqual(fresh);
    // Both kinds are listed in `live` under their whole listing keys once claimed.
    const claimed = await store.claimDue(T0 + 60_000, { limit: 10, leaseMs: 60_000, workerId: 'w' });
    expect(claimed.map((t) => t.taskId).sort()).toEqual([...tasks, fresh].map((t) => t.taskId).sort());
    for (const tenant of ['default', 'other']) {
      const keys = new PartitionKeys(prefix, tenant);
      const mine = claimed.filter((t) => t.tenantId === tenant).map((t) => sortKeyOf(t.createdAt, t.taskId));
      expect((await client.zrange(keys.live, 0, -1)).sort()).toEqual(mine.sort());
      await expectIndexesExact(client, keys);
    }
  });
});

describe('Redis layout migration from layout 5', () => {
  it('moves every task into the records and data hashes, deletes its keys, and changes nothing when run again', async () => {
    const prefix = freshPrefix();
    const client = admin();
    const before = await opened(new RedisStore({ url: REDIS_URL, prefix }));
    const lease = { leaseMs: 60_000, workerId: 'w' };
    // More tasks than one chunk of the migration (500), in several statuses and two tenants.
    const tasks = [
      ...Array.from({ length: 1_100 }, (_, i) => makeTask({ nextAttemptAt: T0 + i, lastError: i % 7 === 0 ? 'HTTP 503' : null })),
      makeTask({ tenantId: 'other', runStartedAt: T0 + 0.375 }),
    ];
    await before.insertTasks(tasks);
    const [held] = await before.claimDue(T0, { limit: 1, ...lease });
    if (held === undefined) throw new Error('expected a claim');
    await before.cancelTask({ tenantId: 'default', taskId: (tasks[1] as RetryTask).taskId }, T0, T0 + 60_000);
    const stored = await Promise.all(tasks.map((t) => before.getTask(t.tenantId, t.taskId)));
    await before.close();
    for (const tenant of ['default', 'other']) await toLayout5(client, new PartitionKeys(prefix, tenant));
    await client.set(globalKeys(prefix).layout, '5');

    const store = await opened(new RedisStore({ url: REDIS_URL, prefix }));
    expect(await client.get(globalKeys(prefix).layout)).toBe(String(LAYOUT_VERSION));
    for (const tenant of ['default', 'other']) {
      const k = new PartitionKeys(prefix, tenant);
      const mine = tasks.filter((t) => t.tenantId === tenant);
      expect(await client.hlen(k.records)).toBe(mine.length);
      expect(await client.hlen(k.taskData)).toBe(mine.length);
      expect(await client.exists(...mine.flatMap((t) => [k.legacyTask(t.taskId), k.legacyData(t.taskId)]))).toBe(0);
      await expectIndexesExact(client, k);
    }
    expect(await Promise.all(tasks.map((t) => store.getTask(t.tenantId, t.taskId)))).toEqual(stored);
    // As if the instance that migrated had died before writing the version: the move finds nothing left to do.
    const k = new PartitionKeys(prefix, 'default');
    const snapshot = await client.hgetall(k.records);
    await client.del(globalKeys(prefix).layout);
    const again = await opened(new RedisStore({ url: REDIS_URL, prefix }));
    expect(await client.hgetall(k.records)).toEqual(snapshot);
    // The lease taken before the move is still the one the holder completes.
    const [done] = await again.completeAttempts([{ ...held, attempt: makeAttempt(held), next: retryOutcome(held, T0 + 50) }], T0 + 20);
    expect(done).toMatchObject({ kind: 'applied', status: 'PENDING', nextAttemptAt: T0 + 50 });
  });
});

describe('Redis layout migration from layout 6', () => {
  it('merges the PENDING and IN_FLIGHT listing sets into live, lists by status as before, and changes nothing when run again', async () => {
    const prefix = freshPrefix();
    const client = admin();
    const before = await opened(new RedisStore({ url: REDIS_URL, prefix }));
    // More live tasks than one chunk of the migration (500), in every live status, an ended one, and two tenants.
    const tasks = [
      ...Array.from({ length: 1_100 }, (_, i) => makeTask({ createdAt: T0 + i, nextAttemptAt: T0 + i })),
      // Due after the claim below, which takes from one queue only.
      makeTask({ tenantId: 'other', nextAttemptAt: T0 + 5_000 }),
    ];
    await before.insertTasks(tasks);
    const held = await before.claimDue(T0 + 600, { limit: 600, leaseMs: 60_000, workerId: 'w' });
    expect(held).toHaveLength(600);
    await before.cancelTask({ tenantId: 'default', taskId: (tasks[1_000] as RetryTask).taskId }, T0, T0 + 60_000);
    const listed = async (store: RedisStore, status: RetryTask['status'], tenantId = 'default') => {
      const ids: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.listTasks({ tenantId, status, limit: 250, ...(cursor === undefined ? {} : { cursor }) });
        ids.push(...page.items.map((t) => t.taskId));
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return ids;
    };
    const expected = { PENDING: await listed(before, 'PENDING'), IN_FLIGHT: await listed(before, 'IN_FLIGHT'), CANCELLED: await listed(before, 'CANCELLED') };
    expect([expected.PENDING.length, expected.IN_FLIGHT.length, expected.CANCELLED.length]).toEqual([499, 600, 1]);
    await before.close();
    for (const tenant of ['default', 'other']) await toLayout6(client, new PartitionKeys(prefix, tenant));
    await client.set(globalKeys(prefix).layout, '6');
    // An attempt logged by layout 6: an object spelling out every field, kept as it is.
    const first = held[0] as RetryTask;
    const logged = makeAttempt(first, { attemptNumber: 1, startedAt: T0 + 0.375, responseStatus: null, errorMessage: 'connect ECONNREFUSED' });
    // Without a retry's delay, which came after layout 6: read back as null.
    const { delayedBy: _delayedBy, backoffAt: _backoffAt, ...asLayout6Wrote } = logged;
    await client.zadd(new PartitionKeys(prefix, 'default').attempts(first.taskId), 1, JSON.stringify(asLayout6Wrote));

    const store = await opened(new RedisStore({ url: REDIS_URL, prefix }));
    expect(await client.get(globalKeys(prefix).layout)).toBe(String(LAYOUT_VERSION));
    for (const tenant of ['default', 'other']) await expectIndexesExact(client, new PartitionKeys(prefix, tenant));
    for (const status of ['PENDING', 'IN_FLIGHT', 'CANCELLED'] as const) expect(await listed(store, status)).toEqual(expected[status]);
    expect(await listed(store, 'PENDING', 'other')).toEqual([(tasks[1_100] as RetryTask).taskId]);
    // As if the instance that migrated had died before writing the version: the merge finds nothing left to do.
    const k = new PartitionKeys(prefix, 'default');
    const live = await client.zrange(k.live, 0, -1);
    await client.set(globalKeys(prefix).layout, '6');
    const again = await opened(new RedisStore({ url: REDIS_URL, prefix }));
    expect(await client.zrange(k.live, 0, -1)).toEqual(live);
    // A lease taken before the merge is still the one its holder completes, and the task then leaves `live`.
    const last = makeAttempt(first, { attemptNumber: 2, responseStatus: 200, outcome: 'succeeded', responseBodySnippet: null, nextAttemptAt: null });
    const [done] = await again.completeAttempts([{ ...first, attempt: last, next: finalOutcome(first, 'SUCCEEDED') }], T0 + 700);
    expect(done).toMatchObject({ kind: 'applied', status: 'SUCCEEDED' });
    expect(await client.zcard(k.live)).toBe(live.length - 1);
    await expectIndexesExact(client, k);
    // Its log reads the entry layout 6 wrote and the one layout 7 wrote (an array, without names, tenant or id) alike.
    expect((await again.listAttempts('default', first.taskId, { limit: 10 })).items).toEqual([logged, last]);
    expect(JSON.parse((await client.zrange(k.attempts(first.taskId), 1, 1))[0] ?? '')).toEqual([2, T0, 12.5, 'succeeded', 'worker-1', 200]);
  });
});

/** Splits a partition's `live` listing set back into layout 6's sets of PENDING and IN_FLIGHT tasks, by each task's status. */
async function toLayout6(client: Redis, k: PartitionKeys): Promise<void> {
  for (const member of await client.zrange(k.live, 0, -1)) {
    const status = (await readRecord(client, k, member.slice(16)))?.status as string;
    await client.zadd(k.status(status as RetryTask['status']), 0, member);
  }
  await client.del(k.live);
}

/**
 * Rewrites a partition's tasks as layout 5 kept them: each record (layout 6) back into a hash of its own with a field
 * per value that is not null (`sortKey` as the record holds it), each data JSON into a string of its own.
 */
async function toLayout5(client: Redis, k: PartitionKeys): Promise<void> {
  await toLayout6(client, k);
  for (const id of await client.hkeys(k.records)) {
    const record = (await readRecord(client, k, id)) ?? {};
    await client.hset(k.legacyTask(id), ...Object.entries(record).flatMap(([field, value]) => (value === null ? [] : [field, value])));
    await client.set(k.legacyData(id), (await client.hget(k.taskData, id)) ?? '');
  }
  await client.del(k.records, k.taskData);
}

/** Writes tasks as layout 1 did (insert-tasks.lua before targets): no `target` in the hash, one `due` set per partition. */
async function writeLayout1(client: Redis, prefix: string, tasks: readonly RetryTask[]): Promise<void> {
  const multi = client.multi();
  for (const task of tasks) {
    const k = new PartitionKeys(prefix, task.tenantId);
    const sortKey = sortKeyOf(task.createdAt, task.taskId);
    const state: Record<string, string | number | null> = {
      status: task.status,
      attempt: task.attemptNumber,
      runOffset: task.runAttemptOffset,
      runStart: task.runStartedAt,
      lastDelay: task.lastDelayMs,
      due: task.nextAttemptAt,
      updated: task.updatedAt,
      owner: task.leaseOwner,
      leaseUntil: task.leaseExpiresAt,
      token: task.fencingToken,
      version: task.version,
      cancel: task.cancelRequested ? '1' : '0',
      error: task.lastError,
      httpStatus: task.lastResponseStatus,
      deadReason: task.deadLetterReason,
      policyId: task.policyId,
      sortKey,
    };
    multi.hset(k.legacyTask(task.taskId), ...Object.entries(state).flatMap(([field, value]) => (value === null ? [] : [field, String(value)])));
    const { tenantId, taskId, idempotencyKey, requestHash, targetUrl, method, headers, body, bodyRef, policy, createdAt, traceContext } = task;
    const data = { tenantId, taskId, idempotencyKey, requestHash, targetUrl, method, headers, body, bodyRef, policy, createdAt, traceContext };
    multi.set(k.legacyData(task.taskId), JSON.stringify(data));
    multi.hset(k.idem, task.idempotencyKey, task.taskId);
    if (task.status === 'PENDING') multi.zadd(k.legacyDue, String(task.nextAttemptAt), task.taskId);
    if (task.status === 'IN_FLIGHT') multi.zadd(k.leases, String(task.leaseExpiresAt), task.taskId);
    multi.hincrby(k.counts, task.status, 1);
    multi.zadd(k.status(task.status), 0, sortKey);
    if (task.policyId !== null) multi.zadd(k.legacyPolicyStatus(task.status, task.policyId), 0, sortKey);
    multi.sadd(globalKeys(prefix).partitions, task.tenantId);
  }
  await multi.exec();
}
