import { ManualClock } from '@retryd/core/testing';
import { describe, expect, it } from 'vitest';
import { AdaptiveRate, ADAPTIVE_LIFT_AFTER_MS, increaseOf } from '../src/protection/adaptive-rate.js';
import { gateLimits } from '../src/protection/gate-limits.js';
import { RetryPacer } from '../src/protection/retry-pacer.js';
import { SendPacer } from '../src/protection/send-pacer.js';
import { StormDetector } from '../src/protection/storm-detector.js';
import { PROTECTIONS_OFF } from '../src/protection/target-settings.js';
import { TrafficCounters } from '../src/protection/traffic-counters.js';
import { only } from './protection-harness.js';

// The pure parts of per-target protection, each on its own: the gate's limits, AIMD, the pacer, the traffic counts
// and the storm rule.

describe('gateLimits', () => {
  const limited = only({ rateLimit: { ratePerSecond: 100, burst: 30 }, maxInFlight: 10 });

  it('is the configured limits while nothing trips', () => {
    expect(gateLimits(PROTECTIONS_OFF, null, null)).toEqual({ ratePerSecond: null, burst: null, maxInFlight: null });
    expect(gateLimits(limited, null, null)).toEqual({ ratePerSecond: 100, burst: 30, maxInFlight: 10 });
  });

  it('takes an adaptive rate below the configured one, with a tenth of a second of burst, at most the configured burst', () => {
    expect(gateLimits(limited, 45, null)).toEqual({ ratePerSecond: 45, burst: 5, maxInFlight: 10 });
    expect(gateLimits(PROTECTIONS_OFF, 450, null)).toMatchObject({ ratePerSecond: 450, burst: 45 });
    // The configured limit's own burst (a hundredth of a second of 1,000/s) bounds it.
    expect(gateLimits(only({ rateLimit: { ratePerSecond: 1_000, burst: null } }), 450, null)).toMatchObject({ ratePerSecond: 450, burst: 10 });
    expect(gateLimits(limited, 150, null)).toEqual({ ratePerSecond: 100, burst: 30, maxInFlight: 10 });
    expect(gateLimits(PROTECTIONS_OFF, 3, null)).toEqual({ ratePerSecond: 3, burst: 1, maxInFlight: null });
  });

  it("lets only the breaker's remaining probes be in flight while it is not closed", () => {
    expect(gateLimits(limited, null, 3)).toMatchObject({ maxInFlight: 3 });
    expect(gateLimits(only({ maxInFlight: 2 }), null, 3)).toMatchObject({ maxInFlight: 2 });
  });
});

describe('AdaptiveRate', () => {
  const settings = { enabled: true, decreaseFactor: 0.5, decreaseIntervalMs: 500, increasePerSecond: 10, minRatePerSecond: 4 };

  it('never goes below its floor, and starts from the observed rate when none is configured', () => {
    const rate = new AdaptiveRate();
    expect(rate.throttled(settings, null, 12, 0)).toBe(true);
    expect(rate.allowed).toBe(6);
    expect(rate.throttled(settings, null, 12, 500)).toBe(true);
    expect(rate.allowed).toBe(4);
    expect(rate.throttled(settings, null, 12, 1_000)).toBe(false);
    expect(rate.allowed).toBe(4);
  });

  it('climbs back by a tenth of the configured limit a second unless told otherwise', () => {
    const byDefault = { ...settings, increasePerSecond: null };
    const rate = new AdaptiveRate();
    rate.throttled(byDefault, 500, 0, 0);
    expect(rate.allowed).toBe(250);
    rate.advance(byDefault, 500, 2_000);
    expect(rate.allowed).toBe(350);
    rate.advance(byDefault, 500, 4_000);
    expect(rate.allowed).toBe(450);
    rate.advance(byDefault, 500, 5_000);
    expect(rate.allowed).toBeNull();
    expect(increaseOf(byDefault, null)).toBe(10);
    expect(increaseOf(byDefault, 5)).toBe(1);
  });

  it('without a configured limit, lifts itself only after a quiet spell', () => {
    const rate = new AdaptiveRate();
    rate.throttled(settings, null, 100, 0);
    expect(rate.advance(settings, null, 999)).toBe(false);
    expect(rate.advance(settings, null, 2_500)).toBe(true);
    expect(rate.allowed).toBe(70);
    rate.advance(settings, null, ADAPTIVE_LIFT_AFTER_MS);
    expect(rate.allowed).toBeNull();
  });
});

describe('RetryPacer', () => {
  it('paces refused retries at the floor rate from their own due time, never earlier', () => {
    const clock = new ManualClock(0);
    const pacer = new RetryPacer({ enabled: true, retryRatio: 0, minRetriesPerSecond: 4, windowMs: 250 }, clock);
    expect([100, 100, 100, 100].map((due) => pacer.pace(due))).toEqual([100, 100, 350, 600]);
    expect(pacer.pace(5_000)).toBe(5_000);
  });
});

