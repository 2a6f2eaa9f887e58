import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { RetryTask } from '../src/domain/task.js';
import { LOWER_HINT_AND_FREE } from '../src/backends/sqlite/queue-statements.js';
import { nextTokenAt, refill, wholeTokens } from '../src/backends/sqlite/token-bucket.js';
import type { TargetRef } from '../src/store/store.js';
import { T0, finalOutcome, retryOutcome } from './fixtures/tasks.js';
import { A, B, forTarget, freshPath, lease, opened, removeTempDir } from './sqlite-harness.js';

// The SQLite store's limits where the conformance suite cannot look: the bucket's arithmetic, the gate columns a
// claim leaves behind, what unlimited queues pay, and limits shared by two connections on one file.

afterAll(removeTempDir);

const target = (targetKey: string): TargetRef => ({ tenantId: 'default', targetKey });
const done = (task: RetryTask) => ({ tenantId: task.tenantId, taskId: task.taskId, fencingToken: task.fencingToken, next: finalOutcome(task, 'SUCCEEDED') });

/** A queue's gate columns, read from the file. */
function gateOf(path: string, targetKey: string) {
  const raw = new Database(path, { readonly: true });
  const row = raw
    .prepare('SELECT tokens, tokens_at, throttled_until, full_until, ready_at FROM target_queues WHERE tenant_id = ? AND target_key = ?')
    .get('default', targetKey);
  raw.close();
  return row;
}

describe('the token bucket', () => {
  it('refills in whole figures: 100 ms at 10/s is exactly one token, and never past the burst', () => {
    expect(refill({ tokens: 0, countedAt: T0 }, 10, 3, T0 + 100)).toEqual({ tokens: 1, countedAt: T0 + 100 });
    expect(refill({ tokens: 0.5, countedAt: T0 }, 10, 3, T0 + 250)).toEqual({ tokens: 3, countedAt: T0 + 250 });
    expect(wholeTokens(refill({ tokens: 0, countedAt: T0 }, 3, 5, T0 + 1_000))).toBe(3);
  });

  it('gains nothing, and keeps its count, on a clock behind the one that counted last', () => {
    expect(refill({ tokens: 0.5, countedAt: T0 }, 10, 3, T0 - 50)).toEqual({ tokens: 0.5, countedAt: T0 });
    // A smaller burst still caps it.
    expect(refill({ tokens: 2.5, countedAt: T0 }, 10, 1, T0 - 50)).toEqual({ tokens: 1, countedAt: T0 });
  });

  it('says when the next whole token comes, at a time the refill agrees with', () => {
    expect(nextTokenAt({ tokens: 1, countedAt: T0 }, 10)).toBeNull();
    expect(nextTokenAt({ tokens: 0, countedAt: T0 }, 10)).toBe(T0 + 100);
    for (const [tokens, rate] of [
      [0.3, 7],
      [0.1, 3],
      [0.7, 0.3],
      [1 / 3, 1_000],
    ] as const) {
      const at = nextTokenAt({ tokens, countedAt: T0 + 0.1 }, rate) as number;
      expect(refill({ tokens, countedAt: T0 + 0.1 }, rate, 5, at).tokens, `${tokens} at ${rate}/s`).toBeGreaterThanOrEqual(1);
      expect(at - (T0 + 0.1)).toBeCloseTo(((1 - tokens) * 1000) / rate, 3);
    }
  });
});

