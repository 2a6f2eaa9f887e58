import { describe, expect, it } from 'vitest';
import { applyVerdict } from '../src/engine/apply-verdict.js';
import type { AttemptCompletion } from '../src/store/store.js';
import { T0, finalOutcome, makeAttempt, makeTask, retryOutcome } from './fixtures/tasks.js';

/** A failed attempt of a fresh task whose backoff made the retry due at T0 + 1,000. */
function retryCompletion(): AttemptCompletion {
  const task = makeTask();
  return { tenantId: task.tenantId, taskId: task.taskId, fencingToken: task.fencingToken, attempt: makeAttempt(task), next: retryOutcome(task, T0 + 1_000) };
}

describe("applyVerdict: protection's verdict on a decided completion", () => {
  it('moves a retry the retry budget delayed, and logs why with the time its backoff said', () => {
    const completion = retryCompletion();
    applyVerdict(completion, { retryAt: T0 + 2_499.2, delayedBy: 'retry_budget' });
    expect(completion.next.nextAttemptAt).toBe(T0 + 2_500);
    expect(completion.attempt).toMatchObject({ nextAttemptAt: T0 + 2_500, delayedBy: 'retry_budget', backoffAt: T0 + 1_000 });
  });

  it("moves a retry a breaker holds a ms earlier and logs no delay: it keeps its place, it is not delayed", () => {
    const completion = retryCompletion();
    applyVerdict(completion, { retryAt: T0 + 999 });
    expect(completion.attempt).toMatchObject({ nextAttemptAt: T0 + 999, delayedBy: null, backoffAt: null });
  });

  it('logs no delay for a reason whose retryAt is not later after all, nor for a move later that names none', () => {
    const same = retryCompletion();
    applyVerdict(same, { retryAt: T0 + 1_000, delayedBy: 'retry_budget' });
    expect(same.attempt).toMatchObject({ nextAttemptAt: T0 + 1_000, delayedBy: null, backoffAt: null });
    const earlier = retryCompletion();
    applyVerdict(earlier, { retryAt: T0 + 500, delayedBy: 'retry_budget' });
    expect(earlier.attempt).toMatchObject({ nextAttemptAt: T0 + 500, delayedBy: null, backoffAt: null });
    const unnamed = retryCompletion();
    applyVerdict(unnamed, { retryAt: T0 + 3_000 });
    expect(unnamed.attempt).toMatchObject({ nextAttemptAt: T0 + 3_000, delayedBy: null, backoffAt: null });
  });

  it('leaves a completion that is no retry as the engine decided it', () => {
    const task = makeTask();
    const attempt = makeAttempt(task, { outcome: 'succeeded', responseStatus: 200, nextAttemptAt: null });
    const completion: AttemptCompletion = { tenantId: task.tenantId, taskId: task.taskId, fencingToken: 0, attempt, next: finalOutcome(task, 'SUCCEEDED') };
    applyVerdict(completion, { retryAt: T0 + 2_500, delayedBy: 'retry_budget' });
    expect(completion.attempt).toEqual(makeAttempt(task, { outcome: 'succeeded', responseStatus: 200, nextAttemptAt: null }));
    expect(completion.next.nextAttemptAt).toBeNull();
  });
});
