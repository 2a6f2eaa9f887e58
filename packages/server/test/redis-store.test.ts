import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import type { RetryTask } from '../src/domain/task.js';
import { DuplicateAttemptError } from '../src/store/store-errors.js';
import { durabilityMode, describeDurability, readPersistence } from '../src/backends/redis/durability.js';
import { InvalidTaskStateError, TaskIdTakenError } from '../src/backends/redis/errors.js';
import { PartitionKeys, createdAtOfSortKey, globalKeys, sortKeyOf } from '../src/backends/redis/keys.js';
import { LAYOUT_VERSION } from '../src/backends/redis/layout-migration.js';
import { RedisStore } from '../src/backends/redis/redis-store.js';
import { loadScripts } from '../src/backends/redis/scripts.js';
import { OUTCOME_FIELDS, STATE_FIELDS, decodeTask, encodeTask } from '../src/backends/redis/task-codec.js';
import { T0, makeAttempt, makeTask, retryOutcome } from './fixtures/tasks.js';
import { describeStoreConformance } from './store-conformance.js';
import { REDIS_URL, adminClient, dropPrefixes, freshPrefix, freshStore, keySlot, keysOf, waitFor } from './redis-harness.js';

afterAll(dropPrefixes);

describeStoreConformance('redis', async () => freshStore());

const open: RedisStore[] = [];
const admins: Redis[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((store) => store.close()));
  for (const client of admins.splice(0)) client.disconnect();
});

async function opened(store = freshStore()): Promise<RedisStore> {
  open.push(store);
  await store.init();
  return store;
}

function admin(): Redis {
  const client = adminClient();
  admins.push(client);
  return client;
}

