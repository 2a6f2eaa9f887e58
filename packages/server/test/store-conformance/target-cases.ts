import { expect, it } from 'vitest';
import type { RetryTask } from '../../src/domain/task.js';
import type { TargetRef } from '../../src/store/store.js';
import { T0, finalOutcome, makeTask, retryOutcome } from '../fixtures/tasks.js';
import type { CurrentStore } from './helpers.js';
import { insertAll } from './helpers.js';

const A = 'https://a.example.com';
const B = 'https://b.example.com';
const C = 'https://c.example.com';
const lease = { leaseMs: 1_000, workerId: 'w' };

/** `n` PENDING tasks for `origin` (and `tenantId`), due at `due + i`. */
function tasksFor(origin: string, n: number, due = T0, tenantId = 'default'): RetryTask[] {
  return Array.from({ length: n }, (_, i) => makeTask({ tenantId, targetUrl: `${origin}/hook`, nextAttemptAt: due + i }));
}
const target = (targetKey: string, tenantId = 'default'): TargetRef => ({ tenantId, targetKey });
const keysOf = (tasks: readonly RetryTask[]) => tasks.map((t) => t.targetKey);
const count = (tasks: readonly RetryTask[], key: string) => tasks.filter((t) => t.targetKey === key).length;

export function targetCases(store: CurrentStore): void {
  it('stores each task under its target: the origin of its URL', async () => {
    const task = makeTask({ targetUrl: 'https://API.Example.com:443/charges?x=1' });
    expect(task.targetKey).toBe('https://api.example.com');
    const other = makeTask({ targetUrl: 'http://127.0.0.1:8080/x' });
    await insertAll(store(), [task, other]);
    expect((await store().getTask('default', task.taskId))?.targetKey).toBe('https://api.example.com');
    expect((await store().getTask('default', other.taskId))?.targetKey).toBe('http://127.0.0.1:8080');
  });

  it('shares a claim among ready targets: a backlog on one does not keep the others waiting', async () => {
    // A's backlog is older than B's tasks: earliest-due-first would hand every slot to A.
    await insertAll(store(), [...tasksFor(A, 50, T0 - 1_000), ...tasksFor(B, 3, T0)]);
    const first = await store().claimDue(T0 + 10, { limit: 8, ...lease });
    expect(count(first, A)).toBe(4);
    expect(count(first, B)).toBe(3);
    // Each queue's earliest due first, dealt round robin (A first: the ring starts at the beginning).
    expect(keysOf(first)).toEqual([A, B, A, B, A, B, A]);
    expect(first.filter((t) => t.targetKey === A).map((t) => t.nextAttemptAt)).toEqual([0, 1, 2, 3].map((i) => T0 - 1_000 + i));
    // B is empty now: A gets every slot.
    const second = await store().claimDue(T0 + 10, { limit: 8, ...lease });
    expect(keysOf(second)).toEqual(Array<string>(8).fill(A));
  });

  it('serves every ready target within ceil(E / limit) claims when there are more targets than slots', async () => {
    await insertAll(store(), [...tasksFor(A, 2), ...tasksFor(B, 2), ...tasksFor(C, 2)]);
    const first = await store().claimDue(T0 + 10, { limit: 2, ...lease });
    expect(keysOf(first)).toEqual([A, B]);
    const second = await store().claimDue(T0 + 10, { limit: 2, ...lease, after: target(B) });
    expect(keysOf(second)).toEqual([C, A]);
    const third = await store().claimDue(T0 + 10, { limit: 2, ...lease, after: target(A) });
    expect(keysOf(third)).toEqual([B, C]);
    expect(await store().claimDue(T0 + 10, { limit: 2, ...lease, after: target(C) })).toEqual([]);
  });

  it('treats the same origin in two tenants as two queues, in ring order by tenant', async () => {
    await insertAll(store(), [...tasksFor(A, 10, T0 - 500, 'tenant-a'), ...tasksFor(A, 2, T0, 'tenant-b')]);
    const claim = await store().claimDue(T0 + 10, { limit: 4, ...lease });
    expect(claim.map((t) => t.tenantId)).toEqual(['tenant-a', 'tenant-b', 'tenant-a', 'tenant-b']);
    const next = await store().claimDue(T0 + 10, { limit: 4, ...lease, after: target(A, 'tenant-a') });
    expect(next.map((t) => t.tenantId)).toEqual(['tenant-a', 'tenant-a', 'tenant-a', 'tenant-a']);
  });

  it('holds a target: its due tasks stay PENDING and unclaimed until the hold ends, others go on', async () => {
    const held = tasksFor(A, 3);
    await insertAll(store(), [...held, ...tasksFor(B, 2)]);
    await store().holdTarget(target(A), T0 + 1_000, T0);
    const during = await store().claimDue(T0 + 10, { limit: 10, ...lease });
    expect(keysOf(during)).toEqual([B, B]);
    for (const task of held) expect((await store().getTask('default', task.taskId))?.status).toBe('PENDING');
    // The timer aims at the hold's end, not at the held tasks' due times.
    expect(await store().nextDueAt()).toBe(T0 + 1_000);
    expect(await store().claimDue(T0 + 999, { limit: 10, ...lease })).toEqual([]);
    const after = await store().claimDue(T0 + 1_000, { limit: 10, ...lease });
    expect(keysOf(after)).toEqual([A, A, A]);
    // Held tasks burned no attempt.
    expect(after.map((t) => t.attemptNumber)).toEqual([0, 0, 0]);
  });

  it('releases a hold at once, holds per tenant, and takes a later hold over an earlier one', async () => {
    await insertAll(store(), [...tasksFor(A, 2), ...tasksFor(A, 1, T0, 'tenant-b')]);
    await store().holdTarget(target(A), T0 + 1_000, T0);
    await store().holdTarget(target(A), T0 + 5_000, T0 + 1);
    // Another tenant's queue for the same origin is not held.
    expect((await store().claimDue(T0 + 2_000, { limit: 10, ...lease })).map((t) => t.tenantId)).toEqual(['tenant-b']);
    expect(await store().nextDueAt()).toBe(T0 + 5_000);
    await store().releaseTarget(target(A), T0 + 2_001);
    expect(keysOf(await store().claimDue(T0 + 2_002, { limit: 10, ...lease }))).toEqual([A, A]);
    // Holding or releasing a target with no tasks is allowed and changes nothing else.
    await store().holdTarget(target(C), T0 + 9_000, T0);
    await store().releaseTarget(target('https://never.example.com'), T0);
    expect(await store().nextDueAt()).toBeNull();
  });

  it('keeps a held target held for tasks that become due during the hold (retries, inserts, releases)', async () => {
    await insertAll(store(), tasksFor(A, 2));
    const [first] = await store().claimDue(T0, { limit: 1, ...lease });
    if (first === undefined) throw new Error('expected a claim');
    await store().holdTarget(target(A), T0 + 10_000, T0 + 1);
    const retried = { tenantId: 'default', taskId: first.taskId, fencingToken: first.fencingToken, next: retryOutcome(first, T0 + 20) };
    expect((await store().completeAttempts([retried], T0 + 2))[0]?.kind).toBe('applied');
    await insertAll(store(), tasksFor(A, 1, T0 + 30));
    expect(await store().claimDue(T0 + 5_000, { limit: 10, ...lease })).toEqual([]);
    expect(await store().nextDueAt()).toBe(T0 + 10_000);
    expect(await store().claimDue(T0 + 10_000, { limit: 10, ...lease })).toHaveLength(3);
  });

  it('reports when a target is next ready: early at worst, corrected by a claim that finds nothing, never late', async () => {
    await insertAll(store(), [...tasksFor(A, 1, T0 + 100), ...tasksFor(B, 1, T0 + 50)]);
    expect(await store().nextDueAt()).toBe(T0 + 50);
    await store().claimDue(T0 + 60, { limit: 10, ...lease });
    const next = await store().nextDueAt();
    expect(next).not.toBeNull();
    expect(next as number).toBeLessThanOrEqual(T0 + 100);
    // A claim before anything is due leaves the store exact.
    expect(await store().claimDue(T0 + 61, { limit: 10, ...lease })).toEqual([]);
    expect(await store().nextDueAt()).toBe(T0 + 100);
    // A retry due earlier than the queue's head pulls it forward.
    await insertAll(store(), tasksFor(C, 1, T0 + 70));
    const [c] = await store().claimDue(T0 + 70, { limit: 10, ...lease });
    if (c === undefined) throw new Error('expected a claim');
    const retried = { tenantId: 'default', taskId: c.taskId, fencingToken: c.fencingToken, next: retryOutcome(c, T0 + 80) };
    await store().completeAttempts([retried], T0 + 71);
    expect(await store().nextDueAt()).toBeLessThanOrEqual(T0 + 80);
    expect(keysOf(await store().claimDue(T0 + 80, { limit: 10, ...lease }))).toEqual([C]);
  });

  it('takes a task inserted already leased (the hand-off): never claimed, completed by its token, reaped when its lease lapses', async () => {
    const handedOff = (n: number) =>
      makeTask({
        targetUrl: `${A}/hook`,
        status: 'IN_FLIGHT',
        leaseOwner: 'local-engine',
        leaseExpiresAt: T0 + 1_000 + n,
        fencingToken: 1,
        nextAttemptAt: T0,
      });
    const [done, lost] = [handedOff(0), handedOff(1)];
    await insertAll(store(), [done, lost, ...tasksFor(B, 1)]);
    expect(await store().getTask('default', done.taskId)).toEqual(done);
    expect(keysOf(await store().claimDue(T0 + 10, { limit: 10, leaseMs: 60_000, workerId: 'w' }))).toEqual([B]);
    expect(await store().nextDueAt()).toBeNull();
    expect(await store().nextLeaseExpiryAt()).toBe(T0 + 1_000);
    expect(await store().extendLease('default', done.taskId, 1, T0 + 2_000)).toBe(true);
    const applied = await store().completeAttempts(
      [{ tenantId: 'default', taskId: done.taskId, fencingToken: 1, next: finalOutcome(done, 'SUCCEEDED') }],
      T0 + 20,
    );
    expect(applied[0]).toMatchObject({ kind: 'applied', status: 'SUCCEEDED' });
    expect((await store().findExpiredLeases(T0 + 1_500, 10)).map((t) => t.taskId)).toEqual([lost.taskId]);
    const reaped = await store().completeAttempts(
      [{ tenantId: 'default', taskId: lost.taskId, fencingToken: 1, requireLeaseExpiredBy: T0 + 1_500, next: retryOutcome(lost, T0 + 1_600) }],
      T0 + 1_500,
    );
    expect(reaped[0]).toMatchObject({ kind: 'applied', status: 'PENDING' });
    expect(await store().nextDueAt()).toBe(T0 + 1_600);
    expect((await store().claimDue(T0 + 1_600, { limit: 10, ...lease })).map((t) => t.taskId)).toEqual([lost.taskId]);
  });
}
