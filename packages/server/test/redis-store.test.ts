import { createHash } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { DuplicateAttemptError } from '../src/store/store-errors.js';
import { durabilityMode, describeDurability, readPersistence, warnsAtStart } from '../src/backends/redis/durability.js';
import { InvalidTaskStateError, TaskIdTakenError } from '../src/backends/redis/errors.js';
import { PartitionKeys, createdAtOfSortKey, sortKeyOf } from '../src/backends/redis/keys.js';
import { RedisStore } from '../src/backends/redis/redis-store.js';
import { loadScripts } from '../src/backends/redis/scripts.js';
import { T0, makeAttempt, makeTask, retryOutcome } from './fixtures/tasks.js';
import { describeStoreConformance } from './store-conformance.js';
import { REDIS_URL, dropPrefixes, freshPrefix, freshStore, keySlot, keysOf } from './redis-harness.js';
import { admin, closeOpened, monitorCommands, opened, readRecord } from './redis-store-harness.js';
import { waitFor } from './wait-for.js';

// The Redis store: the conformance suite, and what is the Redis store's own (scripts, slots, wake-ups, partitions,
// typed errors, durability, the prefix). Its target queues, its field lists in Lua and the migration of older key
// layouts have files of their own: redis-target-queues, redis-lua-fields, redis-layout-migration.

afterAll(dropPrefixes);

describeStoreConformance('redis', async () => freshStore());
describeStoreConformance('redis, 4 sub-partitions per tenant', async () => freshStore({ subPartitions: 4 }), {
  sharedTargetLimits: true,
  completionsAtomicPerPartition: true,
});

afterEach(closeOpened);

