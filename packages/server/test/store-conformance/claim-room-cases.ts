import { expect, it } from 'vitest';
import type { RetryTask } from '../../src/domain/task.js';
import type { ClaimRooms } from '../../src/store/store.js';
import { T0, makeTask } from '../fixtures/tasks.js';
import type { CurrentStore } from './helpers.js';
import { insertAll } from './helpers.js';

const A = 'https://a.example.com';
const B = 'https://b.example.com';
const C = 'https://c.example.com';
const lease = { leaseMs: 1_000, workerId: 'w' };

function tasksFor(origin: string, n: number, tenantId = 'default'): RetryTask[] {
  return Array.from({ length: n }, (_, i) => makeTask({ tenantId, targetUrl: `${origin}/hook`, nextAttemptAt: T0 + i }));
}
const keysOf = (tasks: readonly RetryTask[]) => tasks.map((t) => t.targetKey);
const where = (tasks: readonly RetryTask[]) => tasks.map((t) => `${t.tenantId} ${t.targetKey}`);

/** Rooms: `tenant` and `target` for everyone not listed, then the listed ones. */
function rooms(tenant: number, target: number, tenants: Record<string, number> = {}, targets: Record<string, Record<string, number>> = {}): ClaimRooms {
  return {
    tenant,
    target,
    tenants: new Map(Object.entries(tenants)),
    targets: new Map(Object.entries(targets).map(([tenantId, byKey]) => [tenantId, new Map(Object.entries(byKey))])),
  };
}

/** `ClaimOptions.rooms`: the claimer's shares of its own slots, by tenant and by target queue. */
export function claimRoomCases(store: CurrentStore): void {
  it('takes no more of a queue than its room, and nothing of a queue whose room is 0: it takes no share either', async () => {
    await insertAll(store(), [...tasksFor(A, 5), ...tasksFor(B, 5), ...tasksFor(C, 5)]);
    const claim = await store().claimDue(T0 + 10, { limit: 6, ...lease, rooms: rooms(100, 100, {}, { default: { [A]: 0, [B]: 1 } }) });
    // Two queues considered (B and C), a share of 3 each; B's room is 1.
    expect(keysOf(claim)).toEqual([B, C, C, C]);
    // What the rooms left stays PENDING and due: a claim without rooms takes it.
    expect(keysOf(await store().claimDue(T0 + 10, { limit: 20, ...lease })).sort()).toEqual([...Array<string>(5).fill(A), ...Array<string>(4).fill(B), C, C].sort());
  });

  it('gives every queue not listed the default room, and a lone queue no more than its room', async () => {
    await insertAll(store(), [...tasksFor(A, 5), ...tasksFor(B, 5)]);
    expect(keysOf(await store().claimDue(T0 + 10, { limit: 10, ...lease, rooms: rooms(100, 2) }))).toEqual([A, B, A, B]);
    await store().claimDue(T0 + 10, { limit: 10, ...lease, rooms: rooms(100, 100, {}, { default: { [A]: 0 } }) });
    // Only A is left: one queue, its room 2.
    expect(keysOf(await store().claimDue(T0 + 10, { limit: 10, ...lease, rooms: rooms(100, 2) }))).toEqual([A, A]);
    expect(await store().claimDue(T0 + 10, { limit: 10, ...lease, rooms: rooms(0, 2) })).toEqual([]);
    expect(await store().claimDue(T0 + 10, { limit: 10, ...lease, rooms: rooms(5, 5, {}, { default: { [A]: 0 } }) })).toEqual([]);
    expect(keysOf(await store().claimDue(T0 + 10, { limit: 10, ...lease }))).toEqual([A]);
  });

  it("bounds a tenant's take over all its queues by its room, dealt round robin before the cut", async () => {
    await insertAll(store(), [...tasksFor(A, 5, 't1'), ...tasksFor(B, 5, 't1'), ...tasksFor(A, 5, 't2')]);
    const claim = await store().claimDue(T0 + 10, { limit: 9, ...lease, rooms: rooms(100, 100, { t1: 3 }) });
    // Three queues, a share of 3 each, dealt t1 A, t1 B, t2 A, …; t1's fourth and later are left out.
    expect(where(claim)).toEqual([`t1 ${A}`, `t1 ${B}`, `t2 ${A}`, `t1 ${A}`, `t2 ${A}`, `t2 ${A}`]);
    // A tenant whose room is 0 gives nothing; the others go on.
    const next = await store().claimDue(T0 + 10, { limit: 9, ...lease, rooms: rooms(100, 100, { t1: 0 }) });
    expect(where(next)).toEqual([`t2 ${A}`, `t2 ${A}`]);
    // Left out means untouched: still PENDING and claimable.
    expect(await store().claimDue(T0 + 10, { limit: 20, ...lease })).toHaveLength(7);
  });

  it('holds completeAndClaim to the same rooms', async () => {
    await insertAll(store(), [...tasksFor(A, 3), ...tasksFor(B, 3)]);
    const { claimed } = await store().completeAndClaim([], T0 + 10, { limit: 6, ...lease, rooms: rooms(100, 100, {}, { default: { [A]: 1 } }) });
    expect(keysOf(claimed)).toEqual([A, B, B, B]);
  });
}
