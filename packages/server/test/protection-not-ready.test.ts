import { afterEach, describe, expect, it } from 'vitest';
import { ReadyAttempt } from '../src/protection/ready-attempt.js';
import { FAST, only, ProtectedHarness } from './protection-harness.js';

// A target that answers is never starved: a downstream that fails each key's first call ("not ready yet") and answers
// the next has a ready attempt of 2, and failures before it count for nothing; the breaker that its very first wave
// opens (it cannot tell that wave from an outage) probes with the tasks furthest along, which succeed.

const A = 'https://a.example';
/** Three counted failures in a row open it for 1 s (jittered); two probes close it. */
const BREAKER = only({
  breaker: { enabled: true, consecutiveFailures: 3, openDurationMs: 1_000, openBackoffMultiplier: 2, maxOpenDurationMs: 60_000, halfOpenProbes: 2 },
  retryBudget: { enabled: true, retryRatio: 0, minRetriesPerSecond: 1 },
});

let p: ProtectedHarness | undefined;
afterEach(async () => {
  await p?.close();
  p = undefined;
});

describe('the ready attempt', () => {
  it('is unknown until a success, the lowest attempt that succeeded within its memory, and forgets', () => {
    const ready = new ReadyAttempt(10_000);
    expect(ready.at(0)).toBeNull();
    expect(ready.notReady(1, 0)).toBe(false);
    ready.succeeded(3, 1_000);
    expect(ready.at(1_000)).toBe(3);
    expect([1, 2, 3, 4].map((n) => ready.notReady(n, 1_000))).toEqual([true, true, false, false]);
    ready.succeeded(2, 5_000);
    expect(ready.at(5_000)).toBe(2);
    // The success at 2 is remembered until 15 000; the one at 3 was forgotten at 11 000.
    expect(ready.at(15_000)).toBe(2);
    expect(ready.at(15_001)).toBeNull();
    // Attempts past the last tracked one count as it.
    ready.succeeded(40, 20_000);
    expect(ready.at(20_000)).toBe(8);
  });
});

describe('a "not ready yet" target', () => {
  it('recovers from the opening its first wave caused through probes that succeed, then is never held for first-call failures', async () => {
    p = await ProtectedHarness.open({ defaults: BREAKER });
    const h = p.h;
    const first = await p.insert(...Array.from({ length: 6 }, () => p!.task(`${A}/hook`)));
    await p.answer(p.openTo(A), 503);
    const opened = p.first.events.filter((e) => e.event === 'breaker_open');
    expect(opened).toHaveLength(1);

    // The probe is a task on its second attempt, which this downstream answers.
    const openUntil = (await p.storedBreaker(A))!.openUntil!;
    await h.advanceTo(openUntil);
    expect(p.openTo(A).map((d) => d.attemptNumber)).toEqual([2]);
    await p.answer(p.openTo(A), 200);
    await p.answer(p.openTo(A), 200);
    expect(await p.storedBreaker(A)).toMatchObject({ state: 'CLOSED' });
    await h.advance(100);
    await p.answer(p.openTo(A), 200);
    for (const task of first) expect(await h.task(task)).toMatchObject({ status: 'SUCCEEDED', attemptNumber: 2 });

    // Now its ready attempt is 2: a whole wave of first calls failing opens nothing, pays no retry budget (it allows
    // none here beyond 1/s), and every retry goes at its own time.
    const second = await p.insert(...Array.from({ length: 6 }, () => p!.task(`${A}/hook`)));
    const failedAt = h.clock.now();
    await p.answer(p.openTo(A), 503);
    expect(p.first.events.filter((e) => e.event === 'breaker_open')).toHaveLength(1);
    expect(await p.storedBreaker(A)).toMatchObject({ state: 'CLOSED' });
    await h.advanceTo(failedAt + 100);
    expect(p.openTo(A).map((d) => d.attemptNumber)).toEqual([2, 2, 2, 2, 2, 2]);
    await p.answer(p.openTo(A), 200);
    for (const task of second) expect(await h.task(task)).toMatchObject({ status: 'SUCCEEDED', attemptNumber: 2 });
  });

  it("probes with a task whose retry is due after the hold once its own time comes, ahead of the fresh tasks, never sooner", async () => {
    p = await ProtectedHarness.open({ defaults: BREAKER });
    const h = p.h;
    // Retries 3 s apart: due after the first open periods (0.5–1 s, then 1–2 s), so they are not moved at once.
    const slow = { ...FAST, initialDelayMs: 3_000, maxDelayMs: 3_000 };
    const first = await p.insert(...Array.from({ length: 3 }, () => p!.task(`${A}/hook`, { policy: slow })));
    const failedAt = h.clock.now();
    // The first wave fails and opens the breaker; the fresh tasks enqueued then are held.
    await p.answer(p.openTo(A), 503);
    expect(p.first.events.filter((e) => e.event === 'breaker_open')).toHaveLength(1);
    await h.advance(1);
    const fresh = await p.insert(...Array.from({ length: 6 }, () => p!.task(`${A}/hook`, { policy: slow })));
    expect(p.openTo(A)).toEqual([]);
    for (const task of first) expect((await h.task(task))?.nextAttemptAt).toBe(failedAt + 3_000);
    // Until then every probe is a fresh task, which this downstream fails.
    const freshIds = new Set(fresh.map((t) => t.taskId));
    while (h.clock.now() < failedAt + 3_000) {
      const openUntil = (await p.storedBreaker(A))!.openUntil!;
      if (openUntil >= failedAt + 3_000) break;
      await h.advanceTo(openUntil);
      const probes = p.openTo(A);
      expect(probes.map((d) => freshIds.has(d.task.taskId))).toEqual([true]);
      await p.answer(probes, 503);
    }
    // At their own time the first wave takes back its place: the next probe is one of them, on its second attempt.
    await h.advanceTo(failedAt + 3_000);
    const openUntil = (await p.storedBreaker(A))!.openUntil!;
    await h.advanceTo(Math.max(openUntil, failedAt + 3_000));
    const probe = p.openTo(A);
    expect(probe.map((d) => [first.some((t) => t.taskId === d.task.taskId), d.attemptNumber])).toEqual([[true, 2]]);
    expect(probe[0]!.at).toBeGreaterThanOrEqual(failedAt + 3_000);
    await p.answer(probe, 200);
  });

  it('still opens for an outage: failures at or past the ready attempt count', async () => {
    p = await ProtectedHarness.open({ defaults: BREAKER });
    // Taught a ready attempt of 1.
    await p.insert(p.task(`${A}/hook`));
    await p.answer(p.openTo(A), 200);
    await p.insert(...Array.from({ length: 3 }, () => p!.task(`${A}/hook`)));
    await p.answer(p.openTo(A), 503);
    expect(p.first.events.map((e) => e.event)).toEqual(['breaker_open']);
  });
});
