import { afterEach, describe, expect, it } from 'vitest';
import { FencedOutError } from '../src/engine/engine-errors.js';
import { EngineHarness, JITTERED_POLICY } from './engine-harness.js';
import { T0 } from './fixtures/tasks.js';

// A task's and a target's own timeouts on the engine harness: which ones each attempt runs under, and its lease. The
// harness engine's own are an attempt timeout of 10 s, a connect timeout of 5 s and a lease of 30 s (a margin of 20 s).

let h: EngineHarness;
afterEach(async () => {
  await h.close();
});

const target = 'https://a.example/x';

describe('timeouts of an attempt', () => {
  it("sends a task that sets none with the service's (no timeouts passed, no lease write)", async () => {
    h = await EngineHarness.open();
    const { task } = await h.enqueue({ targetUrl: target, policy: JITTERED_POLICY });
    expect(h.dispatcher.take(task).timeouts).toBeUndefined();
    expect(h.faulty.timesOf('extendLease')).toEqual([]);
    expect(await h.task(task)).toMatchObject({ leaseExpiresAt: T0 + 30_000, attemptTimeoutMs: null, connectTimeoutMs: null });
  });

  it("resolves each field on its own: the task's, else the service's; a connect timeout cut to the attempt's", async () => {
    h = await EngineHarness.open();
    const { task: short } = await h.enqueue({ targetUrl: target, policy: JITTERED_POLICY, attemptTimeoutMs: 200 });
    const { task: connect } = await h.enqueue({ targetUrl: target, policy: JITTERED_POLICY, connectTimeoutMs: 250 });
    expect(h.dispatcher.take(short).timeouts).toEqual({ attemptTimeoutMs: 200, connectTimeoutMs: 200 });
    expect(h.dispatcher.take(connect).timeouts).toEqual({ attemptTimeoutMs: 10_000, connectTimeoutMs: 250 });
    // Shorter than the service's: the lease of the claim covers it, nothing is written.
    expect(h.faulty.timesOf('extendLease')).toEqual([]);
  });

  it("extends the lease of an attempt longer than the service's, so another instance does not take it mid-attempt", async () => {
    h = await EngineHarness.open({ engine: { maxIdleMs: 1_000 } });
    const other = h.addEngine({ maxIdleMs: 1_000 });
    await other.engine.start();
    const { task } = await h.enqueue({ targetUrl: target, policy: JITTERED_POLICY, attemptTimeoutMs: 60_000 });
    expect(h.dispatcher.take(task).timeouts).toEqual({ attemptTimeoutMs: 60_000, connectTimeoutMs: 5_000 });
    // Its timeout and the service's margin of 20 s, from the moment it is sent.
    expect(h.faulty.timesOf('extendLease')).toEqual([T0]);
    expect(await h.task(task)).toMatchObject({ status: 'IN_FLIGHT', leaseOwner: 'worker-1', leaseExpiresAt: T0 + 80_000 });

    // Past the claim's lease (T0 + 30 000) the other instance's reaper leaves it alone, and the answer counts.
    await h.advanceTo(T0 + 55_000);
    expect(await h.task(task)).toMatchObject({ status: 'IN_FLIGHT', leaseOwner: 'worker-1', attemptNumber: 0 });
    h.dispatcher.take(task).respond(200);
    await h.settle();
    expect(await h.task(task)).toMatchObject({ status: 'SUCCEEDED', attemptNumber: 1 });
    expect((await h.attempts(task)).map((a) => [a.outcome, a.workerId])).toEqual([['succeeded', 'worker-1']]);
    expect(other.dispatcher.log).toEqual([]);
    expect(h.errors).toEqual([]);
    expect(other.errors).toEqual([]);
  });

  it("sends under the service's attempt timeout, which its lease covers, when the store cannot extend the lease", async () => {
    h = await EngineHarness.open();
    h.faulty.failing.add('extendLease');
    const { task } = await h.enqueue({ targetUrl: target, policy: JITTERED_POLICY, attemptTimeoutMs: 60_000, connectTimeoutMs: 20_000 });
    expect(h.dispatcher.take(task).timeouts).toEqual({ attemptTimeoutMs: 10_000, connectTimeoutMs: 10_000 });
    expect(h.errors).toEqual([{ error: expect.objectContaining({ message: 'injected fault: extendLease failed' }), operation: 'extend_lease', taskId: task.taskId }]);
    expect(await h.task(task)).toMatchObject({ leaseExpiresAt: T0 + 30_000 });
  });

  it('sends nothing when the lease was lost before it could be extended', async () => {
    h = await EngineHarness.open();
    const open = h.faulty.hold('extendLease');
    const { task } = await h.enqueue({ targetUrl: target, policy: JITTERED_POLICY, attemptTimeoutMs: 60_000 });
    // Meanwhile the lease is handed back (as a shutdown elsewhere would): the task is no longer this worker's.
    expect(await h.store.releaseLeases([{ tenantId: task.tenantId, taskId: task.taskId, fencingToken: task.fencingToken }], T0)).toBe(1);
    open();
    await h.settle();
    expect(h.errors.filter((e) => e.operation === 'extend_lease')).toEqual([
      { error: expect.any(FencedOutError), operation: 'extend_lease', taskId: task.taskId },
    ]);
    // Nothing went out under the lost lease (a later claim sends it under a lease of its own).
    expect(h.dispatcher.dispatches.filter((d) => d.task.fencingToken === task.fencingToken)).toEqual([]);
    expect(await h.attempts(task)).toEqual([]);
  });
});