describe('target limits in the SQLite store', () => {
  it('keeps the throttles apart: a completion frees the in-flight slot and keeps the wait for the next token', async () => {
    const path = freshPath();
    await using store = await opened(path);
    await store.insertTasks(Array.from({ length: 3 }, (_, i) => forTarget(A, { nextAttemptAt: T0 + i })));
    await store.limitTarget(target(A), { ratePerSecond: 10, burst: 1, maxInFlight: 1 }, T0);
    const [first] = await store.claimDue(T0 + 10, { ...lease, limit: 10 });
    if (first === undefined) throw new Error('expected a claim');
    expect(gateOf(path, A)).toEqual({ tokens: 0, tokens_at: T0 + 10, throttled_until: T0 + 110, full_until: T0 + 1_010, ready_at: T0 + 1_010 });
    await store.completeAttempts([done(first)], T0 + 20);
    expect(gateOf(path, A)).toMatchObject({ throttled_until: T0 + 110, full_until: null, ready_at: T0 + 110 });
    expect(await store.nextDueAt()).toBe(T0 + 110);
    expect(await store.admin.getTarget(target(A), T0 + 20)).toMatchObject({ throttledUntil: T0 + 110, inFlight: 0, dueTasks: 2 });
    expect(await store.claimDue(T0 + 109, { ...lease, limit: 10 })).toEqual([]);
    expect(await store.claimDue(T0 + 110, { ...lease, limit: 10 })).toHaveLength(1);
  });

  it('does not spin on a queue at its limit whose leases all lapsed: it waits a lease length, or for the reaper', async () => {
    const path = freshPath();
    await using store = await opened(path);
    await store.insertTasks(Array.from({ length: 3 }, () => forTarget(A)));
    await store.limitTarget(target(A), { ratePerSecond: null, burst: null, maxInFlight: 1 }, T0);
    const [held] = await store.claimDue(T0, { ...lease, limit: 10 });
    if (held === undefined) throw new Error('expected a claim');
    expect(gateOf(path, A)).toMatchObject({ full_until: T0 + 1_000 });
    // The lease lapsed and is not reaped yet: still in flight, so still at the limit, for another lease length.
    expect(await store.claimDue(T0 + 2_000, { ...lease, limit: 10 })).toEqual([]);
    expect(gateOf(path, A)).toMatchObject({ full_until: T0 + 3_000 });
    expect(await store.nextDueAt()).toBe(T0 + 3_000);
    const reaped = { ...done(held), requireLeaseExpiredBy: T0 + 2_001, next: retryOutcome(held, T0 + 9_000) };
    expect((await store.completeAttempts([reaped], T0 + 2_001))[0]?.kind).toBe('applied');
    expect(await store.nextDueAt()).toBe(T0);
    expect(await store.claimDue(T0 + 2_002, { ...lease, limit: 10 })).toHaveLength(1);
  });

  it('keeps the tokens when limits change: refilled at the old rate, capped at the new burst, full when new', async () => {
    const path = freshPath();
    await using store = await opened(path);
    await store.limitTarget(target(A), { ratePerSecond: 10, burst: 5, maxInFlight: null }, T0);
    expect(gateOf(path, A)).toMatchObject({ tokens: 5, tokens_at: T0, throttled_until: null });
    await store.insertTasks(Array.from({ length: 5 }, () => forTarget(A)));
    expect(await store.claimDue(T0, { ...lease, limit: 10 })).toHaveLength(5);
    expect(gateOf(path, A)).toMatchObject({ tokens: 0, throttled_until: T0 + 100 });
    // 150 ms at the old 10/s: one and a half tokens, kept as the rate halves.
    await store.limitTarget(target(A), { ratePerSecond: 5, burst: 5, maxInFlight: null }, T0 + 150);
    expect(gateOf(path, A)).toMatchObject({ tokens: 1.5, tokens_at: T0 + 150, throttled_until: null });
    await store.limitTarget(target(A), { ratePerSecond: 5, burst: 1, maxInFlight: null }, T0 + 150);
    expect(gateOf(path, A)).toMatchObject({ tokens: 1 });
    await store.limitTarget(target(A), { ratePerSecond: null, burst: null, maxInFlight: 2 }, T0 + 150);
    expect(gateOf(path, A)).toMatchObject({ tokens: null, tokens_at: null, throttled_until: null });
    expect(await store.admin.getTarget(target(A), T0 + 150)).toMatchObject({ ratePerSecond: null, burst: null, maxInFlight: 2, inFlight: 5 });
  });

  it('costs a queue without limits no write when its tasks leave IN_FLIGHT, and frees a limited one once per call', async () => {
    const path = freshPath();
    await using store = await opened(path);
    await store.insertTasks([forTarget(A), forTarget(B)]);
    const raw = new Database(path);
    const free = raw.prepare(LOWER_HINT_AND_FREE);
    // A's queue is number 1, B's number 2.
    expect(free.run({ queueId: 1, dueAt: null }).changes).toBe(0);
    raw.prepare('UPDATE target_queues SET max_in_flight = 1, full_until = ? WHERE target_key = ?').run(T0 + 5, B);
    expect(free.run({ queueId: 2, dueAt: null }).changes).toBe(1);
    expect(free.run({ queueId: 2, dueAt: null }).changes).toBe(0);
    raw.close();
  });

  it('lists each target with its own in-flight count, gates past now shown as none', async () => {
    await using store = await opened();
    await store.insertTasks([forTarget(A), forTarget(A), forTarget(B), forTarget(B, { tenantId: 'other' })]);
    await store.claimDue(T0, { ...lease, limit: 10 });
    await store.holdTarget(target(B), T0 + 50, T0);
    const page = await store.admin.listTargets('default', { limit: 10 }, T0 + 10);
    expect(page.items.map((t) => [t.targetKey, t.inFlight, t.heldUntil])).toEqual([
      [A, 2, null],
      [B, 1, T0 + 50],
    ]);
    expect((await store.admin.getTarget(target(B), T0 + 50))?.heldUntil).toBeNull();
    await expect(store.admin.listTargets('default', { limit: 1, cursor: 'nonsense' }, T0)).rejects.toThrow(/cursor/i);
  });

  it('shares one bucket and one in-flight count between two connections on one file', async () => {
    const path = freshPath();
    await using one = await opened(path);
    await using two = await opened(path);
    await one.insertTasks(Array.from({ length: 40 }, (_, i) => forTarget(A, { nextAttemptAt: T0 + i / 100 })));
    await two.limitTarget(target(A), { ratePerSecond: 100, burst: 4, maxInFlight: 6 }, T0);
    const claimed: RetryTask[] = [];
    // 10 ms steps at 100/s: one token per step after the burst, whichever connection claims.
    for (let step = 0; step <= 10; step++) {
      const store = step % 2 === 0 ? one : two;
      claimed.push(...(await store.claimDue(T0 + 1 + step * 10, { leaseMs: 60_000, workerId: `w${step % 2}`, limit: 10 })));
    }
    // 4 at once, then one per step until six are in flight.
    expect(claimed).toHaveLength(6);
    await one.completeAttempts(claimed.slice(0, 3).map(done), T0 + 200);
    expect(await two.claimDue(T0 + 200, { ...lease, limit: 10 })).toHaveLength(3);
    expect(await one.claimDue(T0 + 10_000, { ...lease, limit: 10 })).toEqual([]);
  });
});