describe('RedisStore', () => {
  it('sends each script over its connection once, then only its SHA (EVALSHA)', async () => {
    const store = await opened();
    const info = (await store.redis.client('INFO')) as string;
    const address = /addr=(\S+)/.exec(info)?.[1];
    const sent: string[][] = [];
    await monitorCommands((source, args) => {
      if (source === address) sent.push(args);
    });
    for (let round = 0; round < 3; round++) {
      const task = makeTask();
      await store.insertTasks([task]);
      const [held] = await store.claimDue(T0, { limit: 1, leaseMs: 1_000, workerId: 'w' });
      if (held === undefined) throw new Error('expected a claim');
      await store.completeAttempts([{ ...held, attempt: makeAttempt(held), next: retryOutcome(held, T0 + 5_000) }], T0 + 1);
      await store.getTask('default', task.taskId);
    }
    await waitFor('the monitor to see the last read', () => sent.filter((args) => args[0]?.toLowerCase() === 'evalsha').length >= 8);

    const sha = (lua: string) => createHash('sha1').update(lua).digest('hex');
    const known = new Map(loadScripts().map((script) => [sha(script.lua), script.name]));
    // MONITOR shows the source escaped, so an EVAL is told by the script name of its contract header.
    const evals = sent.filter((args) => args[0]?.toLowerCase() === 'eval').map((args) => /^--\[\[\\n {2}([a-z-]+):/.exec(args[1] ?? '')?.[1]);
    const evalshas = sent.filter((args) => args[0]?.toLowerCase() === 'evalsha').map((args) => known.get(args[1] ?? ''));
    expect(evals.sort()).toEqual(['claim-due', 'complete-attempts', 'get-tasks', 'insert-tasks']);
    expect(evalshas.length).toBeGreaterThanOrEqual(8);
    expect(evalshas.every((name) => name !== undefined)).toBe(true);
    const used = [...known].filter(([, name]) => evals.includes(name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)));
    expect(used).toHaveLength(4);
    expect(await store.redis.script('EXISTS', ...used.map(([digest]) => digest))).toEqual([1, 1, 1, 1]);
    // The files are read once per process, whatever the number of stores.
    expect(loadScripts()).toBe(loadScripts());
  });

  it('keeps every key of one tenant in one cluster slot, under its own hash tag', async () => {
    const store = await opened();
    const tenants = ['default', 'acme', 'odd{tag}:with%colons'];
    for (const tenantId of tenants) {
      const [task, other] = [makeTask({ tenantId, policyId: 'payments' }), makeTask({ tenantId })];
      await store.insertTasks([task, other]);
      const [held] = await store.claimDue(T0, { limit: 1, leaseMs: 1_000, workerId: 'w' });
      if (held === undefined) throw new Error('expected a claim');
      await store.completeAttempts([{ ...held, attempt: makeAttempt(held), next: retryOutcome(held, T0 + 9) }], T0 + 1);
      await store.cancelTask({ tenantId, taskId: other.taskId }, T0 + 2, T0 + 2 + 60_000);
      await store.insertTasks([makeTask({ tenantId, targetUrl: 'https://held.example.com/x' })]);
      await store.holdTarget({ tenantId, targetKey: 'https://held.example.com' }, T0 + 9_000, T0);
      await store.putPolicy({ tenantId, policyId: 'payments', policy: { maxAttempts: 1 } as never, callback: null, createdAt: T0, updatedAt: T0, version: 1 }, 'create');
      await store.targetState.putTargetState(tenantId, 'breaker:https://x', 0, '{}', T0);
    }
    const keys = await keysOf(admin(), store.prefix);
    const global = keys.filter((key) => key.startsWith(`{${store.prefix}}:`));
    expect(global.sort()).toEqual([`{${store.prefix}}:layout`, `{${store.prefix}}:partitions`]);
    for (const tenantId of tenants) {
      const partition = new PartitionKeys(store.prefix, tenantId);
      const own = keys.filter((key) => key.startsWith(partition.base));
      // tasks, data, attempts, idem, queues, ready, gates, targets, counts, listing sets, policy, policies, target
      // state; never the claim's scratch set
      expect(own.length).toBeGreaterThanOrEqual(14);
      expect(own).toEqual(expect.arrayContaining([partition.records, partition.taskData, partition.idem]));
      expect(own).toContain(partition.queue('https://held.example.com'));
      expect(own).not.toContain(partition.claimOrder);
      expect(new Set(own.map(keySlot))).toEqual(new Set([keySlot(partition.ready)]));
    }
    const slots = tenants.map((t) => keySlot(new PartitionKeys(store.prefix, t).ready));
    expect(keys.length).toBe(global.length + tenants.reduce((n, t) => n + keys.filter((k) => k.startsWith(new PartitionKeys(store.prefix, t).base)).length, 0));
    expect(slots.every((slot) => slot >= 0 && slot < 16384)).toBe(true);
  });

  it('computes slots as Redis Cluster does (CLUSTER KEYSLOT is not available on a standalone server)', () => {
    expect(keySlot('123456789')).toBe(0x31c3); // the CRC16/XMODEM check value
    expect(keySlot('foo')).toBe(12182);
    expect(keySlot('somekey')).toBe(11058);
    expect(keySlot('foo{hash_tag}')).toBe(2515);
    expect(keySlot('{}x')).toBe(keySlot('{}x')); // an empty tag hashes the whole key
    expect(keySlot('{user1000}.following')).toBe(keySlot('{user1000}.followers'));
  });

  it('wakes another instance when it makes a task due, and not itself', async () => {
    const a = await opened();
    const b = await opened(new RedisStore({ url: REDIS_URL, prefix: a.prefix }));
    let wakes = 0;
    const stop = a.onDue(() => wakes++);
    await a.insertTasks([makeTask()]);
    await b.insertTasks([makeTask()]);
    await waitFor('a wake-up from b', () => wakes > 0);
    expect(wakes).toBe(1);

    // A tenant that b created is claimable by a at once: the wake-up names its partition.
    const fresh = makeTask({ tenantId: 'new-tenant' });
    await b.insertTasks([fresh]);
    await waitFor('the second wake-up', () => wakes > 1);
    const claimed = await a.claimDue(T0, { limit: 10, leaseMs: 1_000, workerId: 'a' });
    expect(claimed.map((t) => t.taskId)).toContain(fresh.taskId);

    // Released leases wake too (one wake-up per partition); an unsubscribed listener does not.
    const held = claimed.filter((t) => t.taskId === fresh.taskId);
    await b.releaseLeases(held.map((t) => ({ tenantId: t.tenantId, taskId: t.taskId, fencingToken: t.fencingToken })), T0 + 1);
    await waitFor('the release wake-up', () => wakes > 2);
    stop();
    await b.insertTasks([makeTask()]);
    await b.ping();
    expect(wakes).toBe(3);
  });

  it('shares claims across tenants (one queue each), and reports due times and leases over every partition', async () => {
    const store = await opened();
    const tasks = [5, 1, 4, 2, 3, 0].map((i) => makeTask({ tenantId: i % 2 === 0 ? 'even' : 'odd', nextAttemptAt: T0 + i }));
    await store.insertTasks(tasks);
    const first = await store.claimDue(T0 + 10, { limit: 4, leaseMs: 1_000, workerId: 'w' });
    // Two ready queues, two slots each, dealt round robin in ring order (`even` < `odd`).
    expect(first.map((t) => [t.tenantId, t.nextAttemptAt])).toEqual([
      ['even', T0],
      ['odd', T0 + 1],
      ['even', T0 + 2],
      ['odd', T0 + 3],
    ]);
    expect(await store.nextDueAt()).toBe(T0 + 4);
    expect((await store.claimDue(T0 + 4, { limit: 4, leaseMs: 1_000, workerId: 'w' })).map((t) => t.tenantId)).toEqual(['even']);
    expect(await store.nextDueAt()).toBe(T0 + 5);
    expect(await store.nextLeaseExpiryAt()).toBe(T0 + 4 + 1_000);
    // Leases lapse at T0+1004 (the last claim) and T0+1010 (the first four): earliest first, over both tenants.
    const lapsed = await store.findExpiredLeases(T0 + 2_000, 3);
    expect(lapsed.map((t) => t.leaseExpiresAt)).toEqual([T0 + 1_004, T0 + 1_010, T0 + 1_010]);
    expect((await store.admin.countByStatus()).IN_FLIGHT).toBe(5);
    expect(await store.admin.countByStatus('odd')).toMatchObject({ PENDING: 1, IN_FLIGHT: 2 });
  });

  it('refuses a duplicate attempt, a taken task id and an unschedulable state with typed errors, writing nothing', async () => {
    const store = await opened();
    const task = makeTask();
    await store.insertTasks([task]);
    const [held] = await store.claimDue(T0, { limit: 1, leaseMs: 1_000, workerId: 'w' });
    if (held === undefined) throw new Error('expected a claim');
    const duplicate = { ...held, attempt: makeAttempt(held, { attemptNumber: 1 }), next: retryOutcome(held, T0 + 5) };
    await store.completeAttempts([duplicate], T0 + 1);
    const again = (await store.claimDue(T0 + 5, { limit: 1, leaseMs: 1_000, workerId: 'w' }))[0];
    if (again === undefined) throw new Error('expected a second claim');
    const error = await store.completeAttempts([{ ...duplicate, fencingToken: again.fencingToken }], T0 + 6).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DuplicateAttemptError);
    expect(error).toMatchObject({ code: 'DUPLICATE_ATTEMPT', taskId: task.taskId, attemptNumber: 1 });

    const taken = makeTask({ taskId: task.taskId, idempotencyKey: 'another-key' });
    await expect(store.insertTasks([makeTask(), taken])).rejects.toBeInstanceOf(TaskIdTakenError);
    await expect(store.insertTasks([makeTask({ nextAttemptAt: null })])).rejects.toBeInstanceOf(InvalidTaskStateError);
    const pending = makeTask();
    await store.insertTasks([pending]);
    const unschedulable = { ...again, attempt: makeAttempt(again, { attemptNumber: 2 }), next: retryOutcome(again, T0 + 9) };
    unschedulable.next.nextAttemptAt = null;
    await expect(store.completeAttempts([unschedulable], T0 + 7)).rejects.toBeInstanceOf(InvalidTaskStateError);
    expect(await store.getTask('default', pending.taskId)).toEqual(pending);
    expect(await store.admin.countByStatus('default')).toMatchObject({ PENDING: 1, IN_FLIGHT: 1 });
  });

  it('keeps batches that span tenants in input order, one script call per tenant', async () => {
    const store = await opened();
    const [a, b, a2] = [makeTask({ tenantId: 'a' }), makeTask({ tenantId: 'b' }), makeTask({ tenantId: 'a' })];
    // The same task twice in one batch is inserted once; the repeat is a duplicate, as with a repeated key.
    expect((await store.insertTasks([a, b, a2, a])).map((r) => [r.kind, r.task.taskId])).toEqual([
      ['inserted', a.taskId],
      ['inserted', b.taskId],
      ['inserted', a2.taskId],
      ['duplicate', a.taskId],
    ]);
    expect((await store.admin.countByStatus('a')).PENDING).toBe(2);
    const held = await store.claimDue(T0, { limit: 3, leaseMs: 1_000, workerId: 'w' });
    const byId = new Map(held.map((t) => [t.taskId, t]));
    const order = [b, a2, a].map((t) => byId.get(t.taskId) as (typeof held)[number]);
    const results = await store.completeAttempts(
      order.map((t, i) => ({ ...t, fencingToken: i === 1 ? t.fencingToken + 1 : t.fencingToken, attempt: makeAttempt(t), next: retryOutcome(t, T0 + 50) })),
      T0 + 1,
    );
    expect(results.map((r) => (r.kind === 'applied' ? r.taskId : `fenced ${r.taskId}`))).toEqual([b.taskId, `fenced ${a2.taskId}`, a.taskId]);
  });

  it('inserts state text of any content (quotes, backslashes, control characters, non-ASCII, a lone surrogate) as UTF-8', async () => {
    const store = await opened();
    // The states travel as JSON for cjson, which refuses the `\ud800` escape JSON.stringify writes for a lone
    // surrogate: it is stored as U+FFFD, as any text a Redis command carries.
    const odd = 'k"\\\u0001\né\u{1F600}\ud800';
    const task = makeTask({ idempotencyKey: odd, policyId: odd, lastError: odd, runStartedAt: T0 + 0.375, cancelRequested: true });
    expect(await store.insertTasks([task])).toMatchObject([{ kind: 'inserted' }]);
    const stored = { ...task, policyId: odd.replace('\ud800', '\ufffd'), lastError: odd.replace('\ud800', '\ufffd') };
    expect(await store.getTask('default', task.taskId)).toEqual(stored);
    expect(await store.getTaskByIdempotencyKey('default', odd)).toEqual(stored);
    expect(await store.insertTasks([makeTask({ idempotencyKey: odd })])).toEqual([{ kind: 'duplicate', task: stored }]);
    const keys = new PartitionKeys(store.prefix, 'default');
    expect(await readRecord(admin(), keys, task.taskId)).toMatchObject({ runStart: String(T0 + 0.375), owner: null, policyId: odd.replace('\ud800', '\ufffd') });

    // A completion's text travels the same way.
    const other = makeTask();
    await store.insertTasks([other]);
    const held = (await store.claimDue(T0, { limit: 2, leaseMs: 1_000, workerId: 'w' })).find((t) => t.taskId === other.taskId);
    if (held === undefined) throw new Error('expected a claim of the second task');
    const log = makeAttempt(held, { errorMessage: odd });
    const results = await store.completeAttempts([{ ...held, attempt: log, next: retryOutcome(held, T0 + 0.125, { lastError: odd }) }], T0 + 1);
    expect(results).toEqual([{ kind: 'applied', taskId: other.taskId, status: 'PENDING', nextAttemptAt: T0 + 0.125, version: 3, cancelRequested: false }]);
    expect((await store.getTask('default', other.taskId))?.lastError).toBe(odd.replace('\ud800', '\ufffd'));
    expect((await store.listAttempts('default', other.taskId, { limit: 10 })).items).toEqual([log]);
  });

  it('keeps a task as a field in each of two hashes of its partition, the record packed without field names, and no key of its own', async () => {
    const store = await opened();
    const task = makeTask({ body: 'x'.repeat(5_000) });
    await store.insertTasks([task]);
    const keys = new PartitionKeys(store.prefix, 'default');
    const client = admin();
    expect(await client.type(keys.records)).toBe('hash');
    expect(await client.type(keys.taskData)).toBe('hash');
    // The record: the values alone, with the listing key's time digits (the id that completes it names the field).
    expect(await readRecord(client, keys, task.taskId)).toMatchObject({ status: 'PENDING', target: task.targetKey, sortKey: sortKeyOf(task.createdAt, '') });
    expect(await client.hstrlen(keys.records, task.taskId)).toBeLessThan(128);
    expect(await client.hget(keys.taskData, task.taskId)).toContain('x'.repeat(5_000));
    expect(await client.exists(keys.legacyTask(task.taskId), keys.legacyData(task.taskId))).toBe(0);
    expect((await keysOf(client, store.prefix)).filter((key) => key.includes(task.taskId))).toEqual([]);
  });

  it('orders listing keys like (createdAt, taskId) and reads createdAt back exactly', () => {
    const times = [-Number.MAX_VALUE, -T0 - 0.375, -5.5, -5e-324, 0, 5e-324, 0.125, 1, T0, T0 + 0.375, 2 ** 53, Number.MAX_VALUE];
    const keys = times.map((t) => sortKeyOf(t, 'id'));
    expect([...keys].sort()).toEqual(keys);
    expect(keys.map(createdAtOfSortKey)).toEqual(times);
    expect(sortKeyOf(T0, 'a') < sortKeyOf(T0, 'b')).toBe(true);
  });
});

