import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_TENANT } from '../src/domain/task.js';
import { StoreUnavailableError } from '../src/store/store-errors.js';
import type { BatchEntryResult } from '../src/tasks/enqueuer.js';
import { EngineHarness, JITTERED_POLICY } from './engine-harness.js';
import { T0 } from './fixtures/tasks.js';

// The hand-off from the enqueue to the local engine, on the engine harness: tasks due now are inserted already
// leased to the engine and run without a claim; what the engine has no room for waits for one.

let h: EngineHarness;
afterEach(async () => {
  await h.close();
});

const input = (extra: Record<string, unknown> = {}) => ({
  targetUrl: 'https://a.example/x',
  method: 'POST',
  policy: JITTERED_POLICY,
  ...extra,
});
const statusesOf = (results: BatchEntryResult[]) => results.map((r) => (r.kind === 'error' ? r.kind : r.task.status));
/** The claims the engine made, alone or riding with completions. */
const claims = () => (h.faulty.calls.get('claimDue') ?? 0) + (h.faulty.calls.get('completeAndClaim') ?? 0);

describe('hand-off from the enqueue to the local engine', () => {
  it('inserts a task due now already leased to the engine and runs it without a claim', async () => {
    h = await EngineHarness.open();
    // The engine's one claim at start, on the empty store.
    expect(claims()).toBe(1);
    const { kind, task } = await h.enqueue(input());
    expect(kind).toBe('created');
    expect(task).toMatchObject({ status: 'IN_FLIGHT', leaseOwner: 'worker-1', fencingToken: 1, leaseExpiresAt: T0 + 30_000 });
    expect(h.dispatcher.log).toEqual([[task.taskId, 1, T0]]);
    h.dispatcher.take(task).respond(200);
    await h.settle();
    expect(await h.task(task)).toMatchObject({ status: 'SUCCEEDED', attemptNumber: 1 });
    expect(claims()).toBe(1);
    // Nothing was left waiting, so the engine was not woken to look for it.
    expect(h.wakes).toBe(0);
  });

  it('leaves tasks due later, and those beyond the free capacity, to a claim', async () => {
    h = await EngineHarness.open({ engine: { concurrency: 2 } });
    const later = await h.enqueue(input({ delayMs: 60_000 }));
    expect(later.task).toMatchObject({ status: 'PENDING', leaseOwner: null, fencingToken: 0 });
    const results = await h.service.enqueueBatch(DEFAULT_TENANT, [input(), input(), input()]);
    await h.settle();
    // Concurrency 2: two handed over, the third waits for a slot.
    expect(statusesOf(results)).toEqual(['IN_FLIGHT', 'IN_FLIGHT', 'PENDING']);
    expect(h.wakes).toBe(2);
    const [first, , third] = results.map((r) => (r.kind === 'error' ? undefined : r.task));
    expect(h.dispatcher.dispatches.map((d) => d.taskId)).not.toContain(third!.taskId);
    const before = claims();

    h.dispatcher.take(first!).respond(200);
    await h.settle();
    // The slot it freed goes to the third task, through a claim.
    expect(claims()).toBe(before + 1);
    expect(h.dispatcher.log.at(-1)).toEqual([third!.taskId, 1, T0]);
    expect(await h.task(third!)).toMatchObject({ status: 'IN_FLIGHT', leaseOwner: 'worker-1', fencingToken: 1 });
  });

  it('gives the slot back when the key was taken, and when the write fails', async () => {
    h = await EngineHarness.open({ engine: { concurrency: 2 } });
    const first = await h.enqueue(input({ idempotencyKey: 'order-1' }));
    h.dispatcher.take(first.task).respond(200);
    await h.settle();
    const again = await h.enqueue(input({ idempotencyKey: 'order-1' }));
    expect(again.kind).toBe('replayed');
    h.faulty.failing.add('insertTasks');
    await expect(h.service.enqueue(DEFAULT_TENANT, input())).rejects.toThrow('the sqlite store failed');
    h.faulty.failing.delete('insertTasks');
    // Both slots are free again: a batch of two is handed over whole.
    expect(statusesOf(await h.service.enqueueBatch(DEFAULT_TENANT, [input(), input()]))).toEqual(['IN_FLIGHT', 'IN_FLIGHT']);
  });

  it('starts a handed-off task once its insert is visible, and answers the enqueue only once it is durable', async () => {
    h = await EngineHarness.open({ twoStepInserts: true });
    let answered = false;
    const enqueued = h.service.enqueue(DEFAULT_TENANT, input()).finally(() => (answered = true));
    await h.settle();
    // The attempt is under way while its write waits for its flush; the enqueue has not answered.
    expect(h.dispatcher.log).toHaveLength(1);
    expect(h.flushes).toHaveLength(1);
    expect(answered).toBe(false);
    h.flushes.shift()?.resolve();
    const { kind, task } = await enqueued;
    expect(kind).toBe('created');
    expect(task).toMatchObject({ status: 'IN_FLIGHT', leaseOwner: 'worker-1', fencingToken: 1 });
    expect(h.dispatcher.log).toEqual([[task.taskId, 1, T0]]);
  });

  it('answers 503 when the flush fails, and lets the attempt already started end as usual', async () => {
    h = await EngineHarness.open({ twoStepInserts: true });
    const enqueued = h.service.enqueue(DEFAULT_TENANT, input());
    await h.settle();
    const [[taskId]] = h.dispatcher.log as [[string, number, number]];
    h.flushes.shift()?.reject(new StoreUnavailableError('connection terminated', { reason: '57P01' }));
    await expect(enqueued).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    const ref = { tenantId: DEFAULT_TENANT, taskId };
    h.dispatcher.take(ref).respond(200);
    await h.settle();
    expect(await h.task(ref)).toMatchObject({ status: 'SUCCEEDED', attemptNumber: 1 });
  });

  it('writes a task left to a claim as before: durable when the enqueue answers, no flush of its own', async () => {
    h = await EngineHarness.open({ twoStepInserts: true });
    const { task } = await h.enqueue(input({ delayMs: 60_000 }));
    expect(task).toMatchObject({ status: 'PENDING' });
    expect(h.flushes).toHaveLength(0);
  });

  it('hands nothing to a stopped engine', async () => {
    h = await EngineHarness.open();
    await h.drive(h.engine.stop());
    const { task } = await h.enqueue(input());
    expect(task).toMatchObject({ status: 'PENDING', leaseOwner: null });
    expect(h.dispatcher.dispatches).toEqual([]);
  });
  it('makes no claim for tasks due later: their due time aims the timer, and they start exactly then', async () => {
    // No idle claims on the way: every claim below is one a wake or the due timer made.
    h = await EngineHarness.open({ engine: { maxIdleMs: 600_000 } });
    const before = claims();
    const later = await h.enqueue(input({ delayMs: 60_000 }));
    const sooner = await h.service.enqueueBatch(DEFAULT_TENANT, [input({ delayMs: 30_000 }), input({ delayMs: 45_000 })]);
    await h.settle();
    expect(h.wakes).toBe(2);
    // Nothing is due before T0 + 30 s: a claim now would find nothing.
    expect(claims()).toBe(before);
    await h.advanceTo(T0 + 29_999);
    expect(claims()).toBe(before);
    expect(h.dispatcher.dispatches).toEqual([]);
    await h.advanceTo(T0 + 30_000);
    const [first] = sooner.map((r) => (r.kind === 'error' ? undefined : r.task));
    expect(h.dispatcher.log).toEqual([[first!.taskId, 1, T0 + 30_000]]);
    expect(claims()).toBe(before + 1);
    h.dispatcher.take(first!).respond(200);
    await h.advanceTo(T0 + 60_000);
    expect(h.dispatcher.log.map(([, , at]) => at)).toEqual([T0 + 30_000, T0 + 45_000, T0 + 60_000]);
    expect(h.dispatcher.log.at(-1)?.[0]).toBe(later.task.taskId);
  });
});
