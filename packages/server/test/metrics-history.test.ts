import { CircuitState } from '@retryd/core';
import { ManualClock } from '@retryd/core/testing';
import { describe, expect, it } from 'vitest';
import { HISTORY_MAX_TARGETS, HISTORY_SAMPLES, ServiceHistory } from '../src/metrics/history/service-history.js';
import { SampleRing } from '../src/metrics/history/sample-ring.js';
import type { KnownTargetState } from '../src/protection/target-protection.js';

// The console's short history: a fixed ring of samples, and the sampler that fills it from the metrics' counters.

describe('SampleRing', () => {
  it('keeps the last `capacity` samples oldest first, null where a sample had no value', () => {
    const ring = new SampleRing({ capacity: 3, maxColumns: 4 });
    ring.push(1, { a: 10 });
    ring.push(2, { a: 20, b: 1 });
    expect(ring.read()).toEqual({ at: [1, 2], columns: new Map([['a', [10, 20]], ['b', [null, 1]]]) });
    ring.push(3, { b: 2 });
    ring.push(4, { a: 40, b: 3 });
    expect(ring.size).toBe(3);
    expect(ring.read()).toEqual({ at: [2, 3, 4], columns: new Map([['a', [20, null, 40]], ['b', [1, 2, 3]]]) });
    expect(ring.read((name) => name === 'b').columns).toEqual(new Map([['b', [1, 2, 3]]]));
  });

  it('takes no column past maxColumns, and drops a column unseen for the whole ring, making room', () => {
    const ring = new SampleRing({ capacity: 2, maxColumns: 1 });
    ring.push(1, { a: 1, b: 1 });
    expect([...ring.read().columns.keys()]).toEqual(['a']);
    expect(ring.bytes).toBe(2 * 8 * 2);
    ring.push(2, { b: 2 });
    expect(ring.read().columns).toEqual(new Map([['a', [1, null]]]));
    // `a` now has no value in either kept sample: it goes, and `b` takes its place.
    ring.push(3, { b: 3 });
    expect(ring.read().columns).toEqual(new Map([['b', [null, 3]]]));
    expect(ring.bytes).toBe(2 * 8 * 2);
  });

  it('refuses a capacity or column cap that is not a whole number', () => {
    expect(() => new SampleRing({ capacity: 0, maxColumns: 1 })).toThrow('capacity must be an integer >= 1, got 0');
    expect(() => new SampleRing({ capacity: 2, maxColumns: 1.5 })).toThrow('maxColumns must be an integer >= 0, got 1.5');
  });
});

describe('ServiceHistory', () => {
  const target = (targetKey: string, breaker: CircuitState, rate: number | null, tenantId = 'default'): KnownTargetState => ({
    tenantId,
    targetKey,
    breaker,
    allowedRatePerSecond: rate,
    held: breaker !== CircuitState.CLOSED,
  });

  it('records attempts per second by outcome between samples, and a point for now on read', async () => {
    const clock = new ManualClock(1_000_000);
    const totals: Record<string, number> = {};
    const history = new ServiceHistory({ attempts: async () => ({ ...totals }), clock, intervalMs: 10_000 });
    await history.sample();
    totals.succeeded = 50;
    totals.retry_scheduled = 10;
    await clock.advance(10_000);
    await history.sample();
    totals.succeeded = 70;
    await clock.advance(4_000);
    const read = await history.read();
    expect(read).toEqual({
      intervalMs: 10_000,
      at: [1_000_000, 1_010_000, 1_014_000],
      // The outcome first seen at the second sample had a rate of 0 before it, not an unknown one.
      attemptsPerSecond: { succeeded: [0, 5, 5], retry_scheduled: [0, 1, 0] },
      targets: [],
    });
  });

  it("keeps each target's breaker and allowed rate, per tenant, null where unknown or unlimited", async () => {
    const clock = new ManualClock(0);
    let known: KnownTargetState[] = [target('https://a.test', CircuitState.CLOSED, 50)];
    const history = new ServiceHistory({ attempts: async () => ({}), targets: { knownTargets: () => known }, clock });
    await history.sample();
    await clock.advance(10_000);
    known = [target('https://a.test', CircuitState.OPEN, 5), target('https://a.test', CircuitState.HALF_OPEN, null, 'acme'), target('https://b.test', CircuitState.CLOSED, 1)];
    await history.sample();
    await clock.advance(1_000);
    known = [];
    const read = await history.read('https://a.test');
    expect(read.at).toEqual([0, 10_000, 11_000]);
    expect(read.targets).toEqual([
      { tenantId: 'default', targetKey: 'https://a.test', breaker: ['CLOSED', 'OPEN', null], allowedRatePerSecond: [50, 5, null] },
      { tenantId: 'acme', targetKey: 'https://a.test', breaker: [null, 'HALF_OPEN', null], allowedRatePerSecond: [null, null, null] },
    ]);
    expect((await history.read()).targets).toEqual([]);
  });

  it('holds its memory fixed: an hour of samples and at most its cap of targets', async () => {
    const clock = new ManualClock(0);
    const many = Array.from({ length: HISTORY_MAX_TARGETS + 50 }, (_, i) => target(`https://t${i}.test`, CircuitState.CLOSED, 1));
    const history = new ServiceHistory({ attempts: async () => ({ succeeded: clock.now() / 1_000 }), targets: { knownTargets: () => many }, clock });
    for (let i = 0; i < HISTORY_SAMPLES + 20; i++) {
      await history.sample();
      await clock.advance(10_000);
    }
    const read = await history.read();
    expect(read.at).toHaveLength(HISTORY_SAMPLES + 1);
    expect(read.at[0]).toBe(20 * 10_000);
    expect(read.attemptsPerSecond.succeeded!.slice(1)).toEqual(Array.from({ length: HISTORY_SAMPLES }, () => 1));
    expect((await history.read(`https://t${HISTORY_MAX_TARGETS - 1}.test`)).targets[0]?.breaker.slice(0, -1)).toEqual(Array.from({ length: HISTORY_SAMPLES }, () => 'CLOSED'));
    // A target past the cap has no kept samples, only the point for now.
    expect((await history.read(`https://t${HISTORY_MAX_TARGETS}.test`)).targets[0]?.breaker.slice(0, -1)).toEqual(Array.from({ length: HISTORY_SAMPLES }, () => null));
    // The docs' figure: 360 samples × 8 bytes × (1 + outcomes + 2 × 100 targets) stays under 0.6 MB.
    expect(history.bytes).toBe(HISTORY_SAMPLES * 8 * (3 + 1 + 2 * HISTORY_MAX_TARGETS));
    expect(history.bytes).toBeLessThan(600_000);
  });
});
