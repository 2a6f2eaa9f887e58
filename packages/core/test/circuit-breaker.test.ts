import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CIRCUIT_BREAKER_DEFAULTS, type CircuitBreakerOptions } from '../src/breaker/breaker-options.js';
import type { CircuitBreakerSnapshot } from '../src/breaker/breaker-snapshot.js';
import { CircuitState } from '../src/breaker/breaker-state.js';
import { BrokenCircuitError } from '../src/breaker/broken-circuit-error.js';
import { CircuitBreaker } from '../src/breaker/circuit-breaker.js';
import { InvalidSnapshotError } from '../src/validation/invalid-snapshot-error.js';
import { ManualClock } from '../src/testing/manual-clock.js';
import { sequenceRandom } from '../src/testing/seeded-random.js';

const { CLOSED, OPEN, HALF_OPEN } = CircuitState;

function setup(options: CircuitBreakerOptions = {}, start = 0) {
  const clock = new ManualClock(start);
  const breaker = new CircuitBreaker({ clock, ...options });
  const changes: string[] = [];
  breaker.onStateChange(({ from, to, at }) => changes.push(`${from}->${to}@${at}`));
  return { clock, breaker, changes };
}

/** Makes `n` admitted calls that end with `outcome`. */
function calls(breaker: CircuitBreaker, n: number, outcome: 'onSuccess' | 'onFailure' | 'release') {
  for (let i = 0; i < n; i++) {
    expect(breaker.tryAcquire()).toBe(true);
    breaker[outcome]();
  }
}

function errorOf(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}

const roundTrip = (b: CircuitBreaker, options: CircuitBreakerOptions) =>
  CircuitBreaker.fromJSON(JSON.parse(JSON.stringify(b.toJSON())), options);

describe('CLOSED → OPEN', () => {
  it('opens after consecutiveFailures failures in a row (default 5)', () => {
    const { breaker, changes } = setup();
    calls(breaker, 4, 'onFailure');
    expect(breaker.state).toBe(CLOSED);
    calls(breaker, 1, 'onFailure');
    expect(breaker.state).toBe(OPEN);
    expect(breaker.tryAcquire()).toBe(false);
    expect(breaker.retryAfterMs()).toBe(30_000);
    expect(changes).toEqual(['CLOSED->OPEN@0']);
  });

  it('starts the streak again after a success, a release does not', () => {
    const { breaker } = setup({ consecutiveFailures: 3 });
    calls(breaker, 2, 'onFailure');
    calls(breaker, 1, 'onSuccess');
    calls(breaker, 2, 'onFailure');
    calls(breaker, 1, 'release');
    expect(breaker.state).toBe(CLOSED);
    calls(breaker, 1, 'onFailure');
    expect(breaker.state).toBe(OPEN);
  });

  it('without failureRateThreshold only the consecutive rule applies', () => {
    const { breaker } = setup({ consecutiveFailures: 3, minimumCalls: 1 });
    for (let i = 0; i < 50; i++) calls(breaker, 1, i % 3 === 2 ? 'onSuccess' : 'onFailure');
    expect(breaker.state).toBe(CLOSED);
  });

  it('opens when the failure rate over the window reaches the threshold with minimumCalls calls', () => {
    const { breaker } = setup({ failureRateThreshold: 0.5, minimumCalls: 10, consecutiveFailures: 100 });
    for (let i = 0; i < 9; i++) calls(breaker, 1, i % 2 === 0 ? 'onSuccess' : 'onFailure');
    expect(breaker.state).toBe(CLOSED); // 4 of 9
    calls(breaker, 1, 'onFailure'); // 5 of 10 = 0.5
    expect(breaker.state).toBe(OPEN);
  });

  it('does not open on the failure rate below minimumCalls', () => {
    const { breaker } = setup({ failureRateThreshold: 0.1, minimumCalls: 10, consecutiveFailures: 100 });
    calls(breaker, 9, 'onFailure');
    expect(breaker.state).toBe(CLOSED);
    calls(breaker, 1, 'onFailure');
    expect(breaker.state).toBe(OPEN);
  });

  it('forgets failures that slid out of the window (10 slices of windowMs / 10)', () => {
    const options = { failureRateThreshold: 0.5, minimumCalls: 4, consecutiveFailures: 100, windowMs: 10_000 };
    const inside = setup(options, 999);
    calls(inside.breaker, 3, 'onFailure');
    inside.clock.tick(9_000); // t = 9_999: slice 9, the slice-0 failures still count
    calls(inside.breaker, 1, 'onFailure');
    expect(inside.breaker.state).toBe(OPEN);

    const outside = setup(options, 999);
    calls(outside.breaker, 3, 'onFailure');
    outside.clock.tick(9_001); // t = 10_000: slice 10, slice 0 has slid out after 9_001 ms
    calls(outside.breaker, 3, 'onFailure');
    expect(outside.breaker.state).toBe(CLOSED);
    calls(outside.breaker, 1, 'onFailure');
    expect(outside.breaker.state).toBe(OPEN);
  });
});

