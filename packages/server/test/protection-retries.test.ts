import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../src/service/logger.js';
import { protectionEventLogger } from '../src/service/protection-log-lines.js';
import { T0 } from './fixtures/tasks.js';
import { draw, FAST, only, ProtectedHarness } from './protection-harness.js';

// The retry budget (with its pacer) and retry-storm detection, on the engine harness: what retries may add to a
// target's load, and what happens when they surge while calls fail.

const A = 'https://a.example';

let p: ProtectedHarness;
afterEach(async () => {
  await p.close();
});

describe('the retry budget', () => {
  it('lets the retries it has budget for go at their time, and spreads the rest at its floor rate; first attempts always go', async () => {
    // No ratio: only the floor, 2 retries per second, over a 1 s window (a reserve of 2).
    p = await ProtectedHarness.open({ defaults: only({ retryBudget: { enabled: true, retryRatio: 0, minRetriesPerSecond: 2, windowMs: 1_000 } }) });
    const tasks = await p.insert(...Array.from({ length: 6 }, () => p.task(`${A}/hook`)));
    expect(p.openTo(A)).toHaveLength(6);
    await p.answer(p.openTo(A), 500);

    const due = [T0 + 100, T0 + 100, T0 + 100, T0 + 600, T0 + 1_100, T0 + 1_600];
    const stored = await Promise.all(tasks.map((t) => p.h.task(t)));
    expect(stored.map((t) => t.nextAttemptAt).sort()).toEqual(due);
    // The attempt log says the same as the task.
    const logged = await Promise.all(tasks.map(async (t) => (await p.h.attempts(t))[0]));
    expect(logged.map((a) => a?.nextAttemptAt).sort()).toEqual(due);
    // And why: the retries the pacer moved past their backoff (T0 + 100) say so, with the time it said. The budget's
    // two, and the one whose pacer slot was its own due time, were not delayed: null.
    const why = logged.map((a) => [a?.nextAttemptAt, a?.delayedBy, a?.backoffAt]).sort((x, y) => Number(x[0]) - Number(y[0]));
    expect(why).toEqual([
      [T0 + 100, null, null],
      [T0 + 100, null, null],
      [T0 + 100, null, null],
      [T0 + 600, 'retry_budget', T0 + 100],
      [T0 + 1_100, 'retry_budget', T0 + 100],
      [T0 + 1_600, 'retry_budget', T0 + 100],
    ]);

    await p.h.advanceTo(T0 + 1_600);
    expect(p.dispatches.slice(6).map((d) => [d.attemptNumber, d.at])).toEqual(
      [T0 + 100, T0 + 100, T0 + 100, T0 + 600, T0 + 1_100, T0 + 1_600].map((at) => [2, at]),
    );
    // New first attempts are never held back by the budget.
    await p.insert(p.task(`${A}/hook`), p.task(`${A}/hook`));
    expect(p.openTo(A).filter((d) => d.attemptNumber === 1)).toHaveLength(2);
  });

  it('earns retryRatio of a retry with each first attempt', async () => {
    p = await ProtectedHarness.open({
      defaults: only({ retryBudget: { enabled: true, retryRatio: 0.5, minRetriesPerSecond: 0, windowMs: 10_000 } }),
      engine: { concurrency: 16, claimBatchSize: 16 },
    });
    await p.insert(...Array.from({ length: 10 }, () => p.task(`${A}/hook`)));
    await p.answer(p.openTo(A), 500);
    // Ten first attempts earn five retries; with no floor, the others wait a window each.
    const due = (await Promise.all(p.dispatches.map((d) => p.h.task(d.task)))).map((t) => t.nextAttemptAt).sort();
    expect(due).toEqual([...Array(6).fill(T0 + 100), T0 + 10_100, T0 + 20_100, T0 + 30_100, T0 + 40_100]);
  });
});

describe('retry-storm detection', () => {
  // A breaker that its own counts would not open: only the storm does.
  const STORM = only({
    breaker: { enabled: true, consecutiveFailures: 1_000, failureRateThreshold: 1, minimumCalls: 1_000, openDurationMs: 1_000, maxOpenDurationMs: 60_000 },
    stormDetection: { enabled: true, riseFactor: 5, minRetriesPerSecond: 5, maxSuccessRatio: 0.5, baselineMs: 10_000 },
  });

  it('a sharp rise in retries with few successes opens the breaker and reports one retry_storm', async () => {
    p = await ProtectedHarness.open({ defaults: STORM });
    await p.insert(...Array.from({ length: 6 }, () => p.task(`${A}/hook`, { policy: { ...FAST, maxAttempts: 20 } })));
    // Every call fails; each task retries every 100 ms: 54 retries in the first second, nothing succeeding.
    for (let at = T0; at < T0 + 1_000; at += 100) {
      await p.h.advanceTo(at);
      await p.answer(p.openTo(A), 500);
    }
    expect(p.events).toEqual([]);
    // The first call of the next second judges the one before.
    await p.h.advanceTo(T0 + 1_000);
    const openUntil = Math.ceil(T0 + 1_000 + 500 + draw(p.first.seed, 1) * 500);
    expect(p.first.events).toEqual([
      { event: 'retry_storm', tenantId: 'default', target: A, retriesPerSecond: 54, successRatio: 0 },
      { event: 'breaker_open', tenantId: 'default', target: A, openUntil, reopenCount: 0, cause: 'retry_storm' },
    ]);
    expect((await p.h.store.admin.getTarget(p.ref(A), T0 + 1_000))?.heldUntil).toBe(openUntil);
    // Calls already out when it opened change nothing, and no second event follows.
    await p.answer(p.openTo(A), 500);
    await p.h.advanceTo(openUntil - 1);
    expect(p.openTo(A)).toEqual([]);
    expect(p.first.events).toHaveLength(2);
  });

  it('writes the warn line an alert matches', () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const log = protectionEventLogger(createLogger('info', sink), () => T0);
    log({ event: 'retry_storm', tenantId: 'default', target: A, retriesPerSecond: 54, successRatio: 0 });
    log({ event: 'breaker_closed', tenantId: 'default', target: A, cause: 'operator' });
    expect(lines[0]).toMatchObject({ level: 40, event: 'retry_storm', tenantId: 'default', target: A, retriesPerSecond: 54, successRatio: 0 });
    expect(lines[1]).toMatchObject({ level: 30, event: 'breaker_closed', target: A, cause: 'operator' });
  });
});
