import type { ConformanceLeeway } from '../store-conformance.js';
import { expect, it } from 'vitest';
import type { RetryTask } from '../../src/domain/task.js';
import type { TargetLimits, TargetRef } from '../../src/store/store.js';
import { T0, finalOutcome, makeTask, retryOutcome } from '../fixtures/tasks.js';
import type { CurrentStore } from './helpers.js';
import { insertAll } from './helpers.js';

const A = 'https://a.example.com';
const B = 'https://b.example.com';
const lease = { leaseMs: 60_000, workerId: 'w' };
const NO_LIMITS: TargetLimits = { ratePerSecond: null, burst: null, maxInFlight: null };

function tasksFor(origin: string, n: number, due = T0, tenantId = 'default'): RetryTask[] {
  return Array.from({ length: n }, (_, i) => makeTask({ tenantId, targetUrl: `${origin}/hook`, nextAttemptAt: due + i / 1_000 }));
}
const target = (targetKey: string, tenantId = 'default'): TargetRef => ({ tenantId, targetKey });
const count = (tasks: readonly RetryTask[], key: string) => tasks.filter((t) => t.targetKey === key).length;
const done = (task: RetryTask) => ({
  tenantId: task.tenantId,
  taskId: task.taskId,
  fencingToken: task.fencingToken,
  next: finalOutcome(task, 'SUCCEEDED'),
});