describe('OPEN → HALF_OPEN → CLOSED or OPEN', () => {
  it('turns HALF_OPEN lazily once the open duration has passed', () => {
    const { breaker, clock, changes } = setup({ consecutiveFailures: 1, openDurationMs: 1_000 });
    calls(breaker, 1, 'onFailure');
    clock.tick(999);
    expect(breaker.state).toBe(OPEN);
    expect(breaker.retryAfterMs()).toBe(1);
    clock.tick(500);
    expect(changes).toEqual(['CLOSED->OPEN@0']);
    expect(breaker.state).toBe(HALF_OPEN);
    expect(breaker.retryAfterMs()).toBe(0);
    expect(changes).toEqual(['CLOSED->OPEN@0', 'OPEN->HALF_OPEN@1499']);
  });

  it('admits exactly halfOpenProbes probes and closes after as many successes', () => {
    const { breaker, clock, changes } = setup({ consecutiveFailures: 1, openDurationMs: 1_000, halfOpenProbes: 3 });
    calls(breaker, 1, 'onFailure');
    clock.tick(1_000);
    expect([1, 2, 3, 4].map(() => breaker.tryAcquire())).toEqual([true, true, true, false]);
    expect(breaker.openError().state).toBe(HALF_OPEN);
    breaker.onSuccess();
    expect(breaker.tryAcquire()).toBe(false); // a success keeps its slot: 3 probes per half-open period
    breaker.onSuccess();
    expect(breaker.state).toBe(HALF_OPEN);
    breaker.onSuccess();
    expect(breaker.state).toBe(CLOSED);
    expect(changes).toEqual(['CLOSED->OPEN@0', 'OPEN->HALF_OPEN@1000', 'HALF_OPEN->CLOSED@1000']);
    expect(breaker.toJSON()).toMatchObject({ openedAt: null, openUntil: null, reopenCount: 0, failureStreak: 0 });
  });

  it('re-opens on a probe failure for a backed-off duration, capped by maxOpenDurationMs', () => {
    const { breaker, clock } = setup({
      consecutiveFailures: 1, openDurationMs: 1_000, openBackoffMultiplier: 2, maxOpenDurationMs: 5_000, halfOpenProbes: 2,
    });
    calls(breaker, 1, 'onFailure');
    const durations = [breaker.retryAfterMs()];
    for (let i = 0; i < 4; i++) {
      clock.tick(durations[durations.length - 1] as number);
      calls(breaker, 1, 'onSuccess'); // one probe success is not enough to close with 2 probes
      calls(breaker, 1, 'onFailure');
      expect(breaker.state).toBe(OPEN);
      durations.push(breaker.retryAfterMs());
    }
    expect(durations).toEqual([1_000, 2_000, 4_000, 5_000, 5_000]);
    expect(breaker.toJSON().reopenCount).toBe(4);
  });

  it('re-opens for the same period as before on a probe failure told not to back off', () => {
    const { breaker, clock } = setup({ consecutiveFailures: 1, openDurationMs: 1_000, openBackoffMultiplier: 2 });
    calls(breaker, 1, 'onFailure');
    clock.tick(1_000);
    breaker.tryAcquire();
    breaker.onFailure(); // backed off: 2,000
    expect(breaker.retryAfterMs()).toBe(2_000);
    for (let i = 0; i < 3; i++) {
      clock.tick(breaker.retryAfterMs());
      expect(breaker.tryAcquire()).toBe(true);
      breaker.onFailure({ backOff: false });
      expect(breaker.state).toBe(OPEN);
      expect(breaker.retryAfterMs()).toBe(2_000);
    }
    expect(breaker.toJSON().reopenCount).toBe(1);
    // A closed breaker counts it as any failure.
    breaker.forceClose();
    breaker.onFailure({ backOff: false });
    expect(breaker.state).toBe(OPEN);
  });

  it('caps the backoff at 10 × openDurationMs by default', () => {
    const { breaker, clock } = setup({ consecutiveFailures: 1, openDurationMs: 1_000, openBackoffMultiplier: 3 });
    calls(breaker, 1, 'onFailure');
    const durations: number[] = [];
    for (let i = 0; i < 3; i++) {
      clock.tick(breaker.retryAfterMs());
      calls(breaker, 1, 'onFailure');
      durations.push(breaker.retryAfterMs());
    }
    expect(durations).toEqual([3_000, 9_000, 10_000]);
  });

  it('starts the backoff again from openDurationMs after a close', () => {
    const { breaker, clock } = setup({ consecutiveFailures: 1, openDurationMs: 1_000, openBackoffMultiplier: 2 });
    calls(breaker, 1, 'onFailure');
    clock.tick(1_000);
    calls(breaker, 1, 'onFailure');
    expect(breaker.retryAfterMs()).toBe(2_000);
    clock.tick(2_000);
    calls(breaker, 1, 'onSuccess');
    expect(breaker.state).toBe(CLOSED);
    calls(breaker, 1, 'onFailure');
    expect(breaker.retryAfterMs()).toBe(1_000);
    clock.tick(1_000);
    calls(breaker, 1, 'onFailure');
    expect(breaker.retryAfterMs()).toBe(2_000);
  });

  it('release() frees a probe slot without counting', () => {
    const { breaker, clock } = setup({ consecutiveFailures: 1, openDurationMs: 1_000 });
    calls(breaker, 1, 'onFailure');
    clock.tick(1_000);
    expect(breaker.tryAcquire()).toBe(true);
    expect(breaker.tryAcquire()).toBe(false);
    breaker.release();
    expect(breaker.state).toBe(HALF_OPEN);
    expect(breaker.tryAcquire()).toBe(true);
    breaker.onSuccess();
    expect(breaker.state).toBe(CLOSED);
  });

  it('ignores outcomes of calls admitted before it opened', () => {
    const { breaker, clock, changes } = setup({ consecutiveFailures: 1, openDurationMs: 1_000 });
    expect(breaker.tryAcquire()).toBe(true); // a slow call, still running when the breaker opens
    calls(breaker, 1, 'onFailure');
    breaker.onSuccess();
    expect(breaker.state).toBe(OPEN);
    clock.tick(1_000);
    expect(breaker.state).toBe(HALF_OPEN);
    breaker.onFailure(); // no probe in flight: stale
    breaker.onSuccess();
    expect(breaker.state).toBe(HALF_OPEN);
    expect(changes).toHaveLength(2);
  });
});

