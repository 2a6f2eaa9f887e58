import { afterEach, describe, expect, it } from 'vitest';
import type { RetryTask } from '../src/domain/task.js';
import { EngineHarness, JITTERED_POLICY } from './engine-harness.js';
import { makeTask, T0 } from './fixtures/tasks.js';

// The engine's slots shared between tenants and targets (SlotShares), on the engine harness: a target that never
// answers holds at most its bound of them, and the others' tasks are dispatched beside it, at once.

let h: EngineHarness;
afterEach(async () => {
  await h.close();
});

const HANG = 'https://hang.example';
const FAST = 'https://fast.example';

/** `n` tasks of `tenantId` for `origin`, due now, inline policy (no policy read delays their launch). */
const tasksFor = (tenantId: string, origin: string, n: number): RetryTask[] =>
  Array.from({ length: n }, () => makeTask({ tenantId, targetUrl: `${origin}/x`, policy: JITTERED_POLICY, policyId: null, nextAttemptAt: T0 }));

/** Dispatches not yet answered, per `tenant origin`. */
function openBy(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const d of h.dispatcher.open) {
    const key = `${d.task.tenantId} ${d.task.targetKey}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

describe("the engine's slots shared between tenants and targets", () => {
  it("dispatches another tenant's task at once while one tenant's target hangs with every slot it may hold", async () => {
    // 32 slots: one target holds at most 30 (all but a sixteenth), one tenant 31 (all but a thirty-second).
    h = await EngineHarness.open({ start: false, handOff: false, engine: { concurrency: 32 } });
    await h.insert(...tasksFor('a', HANG, 40));
    await h.engine.start();
    await h.settle();
    expect(openBy()).toEqual({ [`a ${HANG}`]: 30 });
    // Another instance enqueued b's task: nothing wakes this engine; it looks for others' tasks within 50 ms.
    const [b] = await h.insert(...tasksFor('b', FAST, 1));
    await h.advance(50);
    expect(h.dispatcher.log.map(([taskId]) => taskId)).toContain(b!.taskId);
    expect(h.dispatcher.take(b!).at).toBeLessThanOrEqual(T0 + 50);
    h.dispatcher.take(b!).respond(200);
    await h.settle();
    expect(await h.task(b!)).toMatchObject({ status: 'SUCCEEDED' });
    // a never held more than 30: the hanging target's other ten tasks wait.
    expect(openBy()).toEqual({ [`a ${HANG}`]: 30 });
  });

  it("bounds a target with nothing to protect it: the tenant's other target goes on beside it", async () => {
    h = await EngineHarness.open({ start: false, handOff: false, engine: { concurrency: 32 } });
    await h.insert(...tasksFor('a', HANG, 40));
    await h.engine.start();
    await h.settle();
    const [fast] = await h.insert(...tasksFor('a', FAST, 1));
    await h.advance(50);
    expect(openBy()).toEqual({ [`a ${HANG}`]: 30, [`a ${FAST}`]: 1 });
    expect(h.dispatcher.take(fast!).at).toBeLessThanOrEqual(T0 + 50);
  });

  it('gives the slots a hanging tenant frees to the tenant below its share first, and more only when no one else has a task due', async () => {
    h = await EngineHarness.open({ start: false, handOff: false, engine: { concurrency: 32 } });
    await h.insert(...tasksFor('a', HANG, 60));
    await h.engine.start();
    await h.settle();
    await h.insert(...tasksFor('b', FAST, 16));
    await h.advance(50);
    // b takes the two slots a may not.
    expect(openBy()).toEqual({ [`a ${HANG}`]: 30, [`b ${FAST}`]: 2 });
    // 14 of a's attempts end (timeouts, say): their slots go to b, up to its share (16 of 32), not back to a.
    const hung = h.dispatcher.open.filter((d) => d.task.tenantId === 'a');
    for (const d of hung.slice(0, 14)) d.respond(503);
    await h.advance(50);
    expect(openBy()).toEqual({ [`a ${HANG}`]: 16, [`b ${FAST}`]: 16 });
    // Both at their share: a slot a frees goes back to a (b is at its share).
    hung[14]!.respond(503);
    await h.advance(50);
    expect(openBy()).toEqual({ [`a ${HANG}`]: 16, [`b ${FAST}`]: 16 });
    // Half of b's attempts end and b has nothing more due: a takes more than its share, leaving the reserve free.
    for (const d of h.dispatcher.open.filter((o) => o.task.tenantId === 'b').slice(0, 8)) d.respond(200);
    await h.advance(50);
    expect(openBy()).toEqual({ [`a ${HANG}`]: 22, [`b ${FAST}`]: 8 });
  });
});
