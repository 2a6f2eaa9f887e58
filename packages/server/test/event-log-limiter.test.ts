import { ManualClock } from '@retryd/core/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ProtectionEvent } from '../src/protection/protection-events.js';
import { EventLogLimiter, PROTECTION_LOG_WINDOW_MS } from '../src/service/event-log-limiter.js';
import { protectionEventLogger } from '../src/service/protection-log-lines.js';
import { capturedLogger } from './captured-logger.js';
import { T0 } from './fixtures/tasks.js';

// Per-breaker log lines are rate-limited: a new user's trial logged 302 `breaker_open` warnings in 13 minutes for one
// target whose probes kept failing (issue 36).

const A = 'https://a.example';
const B = 'https://b.example';
const WINDOW = PROTECTION_LOG_WINDOW_MS;

let clock: ManualClock;
beforeEach(() => {
  clock = new ManualClock(T0);
});

describe('EventLogLimiter', () => {
  const limiter = (options: { maxSubjects?: number } = {}) =>
    new EventLogLimiter({ now: () => clock.now(), endings: ['closed'], ...options });

  it('writes the first line of a kind, counts the rest of its window, and tells the count on the next written line', () => {
    const l = limiter();
    expect(l.admit('a', 'open')).toBe(0);
    clock.tick(500);
    expect(l.admit('a', 'open')).toBeNull();
    clock.tick(WINDOW - 501);
    expect(l.admit('a', 'open')).toBeNull();
    clock.tick(1);
    expect(l.admit('a', 'open')).toBe(2);
    clock.tick(1);
    expect(l.admit('a', 'open')).toBeNull();
  });

  it('writes an ending whenever the last written line was of another kind, carrying what was not written', () => {
    const l = limiter();
    expect(l.admit('a', 'open')).toBe(0);
    clock.tick(1_000);
    expect(l.admit('a', 'open')).toBeNull();
    expect(l.admit('a', 'closed')).toBe(1);
    clock.tick(1_000);
    // Opened and closed again within the window: counted, the log already reads closed.
    expect(l.admit('a', 'open')).toBeNull();
    expect(l.admit('a', 'closed')).toBeNull();
    clock.tick(WINDOW - 1_000);
    expect(l.admit('a', 'open')).toBe(2);
    expect(l.admit('a', 'closed')).toBe(0);
  });

  it('keeps each subject apart', () => {
    const l = limiter();
    expect(l.admit('a', 'open')).toBe(0);
    expect(l.admit('b', 'open')).toBe(0);
    expect(l.admit('a', 'open')).toBeNull();
    expect(l.admit('b', 'closed')).toBe(0);
  });

  it('forgets a subject seen in nothing for a whole window, and never remembers more than maxSubjects', () => {
    const l = limiter({ maxSubjects: 3 });
    l.admit('a', 'open');
    clock.tick(WINDOW / 2);
    l.admit('b', 'open');
    l.admit('a', 'open');
    clock.tick(WINDOW / 2);
    // b was seen half a window ago, a (counted, not written) too: both kept.
    l.admit('c', 'open');
    expect(l.size).toBe(3);
    clock.tick(WINDOW / 2);
    l.admit('d', 'open');
    expect(l.size).toBe(2);
    l.admit('e', 'open');
    l.admit('f', 'open');
    expect(l.size).toBe(3);
    // c, the least recently seen, went first: its next line is written at once.
    expect(l.admit('c', 'open')).toBe(0);
  });

  it('forgets the targets that stopped flapping, over an hour of re-openings', () => {
    const l = limiter();
    for (let t = 0; t < 3_600_000; t += 500) {
      clock.tick(500);
      l.admit(`target-${Math.floor(t / 120_000)}`, 'open');
    }
    // A new target every two minutes; the ones before the last window are gone.
    expect(l.size).toBeLessThanOrEqual(2);
  });
});

describe('protection event log lines', () => {
  const open = (target: string, reopenCount: number): ProtectionEvent => ({
    event: 'breaker_open',
    tenantId: 'default',
    target,
    openUntil: clock.now() + 500,
    reopenCount,
    cause: reopenCount === 0 ? 'failures' : 'probe_failed',
  });

  it('writes one breaker_open a minute for a breaker re-opening every half second, then says how many were not written', () => {
    const { lines, logger } = capturedLogger();
    const log = protectionEventLogger(logger, () => clock.now());
    // Thirteen minutes of failed probes, as in the trial: 1,560 openings.
    for (let n = 0; n < 13 * 120; n++) {
      log(open(A, n));
      clock.tick(500);
    }
    expect(lines).toHaveLength(13);
    expect(lines[0]).toMatchObject({ level: 40, event: 'breaker_open', tenantId: 'default', target: A, reopenCount: 0, cause: 'failures' });
    expect(lines[0]).not.toHaveProperty('suppressed');
    expect(lines[1]).toMatchObject({ level: 40, event: 'breaker_open', reopenCount: 120, cause: 'probe_failed', suppressed: 119 });
    expect(lines[1]!.msg).toBe(`circuit breaker of ${A} opened (probe_failed; 119 earlier changes not logged)`);

    log({ event: 'breaker_closed', tenantId: 'default', target: A, cause: 'probes_succeeded' });
    expect(lines.at(-1)).toMatchObject({ level: 30, event: 'breaker_closed', target: A, cause: 'probes_succeeded', suppressed: 119 });
  });

  it('writes both lines of a lone opening and closing, and keeps tenants and targets apart', () => {
    const { lines, logger } = capturedLogger();
    const log = protectionEventLogger(logger, () => clock.now());
    log(open(A, 0));
    log(open(B, 0));
    log({ ...open(A, 0), tenantId: 'other' });
    clock.tick(800);
    log({ event: 'breaker_closed', tenantId: 'default', target: A, cause: 'probes_succeeded' });
    expect(lines.map((l) => [l.event, l.tenantId, l.target])).toEqual([
      ['breaker_open', 'default', A],
      ['breaker_open', 'default', B],
      ['breaker_open', 'other', A],
      ['breaker_closed', 'default', A],
    ]);
  });

  it('limits target_held apart from the breaker, and never retry_storm', () => {
    const { lines, logger } = capturedLogger();
    const log = protectionEventLogger(logger, () => clock.now());
    const held = (): ProtectionEvent => ({ event: 'target_held', tenantId: 'default', target: A, until: clock.now() + 1_000, status: 429 });
    const storm: ProtectionEvent = { event: 'retry_storm', tenantId: 'default', target: A, retriesPerSecond: 54, successRatio: 0 };
    log(held());
    log(storm);
    log(open(A, 0));
    for (let n = 0; n < 5; n++) {
      clock.tick(10);
      log(held());
      log(storm);
    }
    // A window after the first hold was written, less than one after the last was seen (one seen in nothing for a
    // whole window is forgotten, its count with it).
    clock.tick(WINDOW - 50);
    log(held());
    expect(lines.map((l) => l.event)).toEqual(['target_held', 'retry_storm', 'breaker_open', ...Array<string>(5).fill('retry_storm'), 'target_held']);
    expect(lines.at(-1)).toMatchObject({ level: 30, suppressed: 5 });
    expect(lines.at(-1)!.msg).toMatch(/by its Retry-After; 5 earlier holds not logged$/);
  });
});
