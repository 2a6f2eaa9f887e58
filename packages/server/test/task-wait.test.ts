import { CircuitState, TaskStatus } from '@retryd/core';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TARGET_SETTINGS } from '../src/protection/target-settings.js';
import { taskWaitOf } from '../src/protection/task-wait.js';
import type { TargetStatus } from '../src/protection/target-control.js';

const NOW = 1_800_000_000_000;
const due = { status: TaskStatus.PENDING, nextAttemptAt: NOW - 5_000 };

function status(overrides: { target?: Partial<TargetStatus['target']>; breaker?: Partial<TargetStatus['breaker']>; allowedRatePerSecond?: number | null } = {}): TargetStatus {
  return {
    target: {
      tenantId: 'default',
      targetKey: 'https://api.example.com',
      heldUntil: null,
      nextDueAt: NOW - 5_000,
      inFlight: 0,
      throttledUntil: null,
      dueTasks: 1,
      ratePerSecond: null,
      burst: null,
      maxInFlight: null,
      ...overrides.target,
    },
    settings: DEFAULT_TARGET_SETTINGS,
    breaker: { state: CircuitState.CLOSED, openUntil: null, reopenCount: 0, ...overrides.breaker },
    allowedRatePerSecond: overrides.allowedRatePerSecond ?? null,
  };
}

describe('taskWaitOf', () => {
  it('says nothing of a task not due yet, in flight or ended', () => {
    expect(taskWaitOf({ status: TaskStatus.PENDING, nextAttemptAt: NOW + 1 }, status(), NOW)).toBeNull();
    expect(taskWaitOf({ status: TaskStatus.IN_FLIGHT, nextAttemptAt: NOW - 1 }, status(), NOW)).toBeNull();
    expect(taskWaitOf({ status: TaskStatus.SUCCEEDED, nextAttemptAt: null }, status(), NOW)).toBeNull();
  });

  it('tells a Retry-After hold from the breaker by which ends later', () => {
    const breaker = { state: CircuitState.OPEN, openUntil: NOW + 1_000 };
    expect(taskWaitOf(due, status({ breaker, target: { heldUntil: NOW + 1_000 } }), NOW)).toMatchObject({ reason: 'breaker_open', until: NOW + 1_000 });
    expect(taskWaitOf(due, status({ breaker, target: { heldUntil: NOW + 30_000 } }), NOW)).toMatchObject({ reason: 'retry_after', until: NOW + 30_000 });
    expect(taskWaitOf(due, status({ target: { heldUntil: NOW + 30_000 } }), NOW)).toMatchObject({ reason: 'retry_after', until: NOW + 30_000 });
    // A hold that has ended as of now is no reason.
    expect(taskWaitOf(due, status({ breaker: { state: CircuitState.OPEN, openUntil: NOW - 1 }, target: { heldUntil: NOW - 1 } }), NOW)).toMatchObject({ reason: 'queued' });
  });

  it('names probing, the rate it is paced at, and its place in line', () => {
    expect(taskWaitOf(due, status({ breaker: { state: CircuitState.HALF_OPEN }, target: { inFlight: 1 } }), NOW)).toEqual({
      reason: 'breaker_probing',
      until: null,
      detail: "target's circuit breaker half-open: only probes go (1 in flight) until one succeeds",
    });
    expect(taskWaitOf(due, status({ target: { throttledUntil: NOW + 100, ratePerSecond: 10 }, allowedRatePerSecond: 2.5 }), NOW)).toEqual({
      reason: 'rate_limit',
      until: NOW + 100,
      detail: `target paced at 2.5/s; next attempt allowed at ${new Date(NOW + 100).toISOString()}`,
    });
    expect(taskWaitOf(due, status({ target: { dueTasks: 1_000 } }), NOW)?.detail).toBe('due; waiting for a free worker; at least 1000 tasks due on its target');
    expect(taskWaitOf(due, status({ target: { maxInFlight: 10, inFlight: 10 } }), NOW)).toMatchObject({ reason: 'slow_start' });
    expect(taskWaitOf(due, undefined, NOW)).toEqual({ reason: 'queued', until: null, detail: 'due; waiting for a free worker' });
  });
});
