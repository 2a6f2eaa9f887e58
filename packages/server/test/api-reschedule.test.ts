import { MAX_POLICY_MS } from '@retryd/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TENANT, type RetryTask } from '../src/domain/task.js';
import type { Store, TransitionResult } from '../src/store/store.js';
import { startApi, startTargetsApi, type ApiHarness } from './api-harness.js';
import { finalOutcome, makeAttempt } from './fixtures/tasks.js';
import { POSTGRES_STORE, REDIS_STORE, SQLITE_STORE } from './shared-stores.js';
import { serviceNow } from './service-clock.js';

// POST /retry-tasks/{taskId}/run and /reschedule on each store, through the real routes, service and store: a PENDING
// task due at another time, nothing else about it changed; every other status refused with its own problem.

const HOUR = 3_600_000;
/** An inline policy with no time budget: only the 10-year rule bounds a reschedule. */
const NO_BUDGET = { maxAttempts: 3, backoffType: 'FIXED', initialDelayMs: 1_000, multiplier: 1, maxDelayMs: 1_000, jitterType: 'NONE' };

describe.each([SQLITE_STORE, POSTGRES_STORE, REDIS_STORE])('run now and reschedule on $name', ({ freshUrl, drop }) => {
  let api: ApiHarness;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ api, close } = await startTargetsApi({ storeUrl: freshUrl() }));
  });
  afterAll(async () => {
    await close();
    await drop();
  });

  /** Claims every task due by now, as a worker would, and returns the one asked for (IN_FLIGHT), or undefined. */
  const claim = async (taskId: string): Promise<RetryTask | undefined> => {
    const claimed = await api.store.claimDue(Date.now(), { limit: 1_000, leaseMs: 60_000, workerId: 'worker-1' });
    return claimed.find((t) => t.taskId === taskId);
  };
  const enqueued = async (overrides: Record<string, unknown> = {}): Promise<RetryTask> => {
    const res = await api.enqueue({ idempotencyKey: `reschedule-${Math.random()}`, ...overrides });
    expect(res.status).toBe(201);
    return api.stored(res.body.taskId);
  };

  it('runs a task due in an hour now: due at once, its attempts, run and budget as they were, and the engine woken', async () => {
    const before = await enqueued({ delayMs: HOUR });
    expect(await claim(before.taskId)).toBeUndefined();
    const wakes = api.wakes();
    const sent = serviceNow();
    const res = await api.call('POST', `/retry-tasks/${before.taskId}/run`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ taskId: before.taskId, status: 'PENDING', attemptNumber: 0 });
    expect(res.body.nextAttemptAt).toBeGreaterThanOrEqual(sent);
    expect(res.body.nextAttemptAt).toBeLessThanOrEqual(serviceNow());
    // Due and not running: the answer says why it waits, as GET /retry-tasks/{taskId} does.
    expect(res.body.waiting).toMatchObject({ reason: 'queued' });
    expect(api.wakes()).toBe(wakes + 1);
    const after = await api.stored(before.taskId);
    expect(after).toEqual({ ...before, nextAttemptAt: res.body.nextAttemptAt, updatedAt: res.body.nextAttemptAt, version: before.version + 1 });

    // Run again while it is due: left as it is (its place among its target's due tasks kept), no wake-up.
    const again = await api.call('POST', `/retry-tasks/${before.taskId}/run`);
    expect(again.status).toBe(200);
    expect(await api.stored(before.taskId)).toEqual(after);
    expect(api.wakes()).toBe(wakes + 1);
    expect(await claim(before.taskId)).toMatchObject({ status: 'IN_FLIGHT', attemptNumber: 0 });
  });

  it('reschedules to an ISO 8601 time or epoch ms, earlier or later; a time already past means now', async () => {
    const task = await enqueued({ delayMs: HOUR });
    const inTenMinutes = new Date(Math.floor(Date.now() / 1_000) * 1_000 + 600_000);
    const later = await api.call('POST', `/retry-tasks/${task.taskId}/reschedule`, { nextAttemptAt: inTenMinutes.toISOString() });
    expect(later.status).toBe(200);
    expect(later.body).toMatchObject({ status: 'PENDING', nextAttemptAt: inTenMinutes.getTime(), attemptNumber: 0 });
    expect(later.body.waiting).toBeUndefined();
    const twoHours = Date.now() + 2 * HOUR;
    expect((await api.call('POST', `/retry-tasks/${task.taskId}/reschedule`, { nextAttemptAt: twoHours })).body.nextAttemptAt).toBe(twoHours);
    expect(await claim(task.taskId)).toBeUndefined();

    const sent = serviceNow();
    const past = await api.call('POST', `/retry-tasks/${task.taskId}/reschedule`, { nextAttemptAt: '2001-02-03T04:05:06+01:00' });
    expect(past.status).toBe(200);
    expect(past.body.nextAttemptAt).toBeGreaterThanOrEqual(sent);
    expect((await api.stored(task.taskId)).version).toBe(task.version + 3);
    expect(await claim(task.taskId)).toMatchObject({ status: 'IN_FLIGHT' });
  });

  it("refuses a time past the task's budget or ten years ahead (422 naming nextAttemptAt), and a malformed body (400)", async () => {
    // The default policy: a 24 h budget from creation, 30 s of it kept for the call.
    const task = await enqueued({ delayMs: HOUR });
    const budgetEnd = (task.runStartedAt as number) + 86_400_000 - 30_000;
    const over = await api.call('POST', `/retry-tasks/${task.taskId}/reschedule`, { nextAttemptAt: budgetEnd + 1 });
    expect(over.status).toBe(422);
    expect(over.body).toMatchObject({ code: 'RESCHEDULE_OUT_OF_RANGE', errors: [{ field: 'nextAttemptAt' }] });
    expect(over.body.errors[0].rule).toBe(
      `at or before ${new Date(budgetEnd).toISOString()}, the end of the task's time budget (runStartedAt ${new Date(task.runStartedAt as number).toISOString()} + policy.totalBudgetMs 86400000 − policy.estimatedCallMs 30000)`,
    );
    expect((await api.call('POST', `/retry-tasks/${task.taskId}/reschedule`, { nextAttemptAt: budgetEnd })).status).toBe(200);

    const unbounded = await enqueued({ delayMs: HOUR, policy: NO_BUDGET });
    const tooFar = await api.call('POST', `/retry-tasks/${unbounded.taskId}/reschedule`, { nextAttemptAt: Date.now() + MAX_POLICY_MS + 60_000 });
    expect(tooFar.status).toBe(422);
    expect(tooFar.body.errors).toEqual([expect.objectContaining({ field: 'nextAttemptAt', rule: `at most ${MAX_POLICY_MS} ms (3650 d) after now` })]);

    const bad = async (body: unknown) => (await api.call('POST', `/retry-tasks/${unbounded.taskId}/reschedule`, body)).body;
    expect(await bad(undefined)).toMatchObject({ status: 400, errors: [{ field: 'body', rule: 'a JSON object with the field nextAttemptAt' }] });
    const rule = 'epoch milliseconds (an integer >= 0) or an ISO 8601 date-time with a time zone';
    expect(await bad({})).toMatchObject({ status: 400, errors: [{ field: 'nextAttemptAt', rule }] });
    expect(await bad({ nextAttemptAt: 'tomorrow' })).toMatchObject({ status: 400, detail: `nextAttemptAt must be ${rule}, got "tomorrow"` });
    expect(await bad({ nextAttemptAt: '2030-01-01T09:00:00' })).toMatchObject({ status: 400, errors: [{ field: 'nextAttemptAt' }] });
    expect(await bad({ nextAttemptAt: 1.5 })).toMatchObject({ status: 400, errors: [{ field: 'nextAttemptAt' }] });
    expect(await bad({ nextAttemptAt: Date.now(), at: 1 })).toMatchObject({ status: 400, errors: [{ field: 'at' }] });
    // Nothing of the above changed the task.
    expect(await api.stored(unbounded.taskId)).toEqual(unbounded);
  });

  it('refuses an IN_FLIGHT task (409 TASK_RUNNING) and a finished one (409 TASK_NOT_PENDING); 404 for no such task', async () => {
    const running = await enqueued();
    expect(await claim(running.taskId)).toBeDefined();
    for (const [path, body] of [['run', undefined], ['reschedule', { nextAttemptAt: Date.now() + 60_000 }]] as const) {
      const res = await api.call('POST', `/retry-tasks/${running.taskId}/${path}`, body);
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ code: 'TASK_RUNNING', type: 'https://retryd.dev/problems/task-running' });
      expect(res.body.detail).toContain('IN_FLIGHT');
    }
    const cancelled = await enqueued({ delayMs: HOUR });
    expect((await api.call('DELETE', `/retry-tasks/${cancelled.taskId}`)).status).toBe(200);
    expect((await api.call('POST', `/retry-tasks/${cancelled.taskId}/run`)).body).toMatchObject({ status: 409, code: 'TASK_NOT_PENDING' });

    const held = await api.stored(running.taskId);
    const [failed] = await api.store.completeAttempts(
      [{ tenantId: DEFAULT_TENANT, taskId: held.taskId, fencingToken: held.fencingToken, attempt: makeAttempt(held, { outcome: 'failed' }), next: finalOutcome(held, 'FAILED') }],
      Date.now(),
    );
    expect(failed?.kind).toBe('applied');
    const dead = await api.call('POST', `/retry-tasks/${running.taskId}/run`);
    expect(dead.body).toMatchObject({ status: 409, code: 'TASK_NOT_PENDING' });
    expect(dead.body.detail).toContain('replay it to run it again');
    expect((await api.call('POST', '/retry-tasks/00000000-0000-4000-8000-000000000000/run')).body).toMatchObject({ status: 404, code: 'NOT_FOUND' });
  });

  it("makes a task due, not past its target's protection: with the breaker open it waits, and says so", async () => {
    const targetUrl = 'https://api.example.com:9443/orders';
    const task = await enqueued({ targetUrl, delayMs: HOUR });
    const opened = await api.call('POST', `/targets/${encodeURIComponent('https://api.example.com:9443')}/breaker`, { action: 'open' });
    expect(opened.status).toBe(200);
    const res = await api.call('POST', `/retry-tasks/${task.taskId}/run`);
    expect(res.status).toBe(200);
    expect(res.body.waiting).toMatchObject({ reason: 'breaker_open' });
    expect(await claim(task.taskId)).toBeUndefined();
    expect((await api.call('GET', `/retry-tasks/${task.taskId}`)).body.waiting).toMatchObject({ reason: 'breaker_open' });
  });
});

