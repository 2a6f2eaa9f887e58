import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_TENANT, type RetryTask } from '../src/domain/task.js';
import type { Store, TaskOutcome, TransitionResult } from '../src/store/store.js';
import { startApi, type ApiHarness } from './api-harness.js';
import { finalOutcome, makeAttempt, retryOutcome } from './fixtures/tasks.js';
import { serviceNow } from './service-clock.js';

let api: ApiHarness;
/** Runs once just before the next named transition: simulates a worker acting between the API's read and write. */
let beforeNextUpdate: (() => Promise<void>) | undefined;

beforeEach(async () => {
  beforeNextUpdate = undefined;
  api = await startApi({
    wrapStore: (store: Store) => {
      for (const name of ['cancelTask', 'requestCancel', 'replayTask'] as const) {
        const transition = store[name].bind(store) as (...args: unknown[]) => Promise<TransitionResult>;
        (store as unknown as Record<string, unknown>)[name] = async (...args: unknown[]) => {
          const hook = beforeNextUpdate;
          beforeNextUpdate = undefined;
          await hook?.();
          return transition(...args);
        };
      }
      return store;
    },
  });
});
afterEach(async () => {
  await api.close();
});

/** Claims every due task, as a worker would, and returns the one asked for (now IN_FLIGHT). */
async function claim(taskId: string): Promise<RetryTask> {
  const claimed = await api.store.claimDue(Date.now() + 1, { limit: 100, leaseMs: 60_000, workerId: 'worker-1' });
  const task = claimed.find((t) => t.taskId === taskId);
  if (task === undefined) throw new Error(`task ${taskId} was not due`);
  return task;
}

/** Ends the attempt of a claimed task, as the engine would, logging it. */
async function complete(task: RetryTask, next: TaskOutcome, ifCancelRequested?: TaskOutcome): Promise<RetryTask> {
  const outcome = next.status === 'PENDING' ? 'retry_scheduled' : next.status === 'FAILED' ? 'failed' : next.status === 'EXHAUSTED' ? 'exhausted' : 'succeeded';
  const [result] = await api.store.completeAttempts(
    [
      {
        tenantId: DEFAULT_TENANT,
        taskId: task.taskId,
        fencingToken: task.fencingToken,
        attempt: makeAttempt(task, { startedAt: Date.now(), outcome, nextAttemptAt: next.nextAttemptAt, responseStatus: next.lastResponseStatus }),
        next,
        ...(ifCancelRequested === undefined ? {} : { ifCancelRequested }),
      },
    ],
    Date.now(),
  );
  if (result?.kind !== 'applied') throw new Error(`completion of ${task.taskId} was ${result?.kind}`);
  const stored = await api.store.getTask(DEFAULT_TENANT, task.taskId);
  if (stored === undefined) throw new Error(`task ${task.taskId} vanished`);
  return stored;
}

const failed = (task: RetryTask): TaskOutcome => ({
  ...finalOutcome(task, 'FAILED'),
  lastError: 'HTTP 400',
  lastResponseStatus: 400,
  deadLetterReason: 'HTTP 400 is not retryable',
});
const exhausted = (task: RetryTask): TaskOutcome => ({
  ...finalOutcome(task, 'EXHAUSTED'),
  lastError: 'HTTP 503',
  lastResponseStatus: 503,
  deadLetterReason: 'max_attempts',
});

async function deadTask(kind: 'FAILED' | 'EXHAUSTED' = 'FAILED', overrides: Record<string, unknown> = {}): Promise<string> {
  const { body } = await api.enqueue({ idempotencyKey: `dead-${Math.random()}`, ...overrides });
  const task = await claim(body.taskId);
  await complete(task, kind === 'FAILED' ? failed(task) : exhausted(task));
  return body.taskId as string;
}

