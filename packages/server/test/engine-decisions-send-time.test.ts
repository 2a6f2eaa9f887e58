import { afterEach, describe, expect, it } from 'vitest';
import type { AttemptProtection } from '../src/engine/attempt-protection.js';
import type { RetryTask } from '../src/domain/task.js';
import type { AttemptCompletion } from '../src/store/store.js';
import { EngineHarness, JITTERED_POLICY } from './engine-harness.js';

// Per-target protection counts an attempt's send when the engine says it is starting, and its answer by the attempt's
// start time: the capacity probe matches the two to tell which of its samples an answer belongs to. An attempt sent at
// once must start at the time its send was counted, however long starting a batch of them takes.

let h: EngineHarness;
afterEach(async () => {
  await h.close();
});

/** A protection that lets every send go at once, takes 1 ms of the clock to do so, and records both times. */
function timingProtection(clock: () => EngineHarness['clock']) {
  const countedAt = new Map<string, number>();
  const startedAt = new Map<string, number>();
  const protection: AttemptProtection = {
    attemptStarting(task: RetryTask, now: number) {
      countedAt.set(task.taskId, now);
      // Starting an attempt costs time: the next one in the same batch starts later.
      clock().tick(1);
      return undefined;
    },
    attemptEnded(task: RetryTask, _result, completion: AttemptCompletion) {
      startedAt.set(task.taskId, completion.attempt?.startedAt ?? Number.NaN);
      return undefined;
    },
    endedWithoutAttempt: () => undefined,
    limitsInFlight: () => false,
    admitsHandOff: () => true,
    signingSecrets: () => undefined,
  };
  return { protection, countedAt, startedAt };
}

describe('the time an attempt starts', () => {
  it('is the time its protection counted its send, for every attempt of a batch started at once', async () => {
    const t = timingProtection(() => h.clock);
    h = await EngineHarness.open({ start: false, handOff: false, engine: { protection: t.protection } });
    const tasks = [];
    for (let i = 0; i < 5; i++) tasks.push((await h.enqueue({ targetUrl: 'https://a.example/x', method: 'POST', policy: JITTERED_POLICY })).task);
    await h.engine.start();
    await h.settle();
    for (const task of tasks) h.dispatcher.take(task).respond(200);
    await h.settle();
    const counted = tasks.map((task) => t.countedAt.get(task.taskId));
    // Each counted a ms after the one before it (the protection's own cost), and started when it was counted.
    expect(new Set(counted).size).toBe(5);
    expect(tasks.map((task) => t.startedAt.get(task.taskId))).toEqual(counted);
  });
});