describe('open jitter', () => {
  it("with openJitter 'EQUAL' each open period is d/2 + uniform(0, d/2) of the backed-off duration d", () => {
    const { breaker, clock } = setup({
      consecutiveFailures: 1, openDurationMs: 1_000, openBackoffMultiplier: 2, maxOpenDurationMs: 3_000,
      openJitter: 'EQUAL', random: sequenceRandom(0.5, 0, 0.999),
    });
    calls(breaker, 1, 'onFailure');
    expect(breaker.toJSON().openUntil).toBe(750); // 500 + 0.5 × 500
    clock.tick(750);
    calls(breaker, 1, 'onFailure');
    expect(breaker.toJSON()).toMatchObject({ openedAt: 750, openUntil: 750 + 1_000 }); // 2 000: 1 000 + 0 × 1 000
    clock.tick(1_000);
    calls(breaker, 1, 'onFailure');
    expect(breaker.toJSON().openUntil).toBe(1_750 + 1_500 + 0.999 * 1_500); // capped at 3 000, then jittered
  });

  it("draws nothing without openJitter (the default 'NONE')", () => {
    let draws = 0;
    const { breaker } = setup({ consecutiveFailures: 1, openDurationMs: 1_000, random: () => (draws++, 0.5) });
    calls(breaker, 1, 'onFailure');
    expect(breaker.retryAfterMs()).toBe(1_000);
    expect(draws).toBe(0);
  });
});

