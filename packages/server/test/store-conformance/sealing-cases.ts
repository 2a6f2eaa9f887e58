import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import type { RetryTask } from '../../src/domain/task.js';
import { InvalidCursorError } from '../../src/store/store-errors.js';
import type { SealedParts, Store } from '../../src/store/store.js';
import { T0, finalOutcome, makeAttempt, makeTask, retryOutcome } from '../fixtures/tasks.js';
import type { CurrentStore } from './helpers.js';
import { claimById, claimed, insertAll, insertAllStored } from './helpers.js';

// The store keeps sealed values as opaque text: these are shaped like the cipher's (`v1:<key id>:…`) but never opened.
const sealedWith = (keyId: string) => `v1:${keyId}:${randomUUID()}`;
const ref = (task: RetryTask) => ({ tenantId: task.tenantId, taskId: task.taskId });
const partsOf = (task: RetryTask): SealedParts => ({ headers: task.headers, body: task.body });

/** A task with a sealed credential header (and a plain one), and optionally a sealed inline body. */
function sealedTask(overrides: Partial<RetryTask> = {}, sensitiveBody = false): RetryTask {
  return makeTask({
    headers: { 'content-type': 'application/json', Authorization: { enc: sealedWith('old') } },
    ...(sensitiveBody ? { body: sealedWith('old'), sensitiveBody: true } : {}),
    ...overrides,
  });
}

