import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_TENANT } from '../src/domain/task.js';
import { EngineHarness, JITTERED_POLICY } from './engine-harness.js';
import { T0 } from './fixtures/tasks.js';

// A cancel that arrives while the task's attempt is in flight, on the engine harness.

let h: EngineHarness;
afterEach(async () => {
  await h.close();
});

const target = 'https://a.example/orders';

describe('cancel during flight', () => {
  it('cancels the task when its attempt answers, instead of the retry the answer asked for', async () => {
    h = await EngineHarness.open();
    const { task } = await h.enqueue({ targetUrl: target, policy: JITTERED_POLICY });
    expect(await h.service.cancel(DEFAULT_TENANT, task.taskId)).toMatchObject({ kind: 'cancel_requested' });
    expect(await h.task(task)).toMatchObject({ status: 'IN_FLIGHT', cancelRequested: true });

    await h.advance(50);
    h.dispatcher.take(task).respond(503);
    await h.settle();
    expect(await h.task(task)).toMatchObject({
      status: 'CANCELLED',
      attemptNumber: 1,
      nextAttemptAt: null,
      deadLetterReason: null,
      cancelRequested: true,
      updatedAt: T0 + 50,
    });
    // The 503 would have scheduled a retry; the log says what happened instead.
    expect(await h.attempts(task)).toMatchObject([{ attemptNumber: 1, responseStatus: 503, outcome: 'cancelled', nextAttemptAt: null }]);
    // Well past the retry the 503 would have had (at most 1 s later with this policy).
    await h.advance(60_000);
    expect(h.dispatcher.dispatches).toHaveLength(1);
    expect(h.errors).toEqual([]);
  });

  it('lets a successful attempt stand even if a cancel was requested meanwhile', async () => {
    h = await EngineHarness.open();
    const { task } = await h.enqueue({ targetUrl: target, policy: JITTERED_POLICY });
    await h.service.cancel(DEFAULT_TENANT, task.taskId);
    h.dispatcher.take(task).respond(200);
    await h.settle();
    expect(await h.task(task)).toMatchObject({ status: 'SUCCEEDED', cancelRequested: true });
    expect(await h.attempts(task)).toMatchObject([{ outcome: 'succeeded' }]);
  });

  it('cancels a task waiting for its retry at once, and never attempts it again', async () => {
    h = await EngineHarness.open();
    const { task } = await h.enqueue({ targetUrl: target, policy: JITTERED_POLICY });
    h.dispatcher.take(task).respond(503);
    await h.settle();
    const { nextAttemptAt } = await h.task(task);
    expect(await h.service.cancel(DEFAULT_TENANT, task.taskId)).toMatchObject({ kind: 'cancelled', task: { status: 'CANCELLED' } });
    await h.advanceTo((nextAttemptAt as number) + 60_000);
    expect(h.dispatcher.dispatches).toHaveLength(1);
  });

  it('cancels, without an attempt, a task whose lease was handed back at shutdown with a cancel requested', async () => {
    h = await EngineHarness.open();
    const { task } = await h.enqueue({ targetUrl: target, policy: JITTERED_POLICY });
    await h.service.cancel(DEFAULT_TENANT, task.taskId);
    await h.drive(h.engine.stop({ graceMs: 0 }));
    expect(await h.task(task)).toMatchObject({ status: 'PENDING', attemptNumber: 0, cancelRequested: true });

    // Another instance claims it: the cancel is applied before any request goes out.
    const other = h.addEngine();
    await other.engine.start();
    await h.settle();
    expect(other.dispatcher.dispatches).toEqual([]);
    expect(await h.task(task)).toMatchObject({ status: 'CANCELLED', attemptNumber: 0 });
    expect(await h.attempts(task)).toEqual([]);
  });
});