export function limitCases(store: CurrentStore, leeway: ConformanceLeeway = {}): void {
  const exact = it.skipIf(leeway.sharedTargetLimits === true);
  exact('rate-limits a target with a token bucket: a burst, then one claim per token, the rest waiting ready-later', async () => {
    await insertAll(store(), [...tasksFor(A, 20), ...tasksFor(B, 5)]);
    await store().limitTarget(target(A), { ratePerSecond: 10, burst: 3, maxInFlight: null }, T0);
    const first = await store().claimDue(T0 + 1, { limit: 20, ...lease });
    expect(count(first, A)).toBe(3);
    expect(count(first, B)).toBe(5);
    expect(await store().claimDue(T0 + 1, { limit: 20, ...lease })).toEqual([]);
    // The next token comes 100 ms after the bucket emptied: the store says so, and not earlier claims.
    const next = await store().nextDueAt();
    expect(next).not.toBeNull();
    expect(next as number).toBeGreaterThan(T0 + 1);
    expect(next as number).toBeLessThanOrEqual(T0 + 101);
    expect(await store().claimDue(T0 + 100, { limit: 20, ...lease })).toEqual([]);
    expect(count(await store().claimDue(T0 + 101, { limit: 20, ...lease }), A)).toBe(1);
    // 250 ms later the bucket holds 2.5 tokens: two claims.
    expect(count(await store().claimDue(T0 + 351, { limit: 20, ...lease }), A)).toBe(2);
    // A long quiet spell refills it to its burst, never past it.
    expect(count(await store().claimDue(T0 + 60_000, { limit: 20, ...lease }), A)).toBe(3);
  });

  exact('limits the attempts of a target in flight at once, counting hand-offs, and frees a slot as each ends', async () => {
    await insertAll(store(), [...tasksFor(A, 10), ...tasksFor(B, 2)]);
    await store().limitTarget(target(A), { ratePerSecond: null, burst: null, maxInFlight: 3 }, T0);
    const handedOff = makeTask({
      targetUrl: `${A}/hook`,
      status: 'IN_FLIGHT',
      leaseOwner: 'local-engine',
      leaseExpiresAt: T0 + 60_000,
      fencingToken: 1,
    });
    await insertAll(store(), [handedOff]);
    const first = await store().claimDue(T0 + 1, { limit: 20, ...lease });
    expect(count(first, A)).toBe(2);
    expect(count(first, B)).toBe(2);
    // At its limit, the target is not ready: claims take nothing and do not spin on it.
    expect(await store().claimDue(T0 + 2, { limit: 20, ...lease })).toEqual([]);
    const next = await store().nextDueAt();
    expect(next === null || next > T0 + 2).toBe(true);
    // An attempt that ends (a success, a retry) frees its slot; a lease handed back frees one too.
    const [a1, a2] = first.filter((t) => t.targetKey === A) as [RetryTask, RetryTask];
    await store().completeAttempts([done(a1)], T0 + 3);
    expect(count(await store().claimDue(T0 + 4, { limit: 20, ...lease }), A)).toBe(1);
    const retried = { ...done(a2), next: retryOutcome(a2, T0 + 10) };
    await store().completeAttempts([retried], T0 + 5);
    expect(count(await store().claimDue(T0 + 10, { limit: 20, ...lease }), A)).toBe(1);
    await store().releaseLeases([{ tenantId: 'default', taskId: handedOff.taskId, fencingToken: 1 }], T0 + 11);
    expect(count(await store().claimDue(T0 + 12, { limit: 20, ...lease }), A)).toBe(1);
    expect(await store().claimDue(T0 + 13, { limit: 20, ...lease })).toEqual([]);
    // Lifting the limit lets the rest go.
    await store().limitTarget(target(A), NO_LIMITS, T0 + 14);
    expect(count(await store().claimDue(T0 + 15, { limit: 20, ...lease }), A)).toBe(7);
  });

  exact('frees a slot when a lapsed lease is reaped, and keeps limits per tenant', async () => {
    await insertAll(store(), [...tasksFor(A, 3), ...tasksFor(A, 3, T0, 'tenant-b')]);
    await store().limitTarget(target(A), { ratePerSecond: null, burst: null, maxInFlight: 1 }, T0);
    const first = await store().claimDue(T0 + 1, { limit: 20, leaseMs: 1_000, workerId: 'w' });
    expect(first.filter((t) => t.tenantId === 'default')).toHaveLength(1);
    expect(first.filter((t) => t.tenantId === 'tenant-b')).toHaveLength(3);
    const held = first.find((t) => t.tenantId === 'default') as RetryTask;
    const reaped = { ...done(held), requireLeaseExpiredBy: T0 + 1_001, next: retryOutcome(held, T0 + 5_000) };
    expect((await store().completeAttempts([reaped], T0 + 1_001))[0]?.kind).toBe('applied');
    expect((await store().claimDue(T0 + 1_002, { limit: 20, ...lease })).map((t) => t.tenantId)).toEqual(['default']);
  });

  it('extends a hold to the latest time it was given, and release ends it whatever it was', async () => {
    await insertAll(store(), tasksFor(A, 2));
    await store().holdTarget(target(A), T0 + 5_000, T0);
    await store().holdTarget(target(A), T0 + 1_000, T0 + 1);
    expect(await store().claimDue(T0 + 2_000, { limit: 20, ...lease })).toEqual([]);
    expect(await store().nextDueAt()).toBe(T0 + 5_000);
    await store().releaseTarget(target(A), T0 + 2_001);
    expect(await store().claimDue(T0 + 2_002, { limit: 20, ...lease })).toHaveLength(2);
  });

  it("shows each target's gate and counts to operators, page by page in key order, per tenant", async () => {
    expect(await store().admin.getTarget(target(A), T0)).toBeUndefined();
    await insertAll(store(), [...tasksFor(A, 4), ...tasksFor(B, 1, T0 + 50_000), ...tasksFor(A, 1, T0, 'tenant-b')]);
    await store().limitTarget(target(A), { ratePerSecond: 5, burst: 2, maxInFlight: 10 }, T0);
    await store().holdTarget(target(B), T0 + 90_000, T0);
    const [claimed] = await store().claimDue(T0 + 1, { limit: 1, ...lease });
    expect(claimed?.targetKey).toBe(A);
    const a = await store().admin.getTarget(target(A), T0 + 1);
    expect(a).toMatchObject({
      tenantId: 'default',
      targetKey: A,
      ratePerSecond: 5,
      burst: 2,
      maxInFlight: 10,
      heldUntil: null,
      inFlight: 1,
      dueTasks: 3,
    });
    expect(a?.nextDueAt).not.toBeNull();
    expect(a?.nextDueAt as number).toBeLessThanOrEqual(T0 + 0.001);
    const b = await store().admin.getTarget(target(B), T0 + 1);
    expect(b).toMatchObject({ heldUntil: T0 + 90_000, inFlight: 0, dueTasks: 0, ratePerSecond: null, maxInFlight: null });
    const first = await store().admin.listTargets('default', { limit: 1 }, T0 + 1);
    expect(first.items.map((t) => t.targetKey)).toEqual([A]);
    expect(first.nextCursor).toBeDefined();
    const second = await store().admin.listTargets('default', { limit: 1, cursor: first.nextCursor as string }, T0 + 1);
    expect(second.items.map((t) => t.targetKey)).toEqual([B]);
    expect(second.nextCursor).toBeUndefined();
    expect((await store().admin.listTargets('tenant-b', { limit: 10 }, T0 + 1)).items).toMatchObject([
      { tenantId: 'tenant-b', targetKey: A, ratePerSecond: null, dueTasks: 1 },
    ]);
    // Limits and holds of a target no task named yet make it known.
    await store().holdTarget(target('https://new.example.com'), T0 + 5, T0);
    expect(await store().admin.getTarget(target('https://new.example.com'), T0 + 1)).toMatchObject({ heldUntil: T0 + 5, dueTasks: 0 });
  });
}
