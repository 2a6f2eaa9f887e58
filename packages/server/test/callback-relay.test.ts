import { ManualClock } from '@retryd/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CallbackRelay } from '../src/callbacks/callback-relay.js';
import { RetrydError } from '../src/domain/errors.js';
import type { RetryTask } from '../src/domain/task.js';
import type { TaskCallback } from '../src/domain/task-callback.js';
import type { SqliteStore } from '../src/backends/sqlite/sqlite-store.js';
import type { BatchEntryResult } from '../src/tasks/enqueuer.js';
import { openTempStore } from './engine-helpers.js';
import { T0, finalOutcome, makeAttempt, makeTask } from './fixtures/tasks.js';

// The callback relay against a real store: what it makes of each owed callback (a task to enqueue, nothing to tell,
// a refusal for good, a failure that may pass), and what it leaves owed. The enqueue is recorded here: the service's
// own (TaskService.enqueueBatch) is exercised end to end by task-callbacks.test.ts.

const CALLBACK: TaskCallback = { url: 'https://caller.example.com/ended', on: ['succeeded', 'failed', 'cancelled'], policyId: null };

describe('CallbackRelay', () => {
  let store: SqliteStore;
  let cleanup: () => Promise<void>;
  const enqueued: { tenantId: string; inputs: unknown[] }[] = [];
  let answer: (input: unknown) => BatchEntryResult;
  const refused: string[] = [];
  const reported: unknown[] = [];

  beforeEach(async () => {
    ({ store, cleanup } = await openTempStore());
    enqueued.length = 0;
    refused.length = 0;
    reported.length = 0;
    answer = () => ({ kind: 'created', task: makeTask() });
  });
  afterEach(() => cleanup());

  const relay = () =>
    new CallbackRelay({
      store,
      clock: new ManualClock(T0),
      batchSize: 2,
      enqueue: async (tenantId, inputs) => {
        enqueued.push({ tenantId, inputs: [...inputs] });
        return inputs.map((input) => answer(input));
      },
      onRefused: (owed) => refused.push(owed.taskId),
      report: (error) => reported.push(error),
    });

  /** Inserts `task`, claims it and ends it with `status`, its attempt answered `status` and `snippet`. */
  async function ended(task: RetryTask, status: 'SUCCEEDED' | 'EXHAUSTED', snippet: string | null = 'ok'): Promise<RetryTask> {
    await store.insertTasks([task]);
    const [claimed] = await store.claimDue(T0, { limit: 10, leaseMs: 1_000, workerId: 'w' });
    if (claimed === undefined) throw new Error('expected a claim');
    const attempt = makeAttempt(claimed, { responseStatus: status === 'SUCCEEDED' ? 200 : 503, responseBodySnippet: snippet });
    const next = { ...finalOutcome(claimed, status), ...(status === 'EXHAUSTED' ? { deadLetterReason: 'max_attempts', lastResponseStatus: 503 } : {}) };
    await store.completeAttempts([{ tenantId: claimed.tenantId, taskId: claimed.taskId, fencingToken: claimed.fencingToken, attempt, next }], T0 + 10);
    return (await store.getTask(claimed.tenantId, claimed.taskId)) as RetryTask;
  }

  it('enqueues the event of each end asked for, with a key derived from the task and its version, and settles it', async () => {
    const long = 'x'.repeat(5_000);
    const done = await ended(makeTask({ callback: { ...CALLBACK, policyId: 'callbacks' }, traceContext: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }), 'EXHAUSTED', long);
    expect(await relay().pass()).toBe(1);
    expect(enqueued).toEqual([
      {
        tenantId: 'default',
        inputs: [
          {
            targetUrl: CALLBACK.url,
            method: 'POST',
            idempotencyKey: `retryd-callback:${done.taskId}:${done.version}`,
            policyId: 'callbacks',
            body: {
              type: 'task.ended',
              taskId: done.taskId,
              idempotencyKey: done.idempotencyKey,
              status: 'EXHAUSTED',
              reason: 'max_attempts',
              attempts: 1,
              endedAt: T0 + 10,
              lastResponse: { status: 503, excerpt: 'x'.repeat(1_024) },
              lastError: null,
            },
          },
        ],
      },
    ]);
    expect(await store.callbacks.owed(10)).toEqual([]);
  });

  it('settles without a callback an end not asked for, and a task live again after a replay', async () => {
    const notAsked = await ended(makeTask({ callback: { ...CALLBACK, on: ['failed'] } }), 'SUCCEEDED');
    const replayed = await ended(makeTask({ callback: CALLBACK }), 'EXHAUSTED');
    await store.replayTask(
      { tenantId: 'default', taskId: replayed.taskId },
      { expectedVersion: replayed.version, runAttemptOffset: 1, runStartedAt: T0 + 20, nextAttemptAt: T0 + 3_600_000, updatedAt: T0 + 20 },
    );
    expect((await store.callbacks.owed(10)).map((o) => o.taskId).sort()).toEqual([notAsked.taskId, replayed.taskId].sort());
    expect(await relay().pass()).toBe(0);
    expect(enqueued).toEqual([]);
    expect(await store.callbacks.owed(10)).toEqual([]);
  });

  it('drops a callback refused for good, saying so, and keeps one whose enqueue may succeed later', async () => {
    const first = await ended(makeTask({ callback: CALLBACK }), 'SUCCEEDED');
    const second = await ended(makeTask({ callback: CALLBACK }), 'SUCCEEDED');
    answer = (input) =>
      (input as { idempotencyKey: string }).idempotencyKey.includes(first.taskId)
        ? { kind: 'error', error: new RetrydError('TARGET_NOT_ALLOWED', 'callback.url is not allowed') }
        : { kind: 'error', error: new RetrydError('STORE_UNAVAILABLE', 'the store is down') };
    expect(await relay().pass()).toBe(0);
    expect(refused).toEqual([first.taskId]);
    expect(reported).toHaveLength(1);
    expect((await store.callbacks.owed(10)).map((o) => o.taskId)).toEqual([second.taskId]);
    answer = () => ({ kind: 'replayed', task: makeTask() });
    expect(await relay().pass()).toBe(1);
    expect(await store.callbacks.owed(10)).toEqual([]);
  });

  it('goes on batch after batch until one is not full, grouping each tenant', async () => {
    const tasks = [makeTask({ callback: CALLBACK }), makeTask({ callback: CALLBACK, tenantId: 'b' }), makeTask({ callback: CALLBACK })];
    for (const [i, task] of tasks.entries()) {
      await store.insertTasks([task]);
      await store.cancelTask({ tenantId: task.tenantId, taskId: task.taskId }, T0 + 5 + i, T0 + 10_000);
    }
    expect(await relay().pass()).toBe(3);
    expect(enqueued.map((e) => [e.tenantId, e.inputs.length])).toEqual([
      ['default', 1],
      ['b', 1],
      ['default', 1],
    ]);
    const events = enqueued.flatMap((e) => e.inputs.map((i) => (i as { body: { status: string; lastResponse: unknown } }).body));
    expect(events.every((e) => e.status === 'CANCELLED' && e.lastResponse === null)).toBe(true);
  });
});