describe('by hand: forceOpen(), forceClose(), reset()', () => {
  it('forceOpen() opens a CLOSED breaker for the given time, then probes as after any opening', () => {
    const { breaker, clock, changes } = setup({ openDurationMs: 1_000 });
    calls(breaker, 2, 'onFailure');
    breaker.forceOpen(5_000);
    expect(breaker.state).toBe(OPEN);
    expect(breaker.toJSON()).toMatchObject({ openedAt: 0, openUntil: 5_000, failureStreak: 0, reopenCount: 0 });
    clock.tick(5_000);
    calls(breaker, 1, 'onSuccess');
    expect(breaker.state).toBe(CLOSED);
    expect(changes).toEqual(['CLOSED->OPEN@0', 'OPEN->HALF_OPEN@5000', 'HALF_OPEN->CLOSED@5000']);
  });

  it('forceOpen() without a duration opens for the period it would choose next (backed off, jittered)', () => {
    const { breaker, clock } = setup({
      consecutiveFailures: 1, openDurationMs: 1_000, openBackoffMultiplier: 2, openJitter: 'EQUAL', random: sequenceRandom(1 - 2 ** -20, 0),
    });
    calls(breaker, 1, 'onFailure');
    clock.tick(1_000);
    calls(breaker, 1, 'onFailure'); // re-opened once: 2 000, jittered to 1 000 + 0 × 1 000
    expect(breaker.toJSON()).toMatchObject({ reopenCount: 1, openUntil: 2_000 });
    breaker.forceOpen(); // same exponent, drawn again: 1 000 + 0 × 1 000
    expect(breaker.toJSON()).toMatchObject({ reopenCount: 1, openedAt: 1_000, openUntil: 2_000 });
  });

  it('forceOpen() on an OPEN breaker starts a new period without reporting a change; HALF_OPEN → OPEN is reported', () => {
    const { breaker, clock, changes } = setup({ consecutiveFailures: 1, openDurationMs: 1_000, halfOpenProbes: 2 });
    calls(breaker, 1, 'onFailure');
    clock.tick(100);
    breaker.forceOpen(300);
    expect(breaker.toJSON()).toMatchObject({ openedAt: 100, openUntil: 400 });
    clock.tick(300);
    expect(breaker.tryAcquire()).toBe(true); // a probe in flight
    breaker.forceOpen(100);
    clock.tick(100);
    breaker.onFailure(); // its outcome is stale now: no probe was admitted by this opening
    expect(breaker.state).toBe(HALF_OPEN);
    expect(breaker.toJSON()).toMatchObject({ openedAt: 400, openUntil: 500, reopenCount: 0 });
    expect(changes).toEqual(['CLOSED->OPEN@0', 'OPEN->HALF_OPEN@400', 'HALF_OPEN->OPEN@400', 'OPEN->HALF_OPEN@500']);
  });

  it('forceOpen() refuses a duration that is not a finite number >= 0', () => {
    const { breaker } = setup();
    expect(() => breaker.forceOpen(-1)).toThrow(new RangeError('durationMs must be a finite number >= 0, got -1'));
    expect(() => breaker.forceOpen(Number.NaN)).toThrow('durationMs must be a finite number >= 0, got NaN');
    expect(breaker.state).toBe(CLOSED);
  });

  it('forceClose() closes an OPEN or HALF_OPEN breaker and starts its backoff again; a CLOSED one keeps its counts', () => {
    const { breaker, clock, changes } = setup({ consecutiveFailures: 3, openDurationMs: 1_000, openBackoffMultiplier: 2 });
    calls(breaker, 3, 'onFailure');
    clock.tick(1_000);
    calls(breaker, 1, 'onFailure');
    expect(breaker.toJSON().reopenCount).toBe(1);
    breaker.forceClose();
    expect(breaker.state).toBe(CLOSED);
    expect(breaker.toJSON()).toMatchObject({ reopenCount: 0, openedAt: null, openUntil: null });
    calls(breaker, 2, 'onFailure');
    breaker.forceClose();
    expect(breaker.toJSON().failureStreak).toBe(2);
    calls(breaker, 1, 'onFailure');
    expect(breaker.retryAfterMs()).toBe(1_000);
    expect(changes).toEqual(['CLOSED->OPEN@0', 'OPEN->HALF_OPEN@1000', 'HALF_OPEN->OPEN@1000', 'OPEN->CLOSED@1000', 'CLOSED->OPEN@1000']);
  });

  it('reset() clears every count in any state, reporting only a change of state', () => {
    const { breaker, changes } = setup({ consecutiveFailures: 3, failureRateThreshold: 0.5, minimumCalls: 4 });
    calls(breaker, 2, 'onFailure');
    breaker.reset();
    expect(breaker.toJSON()).toMatchObject({ state: CLOSED, failureStreak: 0, reopenCount: 0 });
    expect(breaker.toJSON().window.buckets).toEqual([]);
    calls(breaker, 3, 'onFailure');
    breaker.reset();
    expect(breaker.state).toBe(CLOSED);
    expect(changes).toEqual(['CLOSED->OPEN@0', 'OPEN->CLOSED@0']);
  });

  it('a snapshot taken after a move by hand restores to the same state (what a shared breaker writes)', () => {
    const options = { openDurationMs: 1_000, halfOpenProbes: 2 };
    const { breaker, clock } = setup(options);
    breaker.forceOpen(2_000);
    const restored = CircuitBreaker.fromJSON(JSON.parse(JSON.stringify(breaker.toJSON())), { ...options, clock });
    expect(restored.retryAfterMs()).toBe(2_000);
    clock.tick(2_000);
    expect(restored.state).toBe(HALF_OPEN);
  });
});

