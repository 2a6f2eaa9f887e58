import { afterEach, describe, expect, it } from 'vitest';
import { T0 } from './fixtures/tasks.js';
import { draw, only, ProtectedHarness } from './protection-harness.js';

// The circuit breaker shared through the store, on the engine harness (one SQLite store, one ManualClock): it opens on
// one instance's failures, holds the target in the store's gate for every instance (tasks stay PENDING and burn no
// attempt), lets exactly its probes through when the hold ends, and closes, or re-opens for longer with jitter.

const A = 'https://a.example';
const B = 'https://b.example';
/** Three failures in a row open it for 1 s (jittered), then 2 s, 4 s …; two probes. */
const BREAKER = only({
  breaker: { enabled: true, consecutiveFailures: 3, openDurationMs: 1_000, openBackoffMultiplier: 2, maxOpenDurationMs: 60_000, halfOpenProbes: 2 },
});
/** The first open period of a protection seeded `seed`: 500 ms + the draw × 500 ms, rounded up. */
const firstOpenUntil = (seed: number, at = T0) => Math.ceil(at + 500 + draw(seed, 1) * 500);

let p: ProtectedHarness;
afterEach(async () => {
  await p.close();
});

/** Opens A's breaker on the first instance: six tasks of A (three fail, opening it; three fail after) and two of B. */
async function openBreaker() {
  p = await ProtectedHarness.open({ defaults: BREAKER });
  const a = await p.insert(...Array.from({ length: 6 }, () => p.task(`${A}/hook`)));
  const b = await p.insert(p.task(`${B}/hook`), p.task(`${B}/hook`));
  expect(p.open).toHaveLength(8);
  await p.answer(p.openTo(A).slice(0, 3), 500);
  await p.answer(p.openTo(A), 500);
  await p.answer(p.openTo(B), 200);
  return { a, b, openUntil: firstOpenUntil(p.first.seed) };
}