describe('run now racing a worker', () => {
  it('decides again on the task as it is when a worker claims it between the read and the write: 409 TASK_RUNNING', async () => {
    let beforeNextReschedule: (() => Promise<void>) | undefined;
    const api = await startApi({
      wrapStore: (store: Store) => {
        const reschedule = store.rescheduleTask.bind(store);
        store.rescheduleTask = async (...args): Promise<TransitionResult> => {
          const hook = beforeNextReschedule;
          beforeNextReschedule = undefined;
          await hook?.();
          return reschedule(...args);
        };
        return store;
      },
    });
    try {
      const { body } = await api.enqueue();
      beforeNextReschedule = async () => {
        const claimed = await api.store.claimDue(Date.now(), { limit: 10, leaseMs: 60_000, workerId: 'worker-1' });
        expect(claimed.map((t) => t.taskId)).toEqual([body.taskId]);
      };
      const res = await api.call('POST', `/retry-tasks/${body.taskId}/reschedule`, { nextAttemptAt: Date.now() + 60_000 });
      expect(res.body).toMatchObject({ status: 409, code: 'TASK_RUNNING' });
      expect(beforeNextReschedule).toBeUndefined();
      expect(await api.store.getTask(DEFAULT_TENANT, body.taskId)).toMatchObject({ status: 'IN_FLIGHT' });
    } finally {
      await api.close();
    }
  });
});