describe('openError() and execute()', () => {
  it('openError() names the state and the ms left', () => {
    const { breaker, clock } = setup({ consecutiveFailures: 1 });
    calls(breaker, 1, 'onFailure');
    clock.tick(1_234);
    const error = breaker.openError();
    expect(error).toBeInstanceOf(BrokenCircuitError);
    expect(error).toMatchObject({ name: 'BrokenCircuitError', code: 'CIRCUIT_OPEN', state: OPEN, retryAfterMs: 28_766 });
    expect(error.message).toBe('Circuit is OPEN: calls are refused for another 28766 ms');
    clock.tick(28_766);
    breaker.tryAcquire();
    expect(breaker.openError().message).toBe('Circuit is HALF_OPEN: every probe slot is in use, 0 ms left of the open period');
  });

  it('execute() reports outcomes, releases what isFailure rejects, and refuses without calling fn', async () => {
    const { breaker } = setup({ consecutiveFailures: 1 });
    await expect(breaker.execute(async () => 42)).resolves.toBe(42);
    const badRequest = new Error('400');
    await expect(breaker.execute(() => Promise.reject(badRequest), (e) => e !== badRequest)).rejects.toBe(badRequest);
    expect(breaker.state).toBe(CLOSED);
    const unavailable = new Error('503');
    await expect(breaker.execute(() => Promise.reject(unavailable))).rejects.toBe(unavailable);
    expect(breaker.state).toBe(OPEN);
    const fn = vi.fn(async () => 1);
    await expect(breaker.execute(fn)).rejects.toMatchObject({ code: 'CIRCUIT_OPEN', retryAfterMs: 30_000 });
    expect(fn).not.toHaveBeenCalled();
  });

  it('execute() releases the probe slot when isFailure throws', async () => {
    const { breaker, clock } = setup({ consecutiveFailures: 1, openDurationMs: 10 });
    calls(breaker, 1, 'onFailure');
    clock.tick(10);
    const bug = new TypeError('classifier bug');
    const thrower = () => {
      throw bug;
    };
    await expect(breaker.execute(() => Promise.reject(new Error('x')), thrower)).rejects.toBe(bug);
    expect(breaker.state).toBe(HALF_OPEN);
    expect(breaker.tryAcquire()).toBe(true);
  });
});

