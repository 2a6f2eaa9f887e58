import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { RetryTask } from '../src/domain/task.js';
import { PartitionKeys } from '../src/backends/redis/keys.js';
import { T0, makeAttempt, makeTask, retryOutcome } from './fixtures/tasks.js';
import { dropPrefixes } from './redis-harness.js';
import { admin, closeOpened, expectIndexesExact, opened } from './redis-store-harness.js';

afterAll(dropPrefixes);
afterEach(closeOpened);

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
    expect((await store.cancelTask({ tenantId: 'default', taskId: released.taskId }, T0 + 103, T0 + 103 + 60_000)).kind).toBe('applied');
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