describe('Redis durability', () => {
  it('reports what the server it talks to would lose, from CONFIG GET', async () => {
    const store = await opened();
    const client = admin();
    const [, appendonly] = (await client.config('GET', 'appendonly')) as string[];
    const [, save] = (await client.config('GET', 'save')) as string[];
    const [, appendfsync] = (await client.config('GET', 'appendfsync')) as string[];
    const settings = { appendonly: appendonly as string, appendfsync: appendfsync as string, save: save as string };
    expect(store.durabilityMode).toBe(durabilityMode(settings));
    expect(store.durability()).toBe(describeDurability(settings));
    // The CI server runs with --appendonly no --save "".
    if (appendonly === 'no' && save === '') expect(store.durability()).toMatch(/^none \(.*restart loses every task/);
  });

  it('classifies each persistence setting', () => {
    expect(durabilityMode({ appendonly: 'yes', appendfsync: 'always', save: '' })).toBe('always');
    expect(durabilityMode({ appendonly: 'yes', appendfsync: 'everysec', save: '3600 1' })).toBe('everysec');
    expect(durabilityMode({ appendonly: 'yes', appendfsync: 'no', save: '' })).toBe('os');
    expect(durabilityMode({ appendonly: 'no', appendfsync: 'everysec', save: '3600 1 300 100' })).toBe('snapshots');
    expect(durabilityMode({ appendonly: 'no', appendfsync: 'always', save: '' })).toBe('none');
    expect(durabilityMode({})).toBe('unknown');
    expect(describeDurability({ appendonly: 'yes', appendfsync: 'everysec' })).toMatch(/about the last second/);
    expect(describeDurability({ appendonly: 'yes', appendfsync: 'always' })).toMatch(/loses nothing acknowledged/);
    // retryd serve warns at start unless acknowledged tasks survive (at most about a second lost with everysec).
    expect((['always', 'everysec', 'os', 'snapshots', 'none', 'unknown'] as const).filter(warnsAtStart)).toEqual(['os', 'snapshots', 'none', 'unknown']);
  });

  it('tolerates a server where CONFIG is disabled', async () => {
    const refused = { config: () => Promise.reject(new Error("ERR unknown command 'CONFIG'")) };
    expect(await readPersistence(refused)).toEqual({});
    expect(describeDurability(await readPersistence(refused))).toMatch(/^unknown/);
  });
});

describe('Redis store prefix', () => {
  it('uses the prefix of the URL, and refuses one that could escape its hash tag, naming --store', () => {
    const prefix = freshPrefix();
    expect(new RedisStore({ url: `${REDIS_URL}?prefix=${prefix}` }).prefix).toBe(prefix);
    expect(new RedisStore({ url: REDIS_URL }).prefix).toBe('retryd');
    for (const bad of ['a}b', 'a{b', 'x:y', '', 'a b', 'é']) {
      expect(() => new RedisStore({ url: REDIS_URL, prefix: bad })).toThrow(/`--store` `prefix`/);
    }
  });
});