describe('onStateChange()', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('reports every change until unsubscribed; a throwing listener stops neither the others nor the breaker', () => {
    const queued: (() => void)[] = [];
    vi.stubGlobal('queueMicrotask', (task: () => void) => queued.push(task));
    const { breaker, clock, changes } = setup({ consecutiveFailures: 1, openDurationMs: 100 });
    const boom = new Error('listener bug');
    breaker.onStateChange(() => {
      throw boom;
    });
    const seen: string[] = [];
    const unsubscribe = breaker.onStateChange((c) => seen.push(c.to));
    calls(breaker, 1, 'onFailure');
    clock.tick(100);
    calls(breaker, 1, 'onSuccess');
    unsubscribe();
    calls(breaker, 1, 'onFailure');
    expect(changes).toEqual(['CLOSED->OPEN@0', 'OPEN->HALF_OPEN@100', 'HALF_OPEN->CLOSED@100', 'CLOSED->OPEN@100']);
    expect(seen).toEqual([OPEN, HALF_OPEN, CLOSED]);
    expect(breaker.state).toBe(OPEN);
    expect(queued).toHaveLength(4);
    expect(() => queued[0]?.()).toThrow(boom);
  });
});

describe('options', () => {
  it.each<[unknown, string]>([
    [{ consecutiveFailures: 0 }, 'consecutiveFailures must be an integer >= 1, got 0'],
    [{ consecutiveFailures: 2.5 }, 'consecutiveFailures must be an integer >= 1, got 2.5'],
    [{ failureRateThreshold: 0 }, 'failureRateThreshold must be a number > 0 and <= 1, got 0'],
    [{ failureRateThreshold: 1.5 }, 'failureRateThreshold must be a number > 0 and <= 1, got 1.5'],
    [{ windowMs: 0 }, 'windowMs must be a finite number > 0, got 0'],
    [{ windowMs: Infinity }, 'windowMs must be a finite number > 0, got Infinity'],
    [{ minimumCalls: 0 }, 'minimumCalls must be an integer >= 1, got 0'],
    [{ openDurationMs: -1 }, 'openDurationMs must be a finite number >= 0, got -1'],
    [{ openBackoffMultiplier: 0.5 }, 'openBackoffMultiplier must be a finite number >= 1, got 0.5'],
    [{ maxOpenDurationMs: 1_000 }, 'maxOpenDurationMs must be a finite number >= openDurationMs (30000), got 1000'],
    [{ halfOpenProbes: '2' }, 'halfOpenProbes must be an integer >= 1, got "2"'],
    [{ clock: {} }, 'clock must be a Clock (an object with a now() method), got {}'],
    [{ openJitter: 'FULL' }, 'openJitter must be one of NONE, EQUAL, got "FULL"'],
    [{ random: 0.5 }, 'random must be a function returning numbers in [0, 1), got 0.5'],
    [
      { failureRate: 0.5 },
      'failureRate is not a CircuitBreaker option (known: consecutiveFailures, failureRateThreshold, windowMs, ' +
        'minimumCalls, openDurationMs, openBackoffMultiplier, maxOpenDurationMs, halfOpenProbes, openJitter, random, clock)',
    ],
    [{ minimumCalls: -1, halfOpenProbes: 0 }, 'minimumCalls must be an integer >= 1, got -1; halfOpenProbes must be an integer >= 1, got 0'],
    [5, 'CircuitBreaker options must be an object, got 5'],
  ])('refuses %j', (options, message) => {
    const error = errorOf(() => new CircuitBreaker(options as CircuitBreakerOptions));
    expect(error).toBeInstanceOf(RangeError);
    expect(error.message).toBe(message);
  });

  it('documents its defaults', () => {
    expect(CIRCUIT_BREAKER_DEFAULTS).toEqual({
      consecutiveFailures: 5, windowMs: 10_000, minimumCalls: 10, openDurationMs: 30_000, openBackoffMultiplier: 1, halfOpenProbes: 1,
      openJitter: 'NONE',
    });
    expect(() => new CircuitBreaker({ openDurationMs: 0, maxOpenDurationMs: 0, failureRateThreshold: 1 })).not.toThrow();
  });
});

