import type { ConformanceLeeway } from '../store-conformance.js';
import { expect, it } from 'vitest';
import type { RetryTask } from '../../src/domain/task.js';
import { DeadLetterReason, permanentStatusReason } from '../../src/domain/dead-letter-reason.js';
import type { AttemptCompletion } from '../../src/store/store.js';
import { T0, finalOutcome, makeAttempt, makeTask, retryOutcome } from '../fixtures/tasks.js';
import type { CurrentStore } from './helpers.js';
import { claimById, claimed, insertAll } from './helpers.js';

/** A completion of `task`'s current attempt by its holder: logs attempt `attemptNumber + 1`. */
function completion(task: RetryTask, overrides: Partial<AttemptCompletion> = {}): AttemptCompletion {
  return {
    tenantId: task.tenantId,
    taskId: task.taskId,
    fencingToken: task.fencingToken,
    attempt: makeAttempt(task),
    next: retryOutcome(task, T0 + 2_000),
    ...overrides,
  };
}

export function completionCases(store: CurrentStore, leeway: ConformanceLeeway = {}): void {
  it('applies the outcome for the claiming token and logs the attempt in the same change', async () => {
    const task = await claimed(store(), makeTask());
    const done = completion(task);
    const [result] = await store().completeAttempts([done], T0 + 50);
    const expected: RetryTask = {
      ...task,
      status: 'PENDING',
      attemptNumber: 1,
      nextAttemptAt: T0 + 2_000,
      runStartedAt: T0,
      lastDelayMs: 1_000,
      lastError: 'HTTP 503',
      lastResponseStatus: 503,
      leaseOwner: null,
      leaseExpiresAt: null,
      updatedAt: T0 + 50,
      version: expect.any(Number) as number,
    };
    expect(result).toEqual({
      kind: 'applied',
      taskId: task.taskId,
      status: 'PENDING',
      nextAttemptAt: T0 + 2_000,
      version: expect.any(Number) as number,
      cancelRequested: false,
    });
    const version = result?.kind === 'applied' ? result.version : 0;
    expect(version).toBeGreaterThan(task.version);
    // The summary is the stored task's: its version is the one the next optimistic update must present.
    expect(await store().getTask('default', task.taskId)).toEqual({ ...expected, version });
    expect(await store().listAttempts('default', task.taskId, { limit: 10 })).toEqual({ items: [done.attempt] });
    expect(await store().nextDueAt()).toBe(T0 + 2_000);
    expect(await store().nextLeaseExpiryAt()).toBeNull();
  });

  it('keeps every dead-letter reason the engine writes as it was written, and lists those tasks as dead letters', async () => {
    const reasons = [...Object.values(DeadLetterReason), permanentStatusReason(400)];
    const lastError = '169.254.169.254 is link-local (the cloud metadata service): blocked unless --allow-targets covers it (TARGET_BLOCKED)';
    const tasks = reasons.map(() => makeTask());
    for (const [i, reason] of reasons.entries()) {
      const task = await claimed(store(), tasks[i] as RetryTask);
      const status = reason === DeadLetterReason.TARGET_BLOCKED || reason.startsWith('permanent') ? 'FAILED' : 'EXHAUSTED';
      const next = { ...finalOutcome(task, status), deadLetterReason: reason, lastError };
      const [result] = await store().completeAttempts([completion(task, { next })], T0 + 50);
      expect(result).toMatchObject({ kind: 'applied', status });
    }
    const stored = await Promise.all(tasks.map((t) => store().getTask('default', t.taskId)));
    expect(stored.map((t) => [t?.deadLetterReason, t?.lastError])).toEqual(reasons.map((r) => [r, lastError]));
    const dead = await store().listTasks({ tenantId: 'default', limit: 100, status: ['FAILED', 'EXHAUSTED'] });
    expect(dead.items.map((t) => t.deadLetterReason).sort()).toEqual([...reasons].sort());
  });

  it('completes and claims in one call: results in order, fenced ones refused, the earliest due claimed up to the limit', async () => {
    const held = await claimed(store(), makeTask({ nextAttemptAt: T0 - 10 }));
    const other = await claimed(store(), makeTask({ nextAttemptAt: T0 - 5 }));
    const due = [30, 10, 20].map((offset) => makeTask({ nextAttemptAt: T0 + offset }));
    await insertAll(store(), due);
    const done = completion(held);
    const stale = completion(other, { fencingToken: other.fencingToken - 1 });
    const now = T0 + 50;

    const { results, claimed: taken } = await store().completeAndClaim([done, stale], now, { limit: 2, leaseMs: 5_000, workerId: 'w2' });
    expect(results).toEqual([
      { kind: 'applied', taskId: held.taskId, status: 'PENDING', nextAttemptAt: T0 + 2_000, version: expect.any(Number) as number, cancelRequested: false },
      { kind: 'fenced_out', taskId: other.taskId },
    ]);
    expect(taken.map((t) => t.nextAttemptAt)).toEqual([T0 + 10, T0 + 20]);
    for (const task of taken) {
      expect(task).toMatchObject({ status: 'IN_FLIGHT', leaseOwner: 'w2', leaseExpiresAt: now + 5_000, updatedAt: now });
      expect(await store().getTask('default', task.taskId)).toEqual(task);
    }
    expect(await store().listAttempts('default', held.taskId, { limit: 10 })).toEqual({ items: [done.attempt] });
    expect(await store().getTask('default', other.taskId)).toEqual(other);
    expect(await store().nextDueAt()).toBe(T0 + 30);

    // A claim of nothing still writes the completions.
    const [third] = await store().claimDue(now, { limit: 1, leaseMs: 5_000, workerId: 'w3' });
    if (third === undefined) throw new Error('expected the third due task');
    const none = await store().completeAndClaim([completion(third)], now, { limit: 0, leaseMs: 5_000, workerId: 'w3' });
    expect(none).toEqual({ results: [expect.objectContaining({ kind: 'applied', taskId: third.taskId })], claimed: [] });
  });

  it('fences out a completion with another token and changes nothing', async () => {
    const task = await claimed(store(), makeTask());
    const stale = completion(task, { fencingToken: task.fencingToken - 1 });
    expect(await store().completeAttempts([stale], T0 + 50)).toEqual([{ kind: 'fenced_out', taskId: task.taskId }]);
    expect(await store().getTask('default', task.taskId)).toEqual(task);
    expect((await store().listAttempts('default', task.taskId, { limit: 10 })).items).toEqual([]);
    const notInFlight = makeTask();
    await insertAll(store(), [notInFlight]);
    expect(await store().completeAttempts([completion(notInFlight)], T0)).toEqual([
      { kind: 'fenced_out', taskId: notInFlight.taskId },
    ]);
  });

  it('refuses a paused worker once its lapsed lease was reaped and the task claimed by another', async () => {
    const first = await claimed(store(), makeTask(), T0, 1_000, 'worker-1');
    // The lease reaper records the lost attempt and makes the task due again.
    const [lapsed] = await store().findExpiredLeases(T0 + 1_000, 10);
    expect(lapsed).toEqual(first);
    const reaped = completion(first, {
      requireLeaseExpiredBy: T0 + 1_000,
      attempt: makeAttempt(first, { outcome: 'lease_expired', responseStatus: null, workerId: 'reaper' }),
      next: retryOutcome(first, T0 + 1_000, { lastError: 'lease expired', lastResponseStatus: null }),
    });
    expect((await store().completeAttempts([reaped], T0 + 1_000))[0]?.kind).toBe('applied');
    const second = await claimById(store(), first.taskId, T0 + 1_000, 1_000, 'worker-2');
    expect(second.fencingToken).toBeGreaterThan(first.fencingToken);

    // worker-1 wakes up and reports attempt 2 with its old token: refused.
    const late = completion({ ...first, attemptNumber: 1 }, { next: finalOutcome({ ...first, attemptNumber: 1 }, 'SUCCEEDED') });
    expect(await store().completeAttempts([late], T0 + 1_500)).toEqual([{ kind: 'fenced_out', taskId: first.taskId }]);
    expect(await store().getTask('default', first.taskId)).toEqual(second);

    const own = completion(second, {
      attempt: makeAttempt(second, { workerId: 'worker-2', outcome: 'succeeded', responseStatus: 200 }),
      next: finalOutcome(second, 'SUCCEEDED'),
    });
    expect((await store().completeAttempts([own], T0 + 1_600))[0]).toMatchObject({
      kind: 'applied',
      taskId: first.taskId,
      status: 'SUCCEEDED',
      nextAttemptAt: null,
    });
    expect(await store().getTask('default', first.taskId)).toMatchObject({ status: 'SUCCEEDED', attemptNumber: 2 });
    const log = await store().listAttempts('default', first.taskId, { limit: 10 });
    expect(log.items.map((a) => [a.attemptNumber, a.outcome, a.workerId])).toEqual([
      [1, 'lease_expired', 'reaper'],
      [2, 'succeeded', 'worker-2'],
    ]);
  });

  it('does not reap a lease before requireLeaseExpiredBy reaches its expiry', async () => {
    const task = await claimed(store(), makeTask(), T0, 1_000);
    const reap = (by: number) => completion(task, { requireLeaseExpiredBy: by });
    expect(await store().completeAttempts([reap(T0 + 999)], T0 + 999)).toEqual([{ kind: 'fenced_out', taskId: task.taskId }]);
    // The holder extends its lease meanwhile: a reaper that saw the old expiry is refused too.
    expect(await store().extendLease('default', task.taskId, task.fencingToken, T0 + 5_000)).toBe(true);
    expect(await store().completeAttempts([reap(T0 + 1_000)], T0 + 1_000)).toEqual([{ kind: 'fenced_out', taskId: task.taskId }]);
    expect((await store().getTask('default', task.taskId))?.status).toBe('IN_FLIGHT');
    expect((await store().completeAttempts([reap(T0 + 5_000)], T0 + 5_000))[0]?.kind).toBe('applied');
  });

  it('applies ifCancelRequested when a cancel was requested during the attempt, next otherwise, in input order', async () => {
    const tasks = [0, 1, 2].map((i) => makeTask({ nextAttemptAt: T0 + i }));
    await insertAll(store(), tasks);
    const [a, b, c] = await store().claimDue(T0 + 10, { limit: 3, leaseMs: 1_000, workerId: 'w' });
    if (a === undefined || b === undefined || c === undefined) throw new Error('expected three claims');
    const requested = await store().requestCancel({ tenantId: 'default', taskId: a.taskId }, T0 + 20);
    expect(requested).toMatchObject({ kind: 'applied', task: { status: 'IN_FLIGHT', cancelRequested: true } });

    const withCancel = (t: RetryTask) => completion(t, { ifCancelRequested: finalOutcome(t, 'CANCELLED') });
    const results = await store().completeAttempts(
      [withCancel(a), withCancel(b), completion(c, { fencingToken: c.fencingToken + 1 })],
      T0 + 50,
    );
    expect(results).toEqual([
      { kind: 'applied', taskId: a.taskId, status: 'CANCELLED', nextAttemptAt: null, version: expect.any(Number), cancelRequested: true },
      { kind: 'applied', taskId: b.taskId, status: 'PENDING', nextAttemptAt: T0 + 2_000, version: expect.any(Number), cancelRequested: false },
      { kind: 'fenced_out', taskId: c.taskId },
    ]);
    const storedA = await store().getTask('default', a.taskId);
    expect(storedA).toMatchObject({
      status: 'CANCELLED',
      nextAttemptAt: null,
      cancelRequested: true,
      attemptNumber: 1,
    });
    expect(results[0]).toMatchObject({ version: storedA?.version });
    const storedB = await store().getTask('default', b.taskId);
    expect(storedB).toMatchObject({
      status: 'PENDING',
      nextAttemptAt: T0 + 2_000,
      cancelRequested: false,
    });
    expect(results[1]).toMatchObject({ version: storedB?.version });
  });

  it('logs attemptIfCancelRequested when it applies ifCancelRequested, attempt otherwise', async () => {
    const tasks = [0, 1, 2].map((i) => makeTask({ nextAttemptAt: T0 + i }));
    await insertAll(store(), tasks);
    const [a, b, c] = await store().claimDue(T0 + 10, { limit: 3, leaseMs: 1_000, workerId: 'w' });
    if (a === undefined || b === undefined || c === undefined) throw new Error('expected three claims');
    for (const t of [a, c]) {
      expect((await store().requestCancel({ tenantId: 'default', taskId: t.taskId }, T0 + 20)).kind).toBe('applied');
    }
    const withCancelLog = (t: RetryTask) =>
      completion(t, {
        ifCancelRequested: finalOutcome(t, 'CANCELLED'),
        attemptIfCancelRequested: makeAttempt(t, { outcome: 'cancelled', nextAttemptAt: null }),
      });
    // c: a cancel was requested, but there is no separate log entry for it: `attempt` is logged.
    const withoutCancelLog = completion(c, { ifCancelRequested: finalOutcome(c, 'CANCELLED') });
    const results = await store().completeAttempts([withCancelLog(a), withCancelLog(b), withoutCancelLog], T0 + 50);
    expect(results.map((r) => (r.kind === 'applied' ? r.status : r.kind))).toEqual(['CANCELLED', 'PENDING', 'CANCELLED']);
    const logOf = async (t: RetryTask) => (await store().listAttempts('default', t.taskId, { limit: 10 })).items;
    expect(await logOf(a)).toEqual([makeAttempt(a, { outcome: 'cancelled', nextAttemptAt: null })]);
    expect(await logOf(b)).toEqual([makeAttempt(b)]);
    expect(await logOf(c)).toEqual([makeAttempt(c)]);
  });

  it("keeps a retry's delay past its backoff in its log entry, and null in the entries without one", async () => {
    const tasks = [0, 1, 2].map((i) => makeTask({ nextAttemptAt: T0 + i }));
    await insertAll(store(), tasks);
    const [delayed, plain, cancelled] = await store().claimDue(T0 + 10, { limit: 3, leaseMs: 1_000, workerId: 'w' });
    if (delayed === undefined || plain === undefined || cancelled === undefined) throw new Error('expected three claims');
    expect((await store().requestCancel({ tenantId: 'default', taskId: cancelled.taskId }, T0 + 20)).kind).toBe('applied');
    // The retry budget's pacer moved the retry from its backoff's T0 + 1,000 to T0 + 2,500.
    const budget = { delayedBy: 'retry_budget', backoffAt: T0 + 1_000, nextAttemptAt: T0 + 2_500 } as const;
    const delayedDone = completion(delayed, { attempt: makeAttempt(delayed, budget), next: retryOutcome(delayed, T0 + 2_500) });
    // The entry logged instead when a cancel applies is written from columns of its own (PostgreSQL): they must not
    // be crossed with the plain entry's. Whatever it holds is kept as given.
    const cancelledDone = completion(cancelled, {
      attempt: makeAttempt(cancelled),
      ifCancelRequested: finalOutcome(cancelled, 'CANCELLED'),
      attemptIfCancelRequested: makeAttempt(cancelled, { ...budget, outcome: 'cancelled' }),
    });
    await store().completeAttempts([delayedDone, completion(plain), cancelledDone], T0 + 50);
    const logOf = async (t: RetryTask) => (await store().listAttempts('default', t.taskId, { limit: 10 })).items;
    expect(await logOf(delayed)).toEqual([makeAttempt(delayed, budget)]);
    expect(await logOf(plain)).toEqual([makeAttempt(plain)]);
    expect((await logOf(plain))[0]).toMatchObject({ delayedBy: null, backoffAt: null });
    expect(await logOf(cancelled)).toEqual([makeAttempt(cancelled, { ...budget, outcome: 'cancelled' })]);
  });

  it.skipIf(leeway.completionsAtomicPerPartition === true)('never records one attempt number twice, and applies nothing of a call that tries', async () => {
    const task = await claimed(store(), makeTask());
    await store().completeAttempts([completion(task, { next: retryOutcome(task, T0 + 1_000) })], T0 + 10);
    const again = await claimById(store(), task.taskId, T0 + 1_000);
    const bystander = await claimed(store(), makeTask({ nextAttemptAt: T0 + 1_000 }), T0 + 1_000);
    // An engine bug re-uses attempt number 1.
    const duplicate = completion(again, { attempt: makeAttempt(task) });
    await expect(store().completeAttempts([completion(bystander), duplicate], T0 + 1_100)).rejects.toThrow();
    expect(await store().getTask('default', task.taskId)).toEqual(again);
    expect(await store().getTask('default', bystander.taskId)).toEqual(bystander);
    expect((await store().listAttempts('default', task.taskId, { limit: 10 })).items).toHaveLength(1);
    expect((await store().listAttempts('default', bystander.taskId, { limit: 10 })).items).toEqual([]);
  });

  it('pages the attempt log oldest first, per tenant', async () => {
    let task = await claimed(store(), makeTask());
    const logged = [];
    for (let n = 1; n <= 5; n++) {
      const done = completion(task, { next: retryOutcome(task, T0 + n * 1_000) });
      logged.push(done.attempt);
      await store().completeAttempts([done], T0 + n * 1_000 - 1);
      if (n < 5) task = await claimById(store(), task.taskId, T0 + n * 1_000);
    }
    const pages = [];
    let cursor: string | undefined;
    do {
      const page = await store().listAttempts('default', task.taskId, cursor === undefined ? { limit: 2 } : { limit: 2, cursor });
      pages.push(page.items);
      cursor = page.nextCursor;
    } while (cursor !== undefined && pages.length < 10);
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    expect(pages.flat()).toEqual(logged);
    expect((await store().listAttempts('other', task.taskId, { limit: 10 })).items).toEqual([]);
  });
}
