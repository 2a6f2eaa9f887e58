import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '@retryd/core/testing';
import type { Store } from '../src/store/store.js';
import { T0, makeTask } from './fixtures/tasks.js';
import { startApi, type ApiHarness } from './api-harness.js';
import { insertStoredTasks } from './fixtures/stored-tasks.js';

// Bulk cancel by filter (POST /retry-tasks/cancel) and finished tasks deleted by hand (DELETE /retry-tasks), on a
// real store, with races made by a store wrapper that moves a task between the listing and the change.

const clock = new ManualClock(T0);
let api: ApiHarness;
/** Tasks another caller cancels just before the bulk cancel's own cancel reaches the store. */
const cancelledFirst = new Set<string>();
/** Dead letters another caller replays just before the delete reaches the store. */
const replayedFirst = new Set<string>();

/** The store as the service sees it, with the races above. */
function racing(store: Store): Store {
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'cancelTask') {
        return async (...args: Parameters<Store['cancelTask']>) => {
          if (cancelledFirst.delete(args[0].taskId)) await target.cancelTask(...args);
          return target.cancelTask(...args);
        };
      }
      if (property === 'deleteFinishedTasks') {
        return async (...args: Parameters<Store['deleteFinishedTasks']>) => {
          for (const { taskId } of args[1]) if (replayedFirst.delete(taskId)) await api.service.replay(args[0], taskId);
          return target.deleteFinishedTasks(...args);
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

beforeAll(async () => {
  api = await startApi({ service: { clock }, wrapStore: racing });
});
afterAll(async () => {
  await api.close();
});

/** Enqueues a task due in an hour (PENDING until something moves it) and returns its id. */
const later = async (targetUrl: string, overrides: Record<string, unknown> = {}) => {
  const created = await api.enqueue({ targetUrl, delayMs: 3_600_000, ...overrides });
  expect(created.status).toBe(201);
  return created.body.taskId as string;
};

/** Every page of a bulk action, sent until no nextCursor: their answers. */
async function allPages(send: (cursor: string | undefined) => Promise<{ status: number; body: Record<string, unknown> }>) {
  const pages: Record<string, unknown>[] = [];
  let cursor: string | undefined;
  do {
    const res = await send(cursor);
    expect(res.status).toBe(200);
    pages.push(res.body);
    cursor = res.body.nextCursor as string | undefined;
  } while (cursor !== undefined);
  return pages;
}

describe('POST /retry-tasks/cancel', () => {
  it('cancels every live task of a target, a page at a time, with one result each, and leaves the rest', async () => {
    const mine = [];
    for (let i = 0; i < 5; i++) mine.push(await later(`https://api.example.com:8001/orders/${i}`));
    const theirs = await later('https://api.example.com:8002/orders');
    // One IN_FLIGHT (claimed as a worker would): its cancel waits for its attempt to end.
    const running = await later('https://api.example.com:8001/running', { delayMs: 0 });
    const claimed = await api.store.claimDue(T0, { limit: 10, leaseMs: 60_000, workerId: 'w1' });
    expect(claimed.map((t) => t.taskId)).toEqual([running]);

    const wakes = api.wakes();
    const pages = await allPages((cursor) => api.call('POST', '/retry-tasks/cancel', { targetKey: 'https://api.example.com:8001', limit: 2, ...(cursor === undefined ? {} : { cursor }) }));
    const results = pages.flatMap((p) => p.results as { taskId: string; result: string }[]);
    expect(results.map((r) => r.taskId).sort()).toEqual([...mine, running].sort());
    expect(results.filter((r) => r.result === 'cancelled').map((r) => r.taskId).sort()).toEqual([...mine].sort());
    expect(results.find((r) => r.taskId === running)?.result).toBe('cancel_requested');
    expect(pages.reduce((n, p) => n + (p.cancelled as number), 0)).toBe(5);
    expect(pages.reduce((n, p) => n + (p.cancelRequested as number), 0)).toBe(1);
    for (const taskId of mine) expect((await api.stored(taskId)).status).toBe('CANCELLED');
    expect(await api.stored(running)).toMatchObject({ status: 'IN_FLIGHT', cancelRequested: true });
    expect((await api.stored(theirs)).status).toBe('PENDING');
    expect(api.wakes()).toBe(wakes);

    // Again: only the IN_FLIGHT one still matches, already cancel_requested.
    const again = await api.call('POST', '/retry-tasks/cancel', { targetKey: 'https://api.example.com:8001' });
    expect(again.body).toEqual({ results: [{ taskId: running, result: 'cancel_requested' }], cancelled: 0, cancelRequested: 1 });
    await api.call('DELETE', `/retry-tasks/${theirs}`);
  });

  it('filters by status and policy, and gives a task that ended meanwhile its own problem while the others go on', async () => {
    await api.call('POST', '/retry-policies', { policyId: 'nightly', maxAttempts: 3, backoffType: 'FIXED', initialDelayMs: 1_000, multiplier: 1, maxDelayMs: 1_000, jitterType: 'NONE' });
    const first = await later('https://api.example.com:8003/a', { policyId: 'nightly' });
    const second = await later('https://api.example.com:8003/b', { policyId: 'nightly' });
    const otherPolicy = await later('https://api.example.com:8003/c');
    cancelledFirst.add(first);
    const res = await api.call('POST', '/retry-tasks/cancel', { policyId: 'nightly', status: 'PENDING' });
    expect(res.status).toBe(200);
    expect(res.body.results).toEqual(
      expect.arrayContaining([
        { taskId: second, result: 'cancelled' },
        { taskId: first, result: 'error', error: expect.objectContaining({ status: 409, code: 'TASK_NOT_CANCELLABLE' }) },
      ]),
    );
    expect(res.body.cancelled).toBe(1);
    expect((await api.stored(otherPolicy)).status).toBe('PENDING');
    await api.call('DELETE', `/retry-tasks/${otherPolicy}`);
  });

  it('refuses a filter that breaks its rules, naming the field', async () => {
    const finished = await api.call('POST', '/retry-tasks/cancel', { status: 'SUCCEEDED' });
    expect(finished.status).toBe(400);
    expect(finished.body.errors).toEqual([expect.objectContaining({ field: 'status', rule: 'one of PENDING, IN_FLIGHT' })]);
    const unknown = await api.call('POST', '/retry-tasks/cancel', { reason: 'x' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual([expect.objectContaining({ field: 'reason' })]);
    const badLimit = await api.call('POST', '/retry-tasks/cancel', { limit: 5_000 });
    expect(badLimit.body.errors).toEqual([expect.objectContaining({ field: 'limit' })]);
  });
});

describe('DELETE /retry-tasks', () => {
  it('deletes the finished tasks that ended before a time, page after page, with their keys and bodies, and nothing live', async () => {
    clock.tick(10_000);
    const t1 = clock.now();
    // Ended at t1: cancelled (one with a body kept apart), and inserted as they would have ended.
    const big = await later('https://api.example.com:8004/big', { idempotencyKey: 'purge-big', body: 'x'.repeat(64 * 1024 + 1) });
    const small = await later('https://api.example.com:8004/small', { idempotencyKey: 'purge-small' });
    for (const taskId of [big, small]) expect((await api.call('DELETE', `/retry-tasks/${taskId}`)).status).toBe(200);
    const bodyRef = (await api.stored(big)).bodyRef as string;
    await api.blobs.get(bodyRef);
    const ended = (status: 'SUCCEEDED' | 'FAILED', updatedAt: number, targetUrl = 'https://api.example.com:8004/x') =>
      makeTask({ status, nextAttemptAt: null, attemptNumber: 1, createdAt: t1 - 5_000, updatedAt, targetUrl });
    const succeeded = ended('SUCCEEDED', t1);
    const failed = ended('FAILED', t1);
    const elsewhere = ended('SUCCEEDED', t1, 'https://api.example.com:8005/x');
    const endedLater = ended('SUCCEEDED', t1 + 5_000);
    await insertStoredTasks(api.store, [succeeded, failed, elsewhere, endedLater]);
    const live = await later('https://api.example.com:8004/live');
    clock.tick(10_000);

    const before = new Date(t1 + 1).toISOString();
    const path = (cursor?: string) =>
      `/retry-tasks?finishedBefore=${encodeURIComponent(before)}&targetKey=${encodeURIComponent('https://api.example.com:8004')}&status=SUCCEEDED&status=CANCELLED&limit=2${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
    const pages = await allPages((cursor) => api.call('DELETE', path(cursor)));
    expect(pages.length).toBeGreaterThan(1);
    expect(pages.flatMap((p) => p.taskIds as string[]).sort()).toEqual([big, small, succeeded.taskId].sort());
    expect(pages.reduce((n, p) => n + (p.deleted as number), 0)).toBe(3);

    for (const gone of [big, small, succeeded.taskId]) expect((await api.call('GET', `/retry-tasks/${gone}`)).status).toBe(404);
    for (const stays of [failed.taskId, elsewhere.taskId, endedLater.taskId, live]) expect((await api.call('GET', `/retry-tasks/${stays}`)).status).toBe(200);
    await expect(api.blobs.get(bodyRef)).rejects.toThrow();
    // The keys are free: the same key makes a new task.
    const reused = await api.enqueue({ idempotencyKey: 'purge-small', delayMs: 3_600_000 });
    expect(reused.status).toBe(201);
    expect(reused.body.taskId).not.toBe(small);

    // Epoch ms, every finished status: the FAILED one now goes too, the live ones never.
    const all = await api.call('DELETE', `/retry-tasks?finishedBefore=${t1 + 1}&targetKey=${encodeURIComponent('https://api.example.com:8004')}`);
    expect(all.body).toEqual({ deleted: 1, taskIds: [failed.taskId] });
    expect((await api.stored(live)).status).toBe('PENDING');
    for (const taskId of [live, reused.body.taskId as string]) await api.call('DELETE', `/retry-tasks/${taskId}`);
  });

  it('never deletes a dead letter replayed between the listing and the delete', async () => {
    const dead = makeTask({ status: 'EXHAUSTED', nextAttemptAt: null, attemptNumber: 3, deadLetterReason: 'max_attempts', updatedAt: T0, targetUrl: 'https://api.example.com:8006/x' });
    await insertStoredTasks(api.store, [dead]);
    replayedFirst.add(dead.taskId);
    const res = await api.call('DELETE', `/retry-tasks?finishedBefore=${T0 + 1}&targetKey=${encodeURIComponent('https://api.example.com:8006')}`);
    expect(res.body).toEqual({ deleted: 0, taskIds: [] });
    expect((await api.stored(dead.taskId)).status).toBe('PENDING');
  });

  it('refuses a request that breaks its rules, naming the field and the rule', async () => {
    const missing = await api.call('DELETE', '/retry-tasks');
    expect(missing.status).toBe(400);
    expect(missing.body.errors).toEqual([expect.objectContaining({ field: 'finishedBefore', message: 'finishedBefore is required' })]);
    const bad = await api.call('DELETE', '/retry-tasks?finishedBefore=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([
      expect.objectContaining({ field: 'finishedBefore', rule: 'epoch milliseconds (an integer >= 0) or an ISO 8601 date-time with a time zone' }),
    ]);
    const noZone = await api.call('DELETE', '/retry-tasks?finishedBefore=2026-01-01T00:00:00');
    expect(noZone.status).toBe(400);
    const live = await api.call('DELETE', `/retry-tasks?finishedBefore=${T0}&status=PENDING`);
    expect(live.status).toBe(400);
    expect(live.body.errors).toEqual([expect.objectContaining({ field: 'status[0]', rule: 'one of SUCCEEDED, FAILED, EXHAUSTED, CANCELLED' })]);
  });
});
