import { describe, expect, it } from 'vitest';
import type { Attempt } from '@retryd/client';
import { delayNote, nextAttemptText } from '../src/cli/tasks-command.js';

const T0 = Date.UTC(2026, 0, 1);

/** An attempt as the API shows it: a 503 at T0 that took 100 ms, its retry due at T0 + 1,600. */
function attempt(overrides: Partial<Attempt> = {}): Attempt {
  return {
    attemptNumber: 1,
    startedAt: T0,
    durationMs: 100,
    responseStatus: 503,
    errorMessage: 'HTTP 503',
    outcome: 'retry_scheduled',
    responseBodySnippet: null,
    nextAttemptAt: T0 + 1_600,
    delayedBy: null,
    backoffAt: null,
    ...overrides,
  };
}

describe("retryd tasks get: a retry the target's retry budget delayed", () => {
  const delayed = attempt({ delayedBy: 'retry_budget', backoffAt: T0 + 200 });

  it('notes under the attempt table when the retry goes, when its backoff said, and why', () => {
    expect(delayNote(delayed)).toBe(
      "attempt 1: next attempt at 2026-01-01T00:00:01.600Z, 1.4s after its backoff said (2026-01-01T00:00:00.200Z): delayed by the target's retry budget",
    );
    expect(delayNote(attempt())).toBeNull();
  });

  it("says it beside a PENDING task's next attempt, unless the task was moved since", () => {
    expect(nextAttemptText({ nextAttemptAt: T0 + 1_600 }, delayed)).toBe(
      "2026-01-01T00:00:01.600Z (backoff said 2026-01-01T00:00:00.200Z; delayed by the target's retry budget)",
    );
    // Run now or rescheduled: the delay no longer says when it goes.
    expect(nextAttemptText({ nextAttemptAt: T0 + 5_000 }, delayed)).toBe('2026-01-01T00:00:05.000Z');
    expect(nextAttemptText({ nextAttemptAt: T0 + 1_600 }, attempt())).toBe('2026-01-01T00:00:01.600Z');
    expect(nextAttemptText({ nextAttemptAt: T0 }, undefined)).toBe('2026-01-01T00:00:00.000Z');
  });
});