/** Walks every page with `limit`; every page must hold at most `limit` tasks. */
async function walkAll(store: Store, limit: number): Promise<RetryTask[]> {
  const walked: RetryTask[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.sealing.walkSealedTasks({ limit, ...(cursor === undefined ? {} : { cursor }) });
    expect(page.items.length).toBeLessThanOrEqual(limit);
    walked.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return walked;
}

export function sealingCases(store: CurrentStore): void {
  it('walks the tasks with sealed values of every tenant once, in pages, whatever their status', async () => {
    const sealed = [
      sealedTask(),
      sealedTask({ tenantId: 'tenant-b' }, true),
      sealedTask({ tenantId: 'tenant-a', headers: { 'X-Api-Key': { enc: sealedWith('old') } } }),
      // Only the body is sealed, and it is kept in the blob store.
      makeTask({ tenantId: 'tenant-a', headers: {}, body: null, bodyRef: 'tenant-a/blob', sensitiveBody: true }),
      sealedTask({ status: 'SUCCEEDED', nextAttemptAt: null, attemptNumber: 1 }),
      sealedTask({ tenantId: 'tenant-b', status: 'FAILED', nextAttemptAt: null, deadLetterReason: 'permanent_status:400' }),
      sealedTask({ nextAttemptAt: T0 + 60_000 }, true),
    ];
    const plain = [makeTask(), makeTask({ tenantId: 'tenant-b', headers: { Authorization: { ref: 'Bearer {{secret:API}}' } } })];
    // Claimed first, while it is the only task due.
    const inFlight = await claimed(store(), sealedTask({ tenantId: 'tenant-c' }));
    await insertAllStored(store(), [...sealed, ...plain]);

    const walked = await walkAll(store(), 2);
    const ids = walked.map((t) => t.taskId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining([...sealed, inFlight].map((t) => t.taskId)));
    // A store may return tasks without secrets too; whatever it returns is the task as stored.
    for (const task of walked) expect(task).toEqual(await store().getTask(task.tenantId, task.taskId));
    // The order is stable: a second walk, in other pages, meets the same tasks in the same order.
    expect((await walkAll(store(), 3)).map((t) => t.taskId)).toEqual(ids);
    expect(await walkAll(store(), 1000)).toHaveLength(ids.length);
  });

  it('meets a task once even when it changes status during the walk', async () => {
    const tasks = Array.from({ length: 7 }, (_, i) => sealedTask({ createdAt: T0 + i, nextAttemptAt: T0 + i }));
    await insertAll(store(), tasks);
    const first = await store().sealing.walkSealedTasks({ limit: 2 });
    // Between pages every task moves: claimed (IN_FLIGHT), and some of them completed (SUCCEEDED) or retried (PENDING).
    const claims = await store().claimDue(T0 + 10, { limit: 10, leaseMs: 1_000, workerId: 'w' });
    expect(claims).toHaveLength(7);
    const results = await store().completeAttempts(
      claims.slice(0, 4).map((task, i) => ({
        tenantId: task.tenantId,
        taskId: task.taskId,
        fencingToken: task.fencingToken,
        attempt: makeAttempt(task),
        next: i % 2 === 0 ? finalOutcome(task, 'SUCCEEDED') : retryOutcome(task, T0 + 5_000),
      })),
      T0 + 20,
    );
    expect(results.map((r) => r.kind)).toEqual(['applied', 'applied', 'applied', 'applied']);
    const rest = first.nextCursor === undefined ? [] : await walkRest(store(), first.nextCursor);
    const ids = [...first.items, ...rest].map((t) => t.taskId);
    expect(ids).toHaveLength(7);
    expect(new Set(ids)).toEqual(new Set(tasks.map((t) => t.taskId)));
  });

  it('refuses a cursor it did not make', async () => {
    await insertAll(store(), [sealedTask(), sealedTask()]);
    await expect(store().sealing.walkSealedTasks({ limit: 1, cursor: 'not-a-cursor' })).rejects.toThrow(InvalidCursorError);
    const listing = await store().listTasks({ tenantId: 'default', limit: 1 });
    expect(listing.nextCursor).toBeDefined();
    await expect(store().sealing.walkSealedTasks({ limit: 1, cursor: listing.nextCursor as string })).rejects.toThrow(InvalidCursorError);
  });

  it('re-seals the headers and inline body of a task at once, changing nothing else', async () => {
    const task = sealedTask({ nextAttemptAt: T0 + 1_000 }, true);
    await insertAll(store(), [task]);
    const next: SealedParts = { headers: { ...task.headers, Authorization: { enc: sealedWith('new') } }, body: sealedWith('new') };
    const result = await store().sealing.resealTask(ref(task), partsOf(task), next);
    const expected: RetryTask = { ...task, headers: next.headers, body: next.body };
    expect(result).toEqual({ kind: 'applied', task: expected });
    expect(await store().getTask(task.tenantId, task.taskId)).toEqual(expected);
    // The scheduler's view is untouched: still due at the same time, and claimed as any other.
    expect(await store().nextDueAt()).toBe(T0 + 1_000);
    expect((await claimById(store(), task.taskId, T0 + 1_000)).headers).toEqual(next.headers);
  });

  it('keeps an attempt in flight: its lease, token and version stay, and its completion applies', async () => {
    const task = await claimed(store(), sealedTask({}, true));
    const next: SealedParts = { headers: { ...task.headers, Authorization: { enc: sealedWith('new') } }, body: sealedWith('new') };
    const result = await store().sealing.resealTask(ref(task), partsOf(task), next);
    expect(result).toEqual({ kind: 'applied', task: { ...task, ...next } });
    expect(await store().findExpiredLeases(task.leaseExpiresAt as number, 10)).toEqual([{ ...task, ...next }]);
    expect(await store().extendLease(task.tenantId, task.taskId, task.fencingToken, T0 + 5_000)).toBe(true);
    const [done] = await store().completeAttempts(
      [{ tenantId: task.tenantId, taskId: task.taskId, fencingToken: task.fencingToken, attempt: makeAttempt(task), next: finalOutcome(task, 'SUCCEEDED') }],
      T0 + 100,
    );
    expect(done).toMatchObject({ kind: 'applied', status: 'SUCCEEDED' });
    expect(await store().getTask(task.tenantId, task.taskId)).toMatchObject({ status: 'SUCCEEDED', ...next });
  });

  it('refuses when the headers or the body are not the expected ones, comparing headers as values', async () => {
    const task = sealedTask({ tenantId: 'tenant-a', headers: { Authorization: { enc: sealedWith('old') }, 'x-a': '1', 'x-b': '2' } }, true);
    await insertAll(store(), [task]);
    const next: SealedParts = { headers: { ...task.headers, Authorization: { enc: sealedWith('new') } }, body: sealedWith('new') };
    const otherHeaders = { ...task.headers, Authorization: { enc: sealedWith('old') } };
    for (const expected of [{ ...partsOf(task), headers: otherHeaders }, { ...partsOf(task), body: sealedWith('old') }, { ...partsOf(task), body: null }]) {
      expect(await store().sealing.resealTask(ref(task), expected, next)).toEqual({ kind: 'refused', task });
    }
    expect(await store().getTask(task.tenantId, task.taskId)).toEqual(task);
    expect(await store().sealing.resealTask({ tenantId: 'tenant-b', taskId: task.taskId }, partsOf(task), next)).toEqual({ kind: 'not_found' });
    expect(await store().sealing.resealTask({ tenantId: 'tenant-a', taskId: randomUUID() }, partsOf(task), next)).toEqual({ kind: 'not_found' });
    // The same headers given in another order of their names are the same headers.
    const reordered = { headers: { 'x-b': '2', Authorization: task.headers['Authorization'] as { enc: string }, 'x-a': '1' }, body: task.body };
    expect(await store().sealing.resealTask(ref(task), reordered, next)).toMatchObject({ kind: 'applied' });
    // Done once, the old values are no longer there to expect: a second rotation that read them is refused.
    expect(await store().sealing.resealTask(ref(task), partsOf(task), next)).toMatchObject({ kind: 'refused', task: { headers: next.headers } });
  });

  it('keeps a plain body as it is, U+0000 and null included', async () => {
    const withNul = sealedTask({ body: 'a\u0000b"\\c' });
    const withoutBody = sealedTask({ method: 'GET', body: null });
    await insertAll(store(), [withNul, withoutBody]);
    for (const task of [withNul, withoutBody]) {
      const next: SealedParts = { headers: { ...task.headers, Authorization: { enc: sealedWith('new') } }, body: task.body };
      expect(await store().sealing.resealTask(ref(task), partsOf(task), next)).toEqual({ kind: 'applied', task: { ...task, ...next } });
      expect(await store().getTask(task.tenantId, task.taskId)).toEqual({ ...task, ...next });
    }
  });
}

async function walkRest(store: Store, cursor: string): Promise<RetryTask[]> {
  const walked: RetryTask[] = [];
  for (let next: string | undefined = cursor; next !== undefined; ) {
    const page = await store.sealing.walkSealedTasks({ limit: 2, cursor: next });
    walked.push(...page.items);
    next = page.nextCursor;
  }
  return walked;
}