describe('toJSON() / fromJSON()', () => {
  const EPOCH = 1_700_000_000_123.456; // a systemClock-like value: epoch-anchored, fractional

  it('round-trips a CLOSED breaker mid-window exactly, and it trips at the same call', () => {
    const options = { failureRateThreshold: 0.5, minimumCalls: 6, consecutiveFailures: 100 };
    const { breaker, clock } = setup(options, EPOCH);
    calls(breaker, 2, 'onFailure');
    clock.tick(3_300);
    calls(breaker, 2, 'onSuccess');
    calls(breaker, 1, 'onFailure');
    const snapshot = breaker.toJSON();
    expect(snapshot).toMatchObject({ v: 1, state: CLOSED, failureStreak: 1, openedAt: null, reopenCount: 0 });
    expect(snapshot.window.buckets.map((b) => [b.calls, b.failures])).toEqual([[2, 2], [3, 1]]);
    const restored = roundTrip(breaker, { clock, ...options });
    expect(restored.toJSON()).toEqual(snapshot);
    calls(breaker, 1, 'onFailure');
    calls(restored, 1, 'onFailure');
    expect([breaker.state, restored.state]).toEqual([OPEN, OPEN]);
    expect(restored.toJSON()).toEqual(breaker.toJSON());
  });

  it('round-trips an OPEN breaker: same wait, same backoff exponent', () => {
    const options = { consecutiveFailures: 1, openDurationMs: 1_000, openBackoffMultiplier: 2 };
    const { breaker, clock } = setup(options, EPOCH);
    calls(breaker, 1, 'onFailure');
    clock.tick(1_000);
    calls(breaker, 1, 'onFailure'); // re-opened for 2 s
    clock.tick(500.25);
    const restored = roundTrip(breaker, { clock, ...options });
    expect(restored.toJSON()).toEqual(breaker.toJSON());
    expect(restored.state).toBe(OPEN);
    expect(restored.retryAfterMs()).toBe(1_500); // ceil of 1_499.75
    clock.tick(1_499.75);
    expect(restored.state).toBe(HALF_OPEN);
    calls(restored, 1, 'onFailure');
    expect(restored.retryAfterMs()).toBe(4_000);
  });

  it('does not restore probes in flight: a restarted process has none', () => {
    const options = { consecutiveFailures: 1, openDurationMs: 0, halfOpenProbes: 3 };
    const { breaker, clock } = setup(options);
    calls(breaker, 1, 'onFailure');
    calls(breaker, 1, 'onSuccess');
    breaker.tryAcquire();
    breaker.tryAcquire();
    expect(breaker.tryAcquire()).toBe(false);
    expect(breaker.toJSON().halfOpen).toEqual({ probesInFlight: 2, probeSuccesses: 1 });
    const restored = roundTrip(breaker, { clock, ...options });
    expect(restored.toJSON().halfOpen).toEqual({ probesInFlight: 0, probeSuccesses: 1 });
    expect([1, 2, 3].map(() => restored.tryAcquire())).toEqual([true, true, false]);
  });

  it('writes an expired OPEN as stored, without events; the restored breaker reads HALF_OPEN', () => {
    const { breaker, clock, changes } = setup({ consecutiveFailures: 1 });
    calls(breaker, 1, 'onFailure');
    clock.tick(60_000);
    expect(breaker.toJSON().state).toBe(OPEN);
    expect(changes).toEqual(['CLOSED->OPEN@0']);
    expect(roundTrip(breaker, { clock }).state).toBe(HALF_OPEN);
  });

  it('drops a window of another length, and caps openUntil at now + maxOpenDurationMs', () => {
    const { breaker, clock } = setup({ consecutiveFailures: 2 });
    calls(breaker, 1, 'onFailure');
    expect(roundTrip(breaker, { clock, windowMs: 5_000 }).toJSON().window).toEqual({ windowMs: 5_000, bucketCount: 10, buckets: [] });
    calls(breaker, 1, 'onFailure');
    const far = { ...breaker.toJSON(), openUntil: 1e12 };
    expect(CircuitBreaker.fromJSON(far, { clock, openDurationMs: 100 }).retryAfterMs()).toBe(1_000);
  });

  const valid = (): CircuitBreakerSnapshot => ({
    v: 1, state: OPEN, failureStreak: 0, openedAt: 10, openUntil: 20, reopenCount: 1,
    halfOpen: { probesInFlight: 0, probeSuccesses: 0 },
    window: { windowMs: 10_000, bucketCount: 10, buckets: [{ index: 3, calls: 2, failures: 1 }] },
  });
  it.each<[string, (s: Record<string, unknown>) => unknown, string, string]>([
    ['null', () => null, 'snapshot', 'snapshot must be an object, got null'],
    ['another version', (s) => ({ ...s, v: 2 }), 'v', 'v must be 1 (the only snapshot version this library reads), got 2'],
    ['an unknown state', (s) => ({ ...s, state: 'AJAR' }), 'state', 'state must be one of CLOSED, OPEN, HALF_OPEN, got "AJAR"'],
    ['a negative streak', (s) => ({ ...s, failureStreak: -1 }), 'failureStreak', 'failureStreak must be an integer >= 0, got -1'],
    ['OPEN without openUntil', (s) => ({ ...s, openUntil: null }), 'openUntil', 'openUntil must be a finite number when state is OPEN, got null'],
    ['openUntil before openedAt', (s) => ({ ...s, openUntil: 5 }), 'openUntil', 'openUntil must be >= openedAt (10), got 5'],
    ['no halfOpen', (s) => ({ ...s, halfOpen: undefined }), 'halfOpen', 'halfOpen must be an object, got undefined'],
    ['a string time', (s) => ({ ...s, state: CLOSED, openedAt: '10' }), 'openedAt', 'openedAt must be a finite number or null, got "10"'],
    ['no window', (s) => ({ ...s, window: [] }), 'window', 'window must be an object, got []'],
    [
      'more failures than calls',
      (s) => ({ ...s, window: { windowMs: 10_000, bucketCount: 10, buckets: [{ index: 3, calls: 1, failures: 2 }] } }),
      'window.buckets[0].failures',
      'window.buckets[0].failures must be <= calls (1), got 2',
    ],
    [
      'slices out of order',
      (s) => ({ ...s, window: { windowMs: 10_000, bucketCount: 10, buckets: [{ index: 3, calls: 1, failures: 0 }, { index: 3, calls: 1, failures: 0 }] } }),
      'window.buckets[1].index',
      "window.buckets[1].index must be an integer > the previous slice's index (3), got 3",
    ],
  ])('fromJSON refuses %s', (_name, mutate, field, message) => {
    expect(() => CircuitBreaker.fromJSON(valid())).not.toThrow();
    const error = errorOf(() => CircuitBreaker.fromJSON(mutate(valid() as unknown as Record<string, unknown>)));
    expect(error).toBeInstanceOf(InvalidSnapshotError);
    expect(error).toMatchObject({ code: 'INVALID_SNAPSHOT', field, message: `Invalid CircuitBreaker snapshot: ${message}` });
  });

  it('a breaker restored at any point behaves exactly like the original (property)', () => {
    const op = fc.oneof(
      fc.constantFrom('success' as const, 'failure' as const, 'release' as const, 'restore' as const),
      fc.integer({ min: 0, max: 1_500 }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200, size: 'large' }), fc.integer({ min: 1, max: 3 }), (ops, halfOpenProbes) => {
        const clock = new ManualClock(EPOCH);
        const options: CircuitBreakerOptions = {
          clock, consecutiveFailures: 3, failureRateThreshold: 0.5, minimumCalls: 4, windowMs: 2_000,
          openDurationMs: 500, openBackoffMultiplier: 2, maxOpenDurationMs: 3_000, halfOpenProbes,
        };
        const original = new CircuitBreaker(options);
        let copy = new CircuitBreaker(options);
        for (const o of ops) {
          if (typeof o === 'number') clock.tick(o);
          else if (o === 'restore') copy = roundTrip(copy, options);
          else {
            const admitted = original.tryAcquire();
            expect(copy.tryAcquire()).toBe(admitted);
            const report = ({ success: 'onSuccess', failure: 'onFailure', release: 'release' } as const)[o];
            if (admitted) {
              original[report]();
              copy[report]();
            }
          }
          expect(copy.state).toBe(original.state);
          expect(copy.retryAfterMs()).toBe(original.retryAfterMs());
          expect(copy.toJSON()).toEqual(original.toJSON());
        }
      }),
      { numRuns: 200 },
    );
  });
});