describe('SendPacer', () => {
  /** Asks for `n` turns at once and returns when each send went, relative to the start. */
  async function sendTimes(clock: ManualClock, pacer: SendPacer, n: number, rate: number | null, maxWaitMs = 1_000): Promise<number[]> {
    const start = clock.now();
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const turn = pacer.turn(rate, maxWaitMs);
      if (turn === undefined) times.push(clock.now() - start);
      else void turn.then(() => times.push(clock.now() - start));
    }
    await clock.runAll();
    return times;
  }

  it("spreads a claim's sends at the target's rate, in claim order, one timer for all", async () => {
    const clock = new ManualClock(1_000);
    const pacer = new SendPacer(clock);
    // Five tokens claimed at once at 500/s: 2 ms apart, the first at once.
    expect(await sendTimes(clock, pacer, 5, 500)).toEqual([0, 2, 4, 6, 8]);
    expect(pacer.waitingCount).toBe(0);
  });

  it('keeps the rate when its timer fires late, making up the turns of 10 ms at most', async () => {
    const clock = new ManualClock(1_000);
    const pacer = new SendPacer(clock);
    const times: number[] = [];
    const record = (turn: Promise<void> | undefined) => void turn?.then(() => times.push(clock.now() - 1_000));
    for (let i = 0; i < 6; i++) record(pacer.turn(500, 1_000));
    // The event loop is busy past two turns (due at 2 and 4): at 5 both go, and the next keeps its turn (6).
    clock.tick(5);
    await clock.runAll();
    expect(times).toEqual([5, 5, 6, 8, 10]);
    // Busy for 30 ms at 1,000/s: the turns of the last 10 ms go at once, not all 30.
    times.length = 0;
    await clock.advance(100);
    const start = clock.now() - 1_000;
    for (let i = 0; i < 40; i++) record(pacer.turn(1_000, 1_000));
    clock.tick(30);
    await clock.runAll();
    const at = times.map((t) => t - start);
    expect(at.filter((t) => t === 30).length).toBe(11);
    expect(at.at(-1)).toBe(58);
    // A send after a quiet spell goes at once; the next waits its turn.
    await clock.advance(50);
    expect(await sendTimes(clock, pacer, 2, 500)).toEqual([0, 2]);
  });

  it('never holds a send past its bound when the rate drops, and lets everything go without a limit', async () => {
    const clock = new ManualClock(1_000);
    const pacer = new SendPacer(clock);
    expect(await sendTimes(clock, pacer, 3, 1, 300)).toEqual([0, 300, 300]);
    await clock.advance(5_000);
    const waiting = [pacer.turn(1, 5_000), pacer.turn(1, 5_000)];
    expect(waiting[1]).toBeInstanceOf(Promise);
    // The limit is lifted: the sends waiting go at once, and so do the next.
    expect(pacer.turn(null, 1_000)).toBeUndefined();
    await Promise.all(waiting);
    expect(pacer.waitingCount).toBe(0);
    expect(await sendTimes(clock, pacer, 3, null)).toEqual([0, 0, 0]);
  });
});

describe('TrafficCounters and StormDetector', () => {
  const storm = { enabled: true, riseFactor: 5, minRetriesPerSecond: 5, maxSuccessRatio: 0.5, baselineMs: 4_000 };

  it('judges each whole second against the average of the ones before it, and reports a storm once', () => {
    const traffic = new TrafficCounters(storm.baselineMs);
    const detector = new StormDetector();
    const second = (at: number, retries: number, successes: number, calls: number) => {
      const ended = traffic.roll(at);
      for (let i = 0; i < retries; i++) traffic.dispatched(true);
      for (let i = 0; i < calls; i++) traffic.ended(i < successes);
      return ended;
    };
    expect(second(0, 4, 0, 4)).toBeNull();
    // 4 retries a second is the baseline; 20 is a rise of five, but a success ratio of a half is not a storm.
    expect(detector.stormBeginningWith(storm, second(1_000, 4, 0, 4)!)).toBeNull();
    expect(detector.stormBeginningWith(storm, second(2_000, 20, 10, 20)!)).toBeNull();
    const ended = second(3_000, 30, 0, 30)!;
    expect(ended).toMatchObject({ retries: 20, calls: 20, successes: 10, baselineRetriesPerSecond: 2 });
    const begins = traffic.roll(4_000)!;
    expect(begins).toMatchObject({ retries: 30, baselineRetriesPerSecond: 7 });
    expect(detector.stormBeginningWith(storm, begins)).toBeNull(); // 30 < 5 × 7: the baseline has risen with it
  });

  it('a storm from a quiet baseline is reported at its first second and not again while it lasts', () => {
    const traffic = new TrafficCounters(10_000);
    const detector = new StormDetector();
    traffic.roll(0);
    const judged: (object | null)[] = [];
    for (let s = 0; s < 3; s++) {
      for (let i = 0; i < 50; i++) {
        traffic.dispatched(true);
        traffic.ended(false);
      }
      judged.push(detector.stormBeginningWith(storm, traffic.roll((s + 1) * 1_000)!));
    }
    expect(judged).toEqual([{ retriesPerSecond: 50, successRatio: 0 }, null, null]);
    expect(traffic.dispatchRate(3_500)).toBe(25);
  });
});