describe('a breaker shared through the store', () => {
  it('holds its target while open: due tasks stay PENDING and keep their attempt count; other targets go on', async () => {
    const { a, b, openUntil } = await openBreaker();
    expect(p.first.events).toEqual([{ event: 'breaker_open', tenantId: 'default', target: A, openUntil, reopenCount: 0, cause: 'failures' }]);
    expect(await p.storedBreaker(A)).toMatchObject({ state: 'OPEN', openUntil, reopenCount: 0 });
    // One probe at a time until one succeeds.
    expect(await p.h.store.admin.getTarget(p.ref(A), T0)).toMatchObject({ heldUntil: openUntil, maxInFlight: 1 });
    for (const task of b) expect(await p.h.task(task)).toMatchObject({ status: 'SUCCEEDED' });

    // The first two failures' retries fell due at T0 + 100. The one that opened it and the three that failed while it
    // was open keep their place in line (a ms ahead of their own due time, T0): the probes will be the tasks furthest
    // along. The gate keeps them all until the open period ends.
    await p.h.advanceTo(openUntil - 1);
    expect(p.dispatches).toHaveLength(8);
    const due = [T0 + 100, T0 + 100, T0 - 1, T0 - 1, T0 - 1, T0 - 1];
    for (const [i, task] of a.entries()) {
      expect(await p.h.task(task)).toMatchObject({ status: 'PENDING', attemptNumber: 1, nextAttemptAt: due[i] });
    }
  });

  it('half-open admits only its probes; their successes close it and the rest go out', async () => {
    const { a, openUntil } = await openBreaker();
    // Held through every moment it is open or half-open: the schedule lag of its tasks counts from the end.
    expect(p.first.protection.heldThrough(p.ref(A), openUntil - 1)).toBe(openUntil - 1);
    expect(p.first.protection.heldThrough(p.ref(B), openUntil - 1)).toBe(-Infinity);
    await p.h.advanceTo(openUntil);
    // One probe until one succeeds: a task that kept its place (one of those due at T0 - 1), on its second attempt.
    const [probe] = p.openTo(A);
    expect(p.openTo(A).map((d) => [d.attemptNumber, d.at])).toEqual([[2, openUntil]]);
    expect(a.slice(2).map((t) => t.taskId)).toContain(probe!.task.taskId);

    // One success: still half-open, and one more probe goes (two are needed); the slot it frees is not another's.
    await p.answer([probe!], 200);
    expect(await p.storedBreaker(A)).toMatchObject({ state: 'HALF_OPEN', halfOpen: { probeSuccesses: 1 } });
    expect(p.openTo(A)).toHaveLength(1);
    await p.h.advance(5_000);
    expect(p.openTo(A)).toHaveLength(1);

    await p.answer(p.openTo(A), 200);
    expect(p.first.events.at(-1)).toEqual({ event: 'breaker_closed', tenantId: 'default', target: A, cause: 'probes_succeeded' });
    const closedAt = p.h.clock.now();
    expect(p.first.protection.heldThrough(p.ref(A), closedAt + 60_000)).toBe(closedAt);
    expect(await p.storedBreaker(A)).toMatchObject({ state: 'CLOSED', openUntil: null, reopenCount: 0 });
    expect(await p.h.store.admin.getTarget(p.ref(A), p.h.clock.now())).toMatchObject({ maxInFlight: null, ratePerSecond: null });
    // The other four go out at once, each on its second attempt: the outage cost them one call each.
    expect(p.openTo(A).map((d) => d.attemptNumber)).toEqual([2, 2, 2, 2]);
    await p.answer(p.openTo(A), 200);
    for (const task of a) expect(await p.h.task(task)).toMatchObject({ status: 'SUCCEEDED', attemptNumber: 2 });
  });

  it('a failed probe re-opens it for longer, with equal jitter drawn from the seeded random, and probes again in the next period', async () => {
    const { openUntil } = await openBreaker();
    await p.h.advanceTo(openUntil);
    const [probe] = p.openTo(A);
    expect(p.openTo(A)).toHaveLength(1);
    await p.answer([probe!], 503);
    // The second opening: 2 s backed off, drawn as 1 000 + r × 1 000 with the protection's second draw.
    const reopenUntil = Math.ceil(openUntil + 1_000 + draw(p.first.seed, 2) * 1_000);
    expect(p.first.events.at(-1)).toEqual({
      event: 'breaker_open', tenantId: 'default', target: A, openUntil: reopenUntil, reopenCount: 1, cause: 'probe_failed',
    });
    expect(await p.storedBreaker(A)).toMatchObject({ state: 'OPEN', openUntil: reopenUntil, reopenCount: 1 });
    expect((await p.h.store.admin.getTarget(p.ref(A), openUntil))?.heldUntil).toBe(reopenUntil);
    // The failed probe keeps its place (a ms ahead of it): it is the next period's probe too, on its third attempt.
    expect(await p.h.task(probe!.task)).toMatchObject({ status: 'PENDING', attemptNumber: 2, nextAttemptAt: (probe!.task.nextAttemptAt as number) - 1 });

    await p.h.advanceTo(reopenUntil - 1);
    expect(p.openTo(A)).toEqual([]);
    await p.h.advanceTo(reopenUntil);
    expect(p.openTo(A).map((d) => [d.task.taskId, d.attemptNumber])).toEqual([[probe!.task.taskId, 3]]);
    // An outcome of an attempt that began before an opening counts for nothing: this one began in the period.
    await p.answer(p.openTo(A), 200);
    expect(await p.storedBreaker(A)).toMatchObject({ state: 'HALF_OPEN', halfOpen: { probeSuccesses: 1 } });
  });

  it('a failed probe of a target that answered lately re-opens it for the first period again: it fails a share of its calls, it is not down', async () => {
    p = await ProtectedHarness.open({ defaults: BREAKER });
    await p.insert(...Array.from({ length: 5 }, () => p.task(`${A}/hook`)));
    await p.answer(p.openTo(A).slice(0, 1), 200);
    await p.answer(p.openTo(A).slice(0, 3), 500);
    const openUntil = firstOpenUntil(p.first.seed);
    expect(await p.storedBreaker(A)).toMatchObject({ state: 'OPEN', openUntil, reopenCount: 0 });
    await p.answer(p.openTo(A), 500);
    let until = openUntil;
    for (let round = 2; round <= 4; round++) {
      await p.h.advanceTo(until);
      expect(p.openTo(A)).toHaveLength(1);
      await p.answer(p.openTo(A), 503);
      // Not backed off (1 s, jittered to 500 + r × 500 with the next draw), and not counted as a re-opening.
      until = Math.ceil(until + 500 + draw(p.first.seed, round) * 500);
      expect(await p.storedBreaker(A)).toMatchObject({ state: 'OPEN', openUntil: until, reopenCount: 0 });
    }
  });

  it('an opening by one instance holds the target for the other, which then counts the probes it makes', async () => {
    p = await ProtectedHarness.open({ defaults: BREAKER, instances: 2 });
    const [one, two] = p.instances;
    await p.insert(...Array.from({ length: 3 }, () => p.task(`${A}/hook`)));
    expect(one!.dispatcher.open).toHaveLength(3);
    await p.answer(one!.dispatcher.open, 500);
    const openUntil = firstOpenUntil(one!.seed);
    expect(one!.events.map((e) => e.event)).toEqual(['breaker_open']);

    // Work enqueued now (anywhere) waits; neither instance claims it.
    const later = await p.insert(...Array.from({ length: 4 }, () => p.task(`${A}/hook`)), p.task(`${B}/hook`));
    expect(two!.dispatcher.open.map((d) => d.task.targetKey).concat(one!.dispatcher.open.map((d) => d.task.targetKey))).toEqual([B]);
    await p.answer(p.openTo(B), 200);
    await p.h.advanceTo(openUntil - 1);
    expect(p.openTo(A)).toEqual([]);
    for (const task of later.slice(0, 4)) expect(await p.h.task(task)).toMatchObject({ status: 'PENDING', attemptNumber: 0 });

    // Two probes in all, one at a time, whichever instance claims them; their successes close the breaker from either.
    await p.h.advanceTo(openUntil);
    expect(p.openTo(A)).toHaveLength(1);
    await p.answer(p.openTo(A), 200);
    expect(p.openTo(A)).toHaveLength(1);
    await p.answer(p.openTo(A), 200);
    expect(await p.storedBreaker(A)).toMatchObject({ state: 'CLOSED' });
    expect(p.events.filter((e) => e.event === 'breaker_closed')).toHaveLength(1);
    expect(p.openTo(A)).toHaveLength(5);
  });

  it('a task whose budget runs out while its target is held ends EXHAUSTED (budget), naming the breaker and the target', async () => {
    p = await ProtectedHarness.open({ defaults: BREAKER });
    const policy = { maxAttempts: 10, backoffType: 'FIXED', initialDelayMs: 100, multiplier: 1, maxDelayMs: 100, jitterType: 'NONE', totalBudgetMs: 400 } as const;
    const tasks = await p.insert(...Array.from({ length: 3 }, () => p.task(`${A}/hook`, { policy })));
    await p.answer(p.openTo(A), 500);
    const openUntil = firstOpenUntil(p.first.seed);
    expect(openUntil).toBeGreaterThan(T0 + 400);

    await p.h.advanceTo(openUntil);
    // Claimed when the hold ended, and ended there without a call: the budget ran out while the breaker held them.
    expect(p.dispatches).toHaveLength(3);
    for (const task of tasks) {
      expect(await p.h.task(task)).toMatchObject({
        status: 'EXHAUSTED',
        attemptNumber: 1,
        deadLetterReason: 'budget',
        lastError: `budget ran out while ${A} was held by its circuit breaker`,
      });
    }
  });

  it('a 400 opens nothing: a permanent answer says nothing about the downstream', async () => {
    p = await ProtectedHarness.open({ defaults: BREAKER });
    await p.insert(...Array.from({ length: 5 }, () => p.task(`${A}/hook`)));
    await p.answer(p.openTo(A), 400);
    expect(p.events).toEqual([]);
    expect(await p.storedBreaker(A)).toBeUndefined();
  });
});