describe('RedisStore', () => {
  it('sends each script over its connection once, then only its SHA (EVALSHA)', async () => {
    const store = await opened();
    const info = (await store.redis.client('INFO')) as string;
    const address = /addr=(\S+)/.exec(info)?.[1];
    const monitor = await admin().monitor();
    admins.push(monitor);
    const sent: string[][] = [];
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
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
      await store.cancelTask({ tenantId, taskId: other.taskId }, T0 + 2);
      await store.insertTasks([makeTask({ tenantId, targetUrl: 'https://held.example.com/x' })]);
      await store.holdTarget({ tenantId, targetKey: 'https://held.example.com' }, T0 + 9_000, T0);
      await store.putPolicy({ tenantId, policyId: 'payments', policy: { maxAttempts: 1 } as never, createdAt: T0, updatedAt: T0, version: 1 }, 'create');
      await store.targetState.putTargetState(tenantId, 'breaker:https://x', 0, '{}', T0);
    }
    const keys = await keysOf(admin(), store.prefix);
    const global = keys.filter((key) => key.startsWith(`{${store.prefix}}:`));
    expect(global.sort()).toEqual([`{${store.prefix}}:layout`, `{${store.prefix}}:partitions`]);
    for (const tenantId of tenants) {
      const partition = new PartitionKeys(store.prefix, tenantId);
      const own = keys.filter((key) => key.startsWith(partition.base));
      // task, data, attempts, idem, queues, ready, holds, targets, leases?, counts, status and policy-status sets,
      // policy, policies, target state; never the claim's scratch set
      expect(own.length).toBeGreaterThanOrEqual(16);
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

  it('keeps task state compact (listpack hash) and the fixed part as one string', async () => {
    const store = await opened();
    const task = makeTask({ body: 'x'.repeat(5_000) });
    await store.insertTasks([task]);
    const keys = new PartitionKeys(store.prefix, 'default');
    const client = admin();
    expect(await client.object('ENCODING', keys.task(task.taskId))).toBe('listpack');
    expect(await client.type(keys.data(task.taskId))).toBe('string');
  });

  it('orders listing keys like (createdAt, taskId) and reads createdAt back exactly', () => {
    const times = [-5.5, 0, 0.125, 1, T0, T0 + 0.375, 2 ** 53];
    const keys = times.map((t) => sortKeyOf(t, 'id'));
    expect([...keys].sort()).toEqual(keys);
    expect(keys.map(createdAtOfSortKey)).toEqual(times);
    expect(sortKeyOf(T0, 'a') < sortKeyOf(T0, 'b')).toBe(true);
  });
});

describe('Redis store: one definition of a task, and the Lua scripts that spell it out', () => {
  it('keeps the state hash and the data JSON apart exactly as the field definitions say', () => {
    const task = makeTask({ policyId: null, policy: { maxAttempts: 2 } as never, body: 'a\u0000b', runStartedAt: T0 + 0.375 });
    const [taskId, key, json, ...state] = encodeTask(task);
    expect([taskId, key]).toEqual([task.taskId, task.idempotencyKey]);
    expect(Object.keys(JSON.parse(json as string) as object)).toEqual([
      'tenantId', 'taskId', 'idempotencyKey', 'requestHash', 'targetUrl', 'method', 'headers', 'body', 'bodyRef', 'policy',
      'createdAt', 'traceContext',
    ]);
    expect(state).toHaveLength(STATE_FIELDS.length);
    expect(state[STATE_FIELDS.indexOf('target')]).toBe('=https://api.example.com');
    expect(state[STATE_FIELDS.indexOf('policyId')]).toBe('');
    // What a script returns for it: the values without their `=`, null where absent.
    const reply = state.map((value) => (value === '' ? null : value.slice(1)));
    expect(decodeTask([reply, json as string])).toEqual(task);
  });

  it('fails when a Lua field list, a field name in a script or an outcome order disagrees with the TypeScript definition', () => {
    const sources = luaSources();
    const include = sources.find((s) => s.file === 'includes/task-state.lua')?.source ?? '';
    expect(luaTable(include, 'TASK_FIELDS')).toEqual(STATE_FIELDS);
    const complete = sources.find((s) => s.file === 'complete-attempts.lua')?.source ?? '';
    expect(luaTable(complete, 'OUTCOME_FIELDS')).toEqual(OUTCOME_FIELDS);

    // Every field a script names on a task's hash (HSET, HMGET, HDEL, ..., the tables it unpacks into them, and
    // FIELD.<name> positions) is one of the definition's, and no script indexes a state by a bare number.
    const named: string[] = [];
    for (const { file, source } of sources) {
      for (const [command, key, ...rest] of redisCalls(source)) {
        if (!isTaskHash(source, key ?? '')) continue;
        const fieldsAt = command === "'HSET'" ? rest.filter((_, i) => i % 2 === 0) : command === "'HINCRBY'" ? rest.slice(0, 1) : rest;
        if (!["'HSET'", "'HMGET'", "'HDEL'", "'HGET'", "'HINCRBY'"].includes(command ?? '')) continue;
        for (const arg of fieldsAt) {
          const literal = /^'([^']*)'$/.exec(arg)?.[1];
          if (literal !== undefined) named.push(`${file}: ${literal}`);
        }
      }
      for (const table of ['del', 'set']) {
        const items = luaTable(source, table, true) ?? [];
        named.push(...items.filter((_, i) => table === 'del' || i % 2 === 0).map((item) => `${file}: ${item}`));
      }
      for (const match of source.matchAll(/FIELD\.([A-Za-z]+)/g)) named.push(`${file}: ${match[1] ?? ''}`);
      expect(source, file).not.toMatch(/state\[\d/);
    }
    expect(named.length).toBeGreaterThan(60);
    expect(named.filter((entry) => !STATE_FIELDS.includes(entry.split(': ')[1] ?? ''))).toEqual([]);
  });
});

describe('Redis store: target queues, the ready index and the gate', () => {
  it('claims past a held target with 100,000 due tasks without ever reading its queue', async () => {
    const store = await opened();
    const [A, B] = ['https://backlog.example.com', 'https://other.example.com'];
    const backlog = Array.from({ length: 100_000 }, (_, i) => makeTask({ targetUrl: `${A}/x`, nextAttemptAt: T0 - 100_000 + i }));
    for (let i = 0; i < backlog.length; i += 5_000) await store.insertTasks(backlog.slice(i, i + 5_000));
    await store.insertTasks(Array.from({ length: 20 }, () => makeTask({ targetUrl: `${B}/y` })));
    const k = new PartitionKeys(store.prefix, 'default');
    const client = admin();
    expect(await client.zcard(k.queue(A))).toBe(100_000);
    await store.holdTarget({ tenantId: 'default', targetKey: A }, T0 + 60_000, T0);

    // While it is poisoned, any command that reads A's queue fails with WRONGTYPE.
    const aside = `${k.queue(A)}:aside`;
    const poison = async () => {
      await client.rename(k.queue(A), aside);
      await client.set(k.queue(A), 'not a sorted set');
    };
    const cure = async () => {
      await client.del(k.queue(A));
      await client.rename(aside, k.queue(A));
    };
    await poison();
    const lease = { leaseMs: 1_000, workerId: 'w' };
    const first = await store.claimDue(T0 + 10, { limit: 10, ...lease });
    expect(first.map((t) => t.targetKey)).toEqual(Array<string>(10).fill(B));
    const { claimed } = await store.completeAndClaim(
      first.map((t) => ({ ...t, attempt: makeAttempt(t), next: retryOutcome(t, T0 + 30_000) })),
      T0 + 11,
      { limit: 10, ...lease },
    );
    expect(claimed.map((t) => t.targetKey)).toEqual(Array<string>(10).fill(B));
    expect(await store.nextDueAt()).toBe(T0 + 30_000);
    await cure();

    // The control: released, A's queue is read again, and the same poison makes a claim fail.
    await store.releaseTarget({ tenantId: 'default', targetKey: A }, T0 + 12);
    await poison();
    await expect(store.claimDue(T0 + 12, { limit: 10, ...lease })).rejects.toThrow(/WRONGTYPE/);
    await cure();
    const after = await store.claimDue(T0 + 12, { limit: 10, ...lease });
    expect(after.map((t) => t.nextAttemptAt)).toEqual(backlog.slice(0, 10).map((t) => t.nextAttemptAt));
    expect(await client.zscore(k.ready, A)).toBe(String(backlog[10]?.nextAttemptAt));
  }, 60_000);

  it('applies one sharing rule within a tenant (in claim-due.lua) and across tenants (planned in TypeScript)', async () => {
    const [A, B, C] = ['https://a.example.com', 'https://b.example.com', 'https://c.example.com'];
    const lease = { leaseMs: 1_000, workerId: 'w' };
    // Three queues of 10, 1 and 10 due tasks; a claim of 4 offers each ceil(4 / 3) = 2 slots and cuts the deal at 4.
    const layouts = [
      { name: 'one tenant, three targets', queue: (i: number) => ({ tenantId: 'default', targetUrl: `${[A, B, C][i] ?? ''}/x` }) },
      { name: 'three tenants, one target', queue: (i: number) => ({ tenantId: `tenant-${i}`, targetUrl: `${A}/x` }) },
    ];
    const orders: string[][] = [];
    for (const { queue } of layouts) {
      const store = await opened();
      const sizes = [10, 1, 10];
      await store.insertTasks(sizes.flatMap((n, i) => Array.from({ length: n }, (_, j) => makeTask({ ...queue(i), nextAttemptAt: T0 + j }))));
      const label = (t: RetryTask) => `${t.tenantId} ${t.targetKey}`;
      const first = await store.claimDue(T0 + 100, { limit: 4, ...lease });
      const [q0, q1, q2] = [0, 1, 2].map((i) => `${queue(i).tenantId} ${new URL(queue(i).targetUrl).origin}`) as [string, string, string];
      expect(first.map(label)).toEqual([q0, q1, q2, q0]);
      expect(first.map((t) => t.nextAttemptAt)).toEqual([T0, T0, T0, T0 + 1]);
      // The caller moves the ring past the last queue served in ring order (the third): the next claim starts over
      // with the first, and the second queue, empty now, is not ready.
      const third = first[2] as RetryTask;
      const second = await store.claimDue(T0 + 100, { limit: 4, ...lease, after: { tenantId: third.tenantId, targetKey: third.targetKey } });
      expect(second.map(label)).toEqual([q0, q2, q0, q2]);
      orders.push([...first, ...second].map((t) => String(t.nextAttemptAt)));
    }
    expect(orders[0]).toEqual(orders[1]);
  });

  it('keeps the ready index exact through every transition', async () => {
    const store = await opened();
    const client = admin();
    const k = new PartitionKeys(store.prefix, 'default');
    const [A, B, C] = ['https://a.example.com', 'https://b.example.com', 'https://c.example.com'];
    const lease = { leaseMs: 1_000, workerId: 'w' };
    const tasks = [A, B, C, A, B, A].map((origin, i) => makeTask({ targetUrl: `${origin}/x`, nextAttemptAt: T0 + 10 * i }));
    await store.insertTasks(tasks);
    await expectIndexesExact(client, k);
    await store.holdTarget({ tenantId: 'default', targetKey: B }, T0 + 500, T0);
    await expectIndexesExact(client, k);
    const held = await store.claimDue(T0 + 100, { limit: 3, ...lease });
    expect(held.map((t) => t.targetKey)).toEqual([A, C, A]);
    await expectIndexesExact(client, k);
    const [retried, failed, released] = held as [RetryTask, RetryTask, RetryTask];
    await store.completeAttempts(
      [
        { ...retried, attempt: makeAttempt(retried), next: retryOutcome(retried, T0 - 5) },
        { ...failed, attempt: makeAttempt(failed), next: { ...retryOutcome(failed, T0), status: 'FAILED', nextAttemptAt: null } },
      ],
      T0 + 101,
    );
    await expectIndexesExact(client, k);
    await store.releaseLeases([released], T0 + 102);
    await expectIndexesExact(client, k);
    expect((await store.cancelTask({ tenantId: 'default', taskId: released.taskId }, T0 + 103)).kind).toBe('applied');
    await expectIndexesExact(client, k);
    const dead = (await store.getTask('default', failed.taskId)) as RetryTask;
    const replay = { expectedVersion: dead.version, runAttemptOffset: 1, runStartedAt: null, nextAttemptAt: T0 + 1, updatedAt: T0 + 104 };
    expect((await store.replayTask({ tenantId: 'default', taskId: dead.taskId }, replay)).kind).toBe('applied');
    await expectIndexesExact(client, k);
    await store.releaseTarget({ tenantId: 'default', targetKey: B }, T0 + 105);
    await expectIndexesExact(client, k);
    expect(await client.zrange(k.targets, 0, -1)).toEqual([A, B, C]);
    expect(await store.nextDueAt()).toBe(T0 - 5);
  });
});

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

/**
 * Checks a partition's indexes against its tasks: each target's queue holds exactly its PENDING tasks by due time,
 * and `ready` scores exactly the targets with a PENDING task, at max(earliest due, hold).
 */
async function expectIndexesExact(client: Redis, k: PartitionKeys): Promise<void> {
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
    multi.hset(k.task(task.taskId), ...Object.entries(state).flatMap(([field, value]) => (value === null ? [] : [field, String(value)])));
    const { tenantId, taskId, idempotencyKey, requestHash, targetUrl, method, headers, body, bodyRef, policy, createdAt, traceContext } = task;
    const data = { tenantId, taskId, idempotencyKey, requestHash, targetUrl, method, headers, body, bodyRef, policy, createdAt, traceContext };
    multi.set(k.data(task.taskId), JSON.stringify(data));
    multi.hset(k.idem, task.idempotencyKey, task.taskId);
    if (task.status === 'PENDING') multi.zadd(k.legacyDue, String(task.nextAttemptAt), task.taskId);
    if (task.status === 'IN_FLIGHT') multi.zadd(k.leases, String(task.leaseExpiresAt), task.taskId);
    multi.hincrby(k.counts, task.status, 1);
    multi.zadd(k.status(task.status), 0, sortKey);
    if (task.policyId !== null) multi.zadd(k.policyStatus(task.status, task.policyId), 0, sortKey);
    multi.sadd(globalKeys(prefix).partitions, task.tenantId);
  }
  await multi.exec();
}