describe('DELETE /retry-tasks/:taskId', () => {
  it('cancels a PENDING task at once (200), and a second cancel finds it final (409)', async () => {
    const { body } = await api.enqueue();
    const res = await api.call('DELETE', `/retry-tasks/${body.taskId}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ taskId: body.taskId, status: 'CANCELLED', nextAttemptAt: null });
    expect(await api.store.claimDue(Date.now() + 1e9, { limit: 10, leaseMs: 1000, workerId: 'w' })).toEqual([]);
    const again = await api.call('DELETE', `/retry-tasks/${body.taskId}`);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'TASK_NOT_CANCELLABLE', status: 409 });
    expect(again.body.detail).toContain('CANCELLED');
  });

  it('marks an IN_FLIGHT task (202); when the attempt ends it is CANCELLED and never retried', async () => {
    const { body } = await api.enqueue();
    const task = await claim(body.taskId);
    const res = await api.call('DELETE', `/retry-tasks/${body.taskId}`);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'IN_FLIGHT', cancelRequested: true });
    expect((await api.call('DELETE', `/retry-tasks/${body.taskId}`)).status).toBe(202);
    // The attempt failed retryably; the engine offers the cancel outcome for a task marked meanwhile.
    const ended = await complete(task, retryOutcome(task, Date.now()), { ...finalOutcome(task, 'CANCELLED'), lastResponseStatus: 503 });
    expect(ended.status).toBe('CANCELLED');
    expect(await api.store.claimDue(Date.now() + 1e9, { limit: 10, leaseMs: 1000, workerId: 'w' })).toEqual([]);
    expect((await api.call('GET', `/retry-tasks/${body.taskId}`)).body).toMatchObject({ status: 'CANCELLED', attemptNumber: 1 });
  });

  it('decides again when a worker claims the task between the read and the write', async () => {
    const { body } = await api.enqueue();
    beforeNextUpdate = async () => void (await claim(body.taskId));
    const res = await api.call('DELETE', `/retry-tasks/${body.taskId}`);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'IN_FLIGHT', cancelRequested: true });
  });

  it.each(['SUCCEEDED', 'FAILED', 'EXHAUSTED'] as const)('refuses to cancel a %s task (409)', async (status) => {
    const { body } = await api.enqueue();
    const task = await claim(body.taskId);
    await complete(task, status === 'FAILED' ? failed(task) : status === 'EXHAUSTED' ? exhausted(task) : finalOutcome(task, status));
    const res = await api.call('DELETE', `/retry-tasks/${body.taskId}`);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'TASK_NOT_CANCELLABLE' });
    expect(res.body.detail).toContain(status);
  });

  it('answers 404 for an unknown task', async () => {
    const res = await api.call('DELETE', '/retry-tasks/00000000-0000-4000-8000-000000000000');
    expect(res.body).toMatchObject({ status: 404, code: 'NOT_FOUND' });
  });
});

describe('POST /retry-tasks/:taskId/replay', () => {
  it('re-drives a FAILED task with the same key and a fresh run; the history stays', async () => {
    const taskId = await deadTask('FAILED');
    const before = await api.stored(taskId);
    const wakes = api.wakes();
    const res = await api.call('POST', `/retry-tasks/${taskId}/replay`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ taskId, status: 'PENDING', idempotencyKey: before.idempotencyKey, attemptNumber: 1, deadLetterReason: null });
    expect(res.body.nextAttemptAt).toBeLessThanOrEqual(serviceNow());
    expect(api.wakes()).toBe(wakes + 1);
    const stored = await api.stored(taskId);
    expect(stored).toMatchObject({ runAttemptOffset: 1, lastDelayMs: 0, cancelRequested: false });
    // The new run's budget counts from the replay, not from the task's creation nor from its next attempt.
    expect(stored.runStartedAt).toBe(stored.nextAttemptAt);
    expect(stored.runStartedAt).toBeGreaterThanOrEqual(before.updatedAt);
    const attempts = await api.call('GET', `/retry-tasks/${taskId}/attempts`);
    expect(attempts.body.items).toHaveLength(1);
    expect((await api.call('GET', '/dead-letters')).body.items).toEqual([]);
  });

  it('returns a task already re-driven as it is: replaying twice, even at once, runs it once', async () => {
    const taskId = await deadTask('EXHAUSTED');
    const answers = await Promise.all(Array.from({ length: 10 }, () => api.call('POST', `/retry-tasks/${taskId}/replay`)));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    const replayed = await api.stored(taskId);
    const again = await api.call('POST', `/retry-tasks/${taskId}/replay`);
    expect(again.status).toBe(200);
    expect(await api.stored(taskId)).toEqual(replayed);
    const all = await api.call('GET', '/retry-tasks?limit=1000');
    expect(all.body.items).toHaveLength(1);
    // Claimed again, the re-driven task is IN_FLIGHT: still a no-op.
    await claim(taskId);
    expect((await api.call('POST', `/retry-tasks/${taskId}/replay`)).body).toMatchObject({ status: 'IN_FLIGHT' });
  });

  it.each(['SUCCEEDED', 'CANCELLED'] as const)('refuses to replay a %s task (409)', async (status) => {
    const { body } = await api.enqueue();
    if (status === 'CANCELLED') await api.call('DELETE', `/retry-tasks/${body.taskId}`);
    else await complete(await claim(body.taskId), finalOutcome(await api.stored(body.taskId), status));
    const res = await api.call('POST', `/retry-tasks/${body.taskId}/replay`);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'TASK_NOT_REPLAYABLE' });
  });

  it('answers 404 for an unknown task', async () => {
    expect((await api.call('POST', '/retry-tasks/nope/replay')).status).toBe(404);
  });
});

describe('POST /dead-letters/replay', () => {
  const replayAll = async (filter: Record<string, unknown>, limit: number) => {
    const pages: { results: { taskId: string; result: string }[]; replayed: number }[] = [];
    let cursor: string | undefined;
    do {
      const res = await api.call('POST', '/dead-letters/replay', { ...filter, limit, ...(cursor === undefined ? {} : { cursor }) });
      expect(res.status).toBe(200);
      pages.push(res.body as (typeof pages)[number]);
      cursor = res.body.nextCursor;
      if (pages.length > 50) throw new Error('bulk replay did not reach its last page');
    } while (cursor !== undefined);
    return pages;
  };

  it('replays every dead letter matching a filter, page by page, each once, and leaves the others dead', async () => {
    const mine = { targetUrl: 'https://api.example.com:8443/pay' };
    const matching = [await deadTask('FAILED', mine), await deadTask('EXHAUSTED', mine), await deadTask('FAILED', mine)];
    const others = [await deadTask('FAILED'), await deadTask('EXHAUSTED', mine)];
    const pages = await replayAll({ targetKey: 'https://api.example.com:8443', status: 'FAILED' }, 1);
    const results = pages.flatMap((p) => p.results);
    expect(results.map((r) => r.taskId).sort()).toEqual([matching[0], matching[2]].sort());
    expect(results.every((r) => r.result === 'replayed')).toBe(true);
    expect(pages.reduce((sum, p) => sum + p.replayed, 0)).toBe(2);
    for (const taskId of [matching[0], matching[2]]) expect((await api.stored(taskId!)).status).toBe('PENDING');
    for (const taskId of [matching[1], ...others]) expect(['FAILED', 'EXHAUSTED']).toContain((await api.stored(taskId!)).status);

    // No filter: every dead letter left; a second run finds nothing to do.
    const rest = (await replayAll({}, 100)).flatMap((p) => p.results);
    expect(rest.map((r) => r.taskId).sort()).toEqual([matching[1], ...others].sort());
    expect((await replayAll({}, 100)).flatMap((p) => p.results)).toEqual([]);
    expect((await api.call('GET', '/dead-letters')).body.items).toEqual([]);
  });

  it('names the field and the rule of a broken filter', async () => {
    const notOrigin = await api.call('POST', '/dead-letters/replay', { targetKey: 'https://api.example.com:8443/pay' });
    expect(notOrigin.status).toBe(400);
    expect(notOrigin.body.errors).toEqual([expect.objectContaining({ field: 'targetKey' })]);
    const live = await api.call('POST', '/dead-letters/replay', { status: 'PENDING' });
    expect(live.status).toBe(400);
    expect(JSON.stringify(live.body)).toMatch(/status/);
    const tooMany = await api.call('POST', '/dead-letters/replay', { limit: 1001 });
    expect(tooMany.status).toBe(400);
    expect(JSON.stringify(tooMany.body)).toMatch(/limit/);
  });
});

describe('listings', () => {
  it('filters tasks by target and by idempotency key, and dead letters by target, status and policy', async () => {
    const mine = 'https://api.example.com:8443/pay';
    // Dead first: each dead task's claim takes every due task.
    const dead = await deadTask('FAILED', { targetUrl: mine });
    await deadTask('FAILED');
    const a = (await api.enqueue({ targetUrl: mine, idempotencyKey: 'key-a' })).body.taskId as string;
    const b = (await api.enqueue({ idempotencyKey: 'key-b' })).body.taskId as string;
    const ids = (res: { body: Record<string, unknown> }) => (res.body.items as { taskId: string }[]).map((t) => t.taskId).sort();

    expect(ids(await api.call('GET', `/retry-tasks?targetKey=${encodeURIComponent('https://api.example.com:8443')}`))).toEqual([a, dead].sort());
    expect(ids(await api.call('GET', '/retry-tasks?targetKey=https%3A%2F%2Fapi.example.com%3A8443&status=PENDING'))).toEqual([a]);
    expect(ids(await api.call('GET', '/retry-tasks?idempotencyKey=key-b'))).toEqual([b]);
    expect(ids(await api.call('GET', '/retry-tasks?idempotencyKey=key-b&status=FAILED'))).toEqual([]);
    expect(ids(await api.call('GET', `/retry-tasks?idempotencyKey=key-a&targetKey=${encodeURIComponent('https://api.example.com:8443')}`))).toEqual([a]);
    expect(ids(await api.call('GET', '/retry-tasks?idempotencyKey=nobody'))).toEqual([]);
    expect(ids(await api.call('GET', '/dead-letters?targetKey=https%3A%2F%2Fapi.example.com%3A8443'))).toEqual([dead]);
    expect(ids(await api.call('GET', '/dead-letters?targetKey=https%3A%2F%2Fapi.example.com%3A8443&status=EXHAUSTED'))).toEqual([]);

    const near = await api.call('GET', '/retry-tasks?targetKey=HTTPS%3A%2F%2Fapi.example.com%3A8443%2F');
    expect(near.status).toBe(400);
    expect(near.body.errors).toEqual([expect.objectContaining({ field: 'targetKey' })]);
    expect(near.body.detail).toContain('https://api.example.com:8443');
  });

  it('lists FAILED and EXHAUSTED tasks with their reason under /dead-letters, page by page', async () => {
    const ids = [await deadTask('FAILED'), await deadTask('EXHAUSTED'), await deadTask('FAILED')];
    await api.enqueue();
    const seen: { taskId: string; status: string; deadLetterReason: string }[] = [];
    let cursor: string | undefined;
    do {
      const page = await api.call('GET', `/dead-letters?limit=2${cursor === undefined ? '' : `&cursor=${cursor}`}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.items);
      cursor = page.body.nextCursor;
    } while (cursor !== undefined);
    expect(seen.map((t) => t.taskId).sort()).toEqual([...ids].sort());
    expect(seen.find((t) => t.taskId === ids[1])).toMatchObject({ status: 'EXHAUSTED', deadLetterReason: 'max_attempts' });
    expect(seen.find((t) => t.taskId === ids[0])).toMatchObject({ status: 'FAILED', deadLetterReason: 'HTTP 400 is not retryable', lastResponseStatus: 400 });
  });

  it('walks every page of tasks, newest first, and filters by status and policy', async () => {
    await api.call('POST', '/retry-policies', { policyId: 'fast', maxAttempts: 2, backoffType: 'FIXED', initialDelayMs: 10, multiplier: 1, maxDelayMs: 10, jitterType: 'NONE' });
    const created: string[] = [];
    for (let i = 0; i < 25; i++) created.push((await api.enqueue(i < 2 ? { policyId: 'fast' } : {})).body.taskId);
    for (const id of created.slice(20)) await api.call('DELETE', `/retry-tasks/${id}`);

    const pages: { taskId: string; createdAt: number }[][] = [];
    let cursor: string | undefined;
    do {
      const page = await api.call('GET', `/retry-tasks?limit=10${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
      pages.push(page.body.items);
      cursor = page.body.nextCursor;
    } while (cursor !== undefined);
    expect(pages.map((p) => p.length)).toEqual([10, 10, 5]);
    const listed = pages.flat();
    expect(new Set(listed.map((t) => t.taskId))).toEqual(new Set(created));
    const times = listed.map((t) => t.createdAt);
    expect(times).toEqual([...times].sort((a, b) => b - a));

    const cancelled = await api.call('GET', '/retry-tasks?status=CANCELLED');
    expect(cancelled.body.items.map((t: { taskId: string }) => t.taskId).sort()).toEqual(created.slice(20).sort());
    const fast = await api.call('GET', '/retry-tasks?policyId=fast');
    expect(fast.body.items.map((t: { taskId: string }) => t.taskId).sort()).toEqual(created.slice(0, 2).sort());
  });

  it('pages through the attempt log, oldest first, with latency and status', async () => {
    const { body } = await api.enqueue();
    for (let i = 0; i < 5; i++) {
      const task = await claim(body.taskId);
      await complete(task, i < 4 ? retryOutcome(task, Date.now()) : finalOutcome(task, 'SUCCEEDED'));
    }
    const items: { attemptNumber: number; durationMs: number; responseStatus: number | null; outcome: string }[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await api.call('GET', `/retry-tasks/${body.taskId}/attempts?limit=2${cursor === undefined ? '' : `&cursor=${cursor}`}`);
      expect(page.status).toBe(200);
      items.push(...page.body.items);
      cursor = page.body.nextCursor;
      pages++;
    } while (cursor !== undefined);
    expect(pages).toBe(3);
    expect(items.map((a) => a.attemptNumber)).toEqual([1, 2, 3, 4, 5]);
    expect(items[0]).toMatchObject({ durationMs: 12.5, responseStatus: 503, outcome: 'retry_scheduled' });
    expect(items[4]).toMatchObject({ responseStatus: 200, outcome: 'succeeded', nextAttemptAt: null });
    expect(items[0]).not.toHaveProperty('workerId');
  });

  it("shows why a retry goes later than its backoff said, and null where nothing delayed it", async () => {
    const { body } = await api.enqueue();
    let task = await claim(body.taskId);
    await complete(task, retryOutcome(task, Date.now()));
    task = await claim(body.taskId);
    // The target's retry budget moved the retry from its backoff's time to its pacer's slot, 1.5 s later.
    const backoffAt = Date.now() + 500;
    const attempt = makeAttempt(task, { startedAt: Date.now(), nextAttemptAt: backoffAt + 1_500, delayedBy: 'retry_budget', backoffAt });
    const ref = { tenantId: DEFAULT_TENANT, taskId: task.taskId, fencingToken: task.fencingToken };
    await api.store.completeAttempts([{ ...ref, attempt, next: retryOutcome(task, backoffAt + 1_500) }], Date.now());
    const { items } = (await api.call('GET', `/retry-tasks/${body.taskId}/attempts`)).body as { items: Record<string, unknown>[] };
    expect(items.map((a) => [a['attemptNumber'], a['delayedBy'], a['backoffAt']])).toEqual([
      [1, null, null],
      [2, 'retry_budget', backoffAt],
    ]);
    expect(items[1]).toMatchObject({ nextAttemptAt: backoffAt + 1_500 });
  });

  it('answers an empty log for a task not tried yet, and 404 for no task', async () => {
    const { body } = await api.enqueue();
    expect((await api.call('GET', `/retry-tasks/${body.taskId}/attempts`)).body).toEqual({ items: [] });
    expect((await api.call('GET', '/retry-tasks/none/attempts')).status).toBe(404);
  });
});
