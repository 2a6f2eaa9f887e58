import { expect, it } from 'vitest';
import { T0, finalOutcome, makeTask } from '../fixtures/tasks.js';
import type { CurrentStore } from './helpers.js';
import { claimById, claimed, insertAll, insertAllStored } from './helpers.js';

const lease = (workerId: string, leaseMs = 5_000) => ({ leaseMs, workerId });

export function schedulingCases(store: CurrentStore): void {
  it('claims only due PENDING tasks, earliest due first, up to the limit, and leases them', async () => {
    const due = [30, 10, 20, 40].map((offset) => makeTask({ nextAttemptAt: T0 + offset }));
    const later = makeTask({ nextAttemptAt: T0 + 101 });
    const done = makeTask({ status: 'SUCCEEDED', nextAttemptAt: null });
    const cancelled = makeTask({ status: 'CANCELLED', nextAttemptAt: null });
    await insertAllStored(store(), [...due, later, done, cancelled]);
    const now = T0 + 100;

    const first = await store().claimDue(now, { limit: 3, ...lease('w1') });
    expect(first.map((t) => t.nextAttemptAt)).toEqual([T0 + 10, T0 + 20, T0 + 30]);
    for (const task of first) {
      const before = due.find((t) => t.taskId === task.taskId);
      expect(task).toMatchObject({ status: 'IN_FLIGHT', leaseOwner: 'w1', leaseExpiresAt: now + 5_000 });
      expect(task.fencingToken).toBeGreaterThan(before?.fencingToken ?? Infinity);
      expect(task.version).toBeGreaterThan(before?.version ?? Infinity);
      expect(await store().getTask('default', task.taskId)).toEqual(task);
    }
    expect((await store().claimDue(now, { limit: 3, ...lease('w2') })).map((t) => t.nextAttemptAt)).toEqual([T0 + 40]);
    expect(await store().claimDue(now, { limit: 3, ...lease('w2') })).toEqual([]);
    expect((await store().claimDue(T0 + 101, { limit: 3, ...lease('w2') })).map((t) => t.taskId)).toEqual([later.taskId]);
  });

  it('never hands one task to two concurrent claims', async () => {
    const tasks = Array.from({ length: 120 }, (_, i) => makeTask({ nextAttemptAt: T0 + (i % 7) }));
    await insertAll(store(), tasks);
    const claims = await Promise.all(
      Array.from({ length: 24 }, (_, w) => store().claimDue(T0 + 10, { limit: 7, ...lease(`w${w}`) })),
    );
    const claimedIds = claims.flat().map((t) => t.taskId);
    expect(new Set(claimedIds).size).toBe(claimedIds.length);
    expect(new Set(claimedIds)).toEqual(new Set(tasks.map((t) => t.taskId)));
    claims.forEach((batch, w) => batch.forEach((t) => expect(t.leaseOwner).toBe(`w${w}`)));
  });

  it('reports the earliest due time of PENDING tasks only', async () => {
    expect(await store().nextDueAt()).toBeNull();
    await insertAllStored(store(), [
      makeTask({ nextAttemptAt: T0 + 50 }),
      makeTask({ nextAttemptAt: T0 + 20 }),
      makeTask({ status: 'SUCCEEDED', nextAttemptAt: null }),
    ]);
    expect(await store().nextDueAt()).toBe(T0 + 20);
    await store().claimDue(T0 + 20, { limit: 10, ...lease('w1') });
    expect(await store().nextDueAt()).toBe(T0 + 50);
    await store().claimDue(T0 + 50, { limit: 10, ...lease('w1') });
    expect(await store().nextDueAt()).toBeNull();
  });

  it('finds lapsed leases earliest first without changing them, and reports the next expiry', async () => {
    expect(await store().nextLeaseExpiryAt()).toBeNull();
    const tasks = [0, 1, 2].map((i) => makeTask({ nextAttemptAt: T0 + i }));
    await insertAll(store(), tasks);
    // Claimed one at a time, 200 ms apart, with 1 s leases: they lapse at T0+1000, T0+1200 and T0+1400.
    const held = [];
    for (const [i, task] of tasks.entries()) held.push(await claimById(store(), task.taskId, T0 + i * 200));
    expect(new Set(held.map((t) => t.taskId)).size).toBe(3);
    expect(await store().nextLeaseExpiryAt()).toBe(T0 + 1_000);

    expect(await store().findExpiredLeases(T0 + 999, 10)).toEqual([]);
    const lapsed = await store().findExpiredLeases(T0 + 1_200, 10);
    expect(lapsed).toEqual([held[0], held[1]]);
    expect(await store().findExpiredLeases(T0 + 5_000, 1)).toEqual([held[0]]);
    for (const task of held) expect(await store().getTask('default', task.taskId)).toEqual(task);
  });

  it('extends a lease only for the token that holds it', async () => {
    const task = await claimed(store(), makeTask());
    expect(await store().extendLease('default', task.taskId, task.fencingToken, T0 + 9_000)).toBe(true);
    expect(await store().getTask('default', task.taskId)).toMatchObject({
      status: 'IN_FLIGHT',
      leaseExpiresAt: T0 + 9_000,
      fencingToken: task.fencingToken,
    });
    expect(await store().nextLeaseExpiryAt()).toBe(T0 + 9_000);
    expect(await store().extendLease('default', task.taskId, task.fencingToken - 1, T0 + 20_000)).toBe(false);
    expect(await store().extendLease('other', task.taskId, task.fencingToken, T0 + 20_000)).toBe(false);
    expect((await store().getTask('default', task.taskId))?.leaseExpiresAt).toBe(T0 + 9_000);

    const completion = { tenantId: 'default', taskId: task.taskId, fencingToken: task.fencingToken };
    await store().completeAttempts([{ ...completion, next: finalOutcome(task, 'SUCCEEDED') }], T0 + 10);
    expect(await store().extendLease('default', task.taskId, task.fencingToken, T0 + 20_000)).toBe(false);
  });

  it('hands held leases back as PENDING, due now, without counting an attempt', async () => {
    const tasks = [makeTask(), makeTask(), makeTask()];
    await insertAll(store(), tasks);
    const held = await store().claimDue(T0, { limit: 3, ...lease('w1') });
    const [a, b, c] = held;
    if (a === undefined || b === undefined || c === undefined) throw new Error('expected three claims');
    const now = T0 + 300;
    const released = await store().releaseLeases(
      [
        { tenantId: 'default', taskId: a.taskId, fencingToken: a.fencingToken },
        { tenantId: 'default', taskId: b.taskId, fencingToken: b.fencingToken },
        { tenantId: 'default', taskId: c.taskId, fencingToken: c.fencingToken + 1 },
      ],
      now,
    );
    expect(released).toBe(2);
    for (const task of [a, b]) {
      const after = await store().getTask('default', task.taskId);
      expect(after).toMatchObject({
        status: 'PENDING',
        nextAttemptAt: now,
        leaseOwner: null,
        leaseExpiresAt: null,
        attemptNumber: task.attemptNumber,
      });
    }
    expect((await store().getTask('default', c.taskId))?.status).toBe('IN_FLIGHT');
    expect(await store().releaseLeases([], now)).toBe(0);
    const again = await store().claimDue(now, { limit: 10, ...lease('w2') });
    expect(new Set(again.map((t) => t.taskId))).toEqual(new Set([a.taskId, b.taskId]));
  });

  it('keeps fractional milliseconds exactly: the engine clock is performance.timeOrigin + performance.now()', async () => {
    const now = T0 + 0.375;
    const tasks = [0.25, 0.125].map((f) => makeTask({ nextAttemptAt: T0 + f, createdAt: T0 + f, updatedAt: T0 + f }));
    await insertAll(store(), tasks);
    expect(await store().getTask('default', tasks[0]?.taskId ?? '')).toEqual(tasks[0]);
    expect(await store().nextDueAt()).toBe(T0 + 0.125);
    const page = await store().listTasks({ tenantId: 'default', limit: 1 });
    const rest = await store().listTasks({ tenantId: 'default', limit: 1, ...(page.nextCursor && { cursor: page.nextCursor }) });
    expect([...page.items, ...rest.items].map((t) => t.createdAt)).toEqual([T0 + 0.25, T0 + 0.125]);

    const claims = await store().claimDue(now, { limit: 5, ...lease('w', 1_000.5) });
    expect(claims.map((t) => [t.nextAttemptAt, t.leaseExpiresAt, t.updatedAt])).toEqual([
      [T0 + 0.125, now + 1_000.5, now],
      [T0 + 0.25, now + 1_000.5, now],
    ]);
    expect(await store().findExpiredLeases(now + 1_000.4, 5)).toEqual([]);
    expect(await store().findExpiredLeases(now + 1_000.5, 5)).toHaveLength(2);
  });
}
