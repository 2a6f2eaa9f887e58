import { afterEach, describe, expect, it } from 'vitest';
import type { RetryTask } from '../src/domain/task.js';
import { EngineHarness, JITTERED_POLICY } from './engine-harness.js';
import { makeTask, T0 } from './fixtures/tasks.js';

// Fair claims, on the engine harness: the engine passes the last target queue its previous claim served as the
// ring cursor (`ClaimOptions.after`) on every claim, those riding with completions included, so targets with due
// work take turns.

let h: EngineHarness;
afterEach(async () => {
  await h.close();
});

/** `n` tasks for `origin` due at `dueAt` (default now), inline policy (no policy read delays their launch). */
const tasksFor = (origin: string, n: number, dueAt = T0): RetryTask[] =>
  Array.from({ length: n }, () => makeTask({ targetUrl: `${origin}/x`, policy: JITTERED_POLICY, policyId: null, nextAttemptAt: dueAt }));

/** The target of each dispatch, in order. */
const targetsDispatched = (): string[] => h.dispatcher.dispatches.map((d) => d.task.targetKey);

describe('fair claims', () => {
  it('alternates between two targets with due work, one claim at a time, also when claims ride with completions', async () => {
    h = await EngineHarness.open({ start: false, handOff: false, engine: { concurrency: 1, claimBatchSize: 1 } });
    // A's backlog is older: with the earliest due task winning, all of A would go first.
    await h.insert(...tasksFor('https://a.example', 4, T0 - 60_000));
    await h.insert(...tasksFor('https://b.example', 4));
    await h.engine.start();
    await h.settle();
    for (let i = 0; i < 8; i++) {
      const [open] = h.dispatcher.open;
      open!.respond(200);
      await h.settle();
    }
    expect(targetsDispatched()).toEqual(Array(4).fill(['https://a.example', 'https://b.example']).flat());
    // The first claim went alone; every later one rode with the completion that freed its slot.
    expect(h.faulty.calls.get('claimDue')).toBe(1);
    expect(h.faulty.calls.get('completeAndClaim')).toBe(8);
  });

  it('with more targets than slots, successive claims go round all of them', async () => {
    h = await EngineHarness.open({ start: false, handOff: false, engine: { concurrency: 6, claimBatchSize: 2 } });
    await h.insert(...tasksFor('https://a.example', 4));
    await h.insert(...tasksFor('https://b.example', 4));
    await h.insert(...tasksFor('https://c.example', 4));
    await h.engine.start();
    await h.settle();
    // Three claims of two: {a, b}, then {c, a}, then {b, c}; without the cursor c would wait for a and b to drain.
    expect(h.faulty.calls.get('claimDue')).toBe(3);
    expect(targetsDispatched()).toEqual(Array(2).fill(['https://a.example', 'https://b.example', 'https://c.example']).flat());
  });
});