const LUA_DIR = new URL('../src/backends/redis/lua/', import.meta.url);

/** Every Lua file of the store (includes as `includes/<name>.lua`) with its source. */
function luaSources(): { file: string; source: string }[] {
  const files = [...readdirSync(LUA_DIR), ...readdirSync(new URL('includes/', LUA_DIR)).map((f) => `includes/${f}`)];
  return files.filter((file) => file.endsWith('.lua')).map((file) => ({ file, source: readFileSync(new URL(file, LUA_DIR), 'utf8') }));
}

/** The items of a table literal `local <name> = { ... }` (quoted strings only, unless `raw`: every item, as written). */
function luaTable(source: string, name: string, raw = false): string[] | undefined {
  const body = new RegExp(`local ${name} = \\{([^}]*)\\}`).exec(source)?.[1];
  if (body === undefined) return undefined;
  const items = body.split(',').map((item) => item.trim());
  return raw ? items.map((item) => /^'([^']*)'$/.exec(item)?.[1] ?? `(${item})`) : items.flatMap((item) => /^'([^']*)'$/.exec(item)?.[1] ?? []);
}

/** The arguments of every `redis.call(...)` in a source, as written, split at top-level commas. */
function redisCalls(source: string): string[][] {
  const calls: string[][] = [];
  for (const match of source.matchAll(/redis\.call\(/g)) {
    const args: string[] = [];
    let [depth, arg, quoted] = [1, '', false];
    for (let i = (match.index ?? 0) + match[0].length; i < source.length; i++) {
      const c = source[i] as string;
      if (quoted || c === "'") {
        if (c === "'") quoted = !quoted;
        arg += c;
        continue;
      }
      if (c === '(' || c === '{') depth++;
      if (c === ')' || c === '}') depth--;
      if (depth === 0) break;
      if (c === ',' && depth === 1) {
        args.push(arg.trim());
        arg = '';
      } else arg += c;
    }
    calls.push([...args, arg.trim()]);
  }
  return calls;
}

/** Whether a key expression of a script names a task's state hash (`task:<id>`). */
function isTaskHash(source: string, key: string): boolean {
  if (key.includes("'task:'")) return true;
  const keysIndex = /^KEYS\[(\d+)\]$/.exec(key)?.[1];
  if (keysIndex !== undefined) return new RegExp(`KEYS\\[${keysIndex}\\] task `).test(source);
  return /^[a-z_]+$/.test(key) && new RegExp(`local ${key} = [^\\n]*'task:'`).test(source);
}

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
