import { validate } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { AdaptiveThrottle } from '../src/simulate/adaptive-throttle.js';
import { DEFAULT_CONFIG } from '../src/service/retryd-config.js';
import { aimMet, goodputPerSecond, p99, type AimFigures } from '../src/simulate/w7-aims.js';
import { downstreamAnswer, downstreamServiceTime } from '../src/simulate/w7-downstream.js';
import { simulateW7, type W7Result } from '../src/simulate/w7-model.js';
import { DESIGN_STYLE, w7Svg, w7Table } from '../src/simulate/w7-report.js';
import { runW7Case } from '../src/simulate/w7-run.js';
import {
  W7_ATTEMPT_TIMEOUT_MS,
  W7_CASE_IDS,
  W7_CASES,
  W7_DESIGNS,
  W7_POLICY,
  W7_SERVICE_CONCURRENCY,
  W7_SLOW_CAPACITY_PER_SECOND,
  W7Aim,
  type W7Case,
  type W7Design,
} from '../src/simulate/w7-workload.js';

const find = (results: readonly W7Result[], c: string, design: W7Design) => {
  const row = results.find((r) => r.case === c && r.design === design);
  if (row === undefined) throw new Error(`no row ${c} ${design}`);
  return row;
};

describe('simulateW7 with a service that can send 1,000 attempts a second (a busy machine)', () => {
  const results = simulateW7({ cases: ['d'], designs: ['landed'], sendsPerSecond: 1_000 });

  it('sends no faster than that: none sends d\'s full target twice its capacity, about two calls a task', () => {
    const none = find(results, 'd', 'none');
    // Sent 100 a tenth of a second; arrivals are bunched a little by the network's jitter.
    expect(none.busiest100ms).toBeLessThanOrEqual(115);
    expect(none.callsPerTask).toBeGreaterThan(1.8);
    expect(none.callsPerTask).toBeLessThan(2.2);
  });

  it('landed still finds the full target and paces it: goodput kept, at most 1.2 calls a task', () => {
    const landed = find(results, 'd', 'landed');
    expect(landed.met).toBe(true);
    expect(landed.callsPerTask).toBeLessThan(1.15);
  });
});

describe('simulateW7: the default run of cases a to d (2,000 tasks, seed 2015)', () => {
  const results = simulateW7({ cases: ['a1', 'a2', 'b20', 'b50', 'b90', 'd'] });
  const at = (c: string, design: W7Design) => find(results, c, design);

  it('runs none first in every case, then every design in order, and accounts for every task', () => {
    expect(results.map((r) => `${r.case} ${r.design}`)).toEqual(['a1', 'a2', 'b20', 'b50', 'b90', 'd'].flatMap((c) => W7_DESIGNS.map((d) => `${c} ${d}`)));
    for (const r of results) {
      expect(r.succeeded + r.exhausted + r.pending, `${r.case} ${r.design}`).toBe(2_000);
      expect(r.callsPerTask).toBeCloseTo(r.calls / 2_000, 12);
      expect(r.finished).toBe(r.pending === 0);
    }
  });

  it('none on a1 makes exactly 2 calls per task, on a2 exactly 3, and every task succeeds', () => {
    expect(at('a1', 'none')).toMatchObject({ calls: 4_000, callsPerTask: 2, succeeded: 2_000, exhausted: 0, finished: true, timeRatio: 1, callsRatio: 1, met: null });
    expect(at('a2', 'none')).toMatchObject({ calls: 6_000, callsPerTask: 3, succeeded: 2_000, finished: true });
    // 64 in flight, each call about 20 ms there and back: about 320 calls in 100 ms.
    expect(at('a1', 'none').busiest100ms).toBeGreaterThan(280);
    expect(at('a1', 'none').busiest100ms).toBeLessThan(400);
  });

  it('landed and previous finish a1 and a2 within 1.2× none with the same calls: the breaker opens on the first wave, then the ready attempt makes first failures neutral', () => {
    for (const c of ['a1', 'a2']) {
      for (const design of ['landed', 'previous'] as const) {
        const run = at(c, design);
        expect(run.finished).toBe(true);
        expect(run.calls).toBe(at(c, 'none').calls);
        expect(run.timeRatio).toBeGreaterThan(1);
        expect(run.timeRatio).toBeLessThanOrEqual(1.2);
        expect(run.met).toBe(true);
      }
    }
  });

  it('every design meets the same answers in the random cases: a design that finishes makes none\'s calls to the call', () => {
    for (const c of ['b20', 'b50', 'b90']) {
      for (const design of W7_DESIGNS) {
        const r = at(c, design);
        if (r.finished) expect(r.calls, `${c} ${design}`).toBe(at(c, 'none').calls);
      }
    }
    // 0.9³⁰ of 2,000 tasks use all their attempts: about 85.
    expect(at('b90', 'none').exhausted).toBeGreaterThan(60);
    expect(at('b90', 'none').exhausted).toBeLessThan(110);
  });

  it('d: none keeps the downstream at its capacity with 4–5 calls a task; the retry budget paces previous down to its floor', () => {
    const none = at('d', 'none');
    expect(none.goodputPerSecond).toBeGreaterThan(450);
    expect(none.goodputPerSecond).toBeLessThan(560);
    expect(none.callsPerTask).toBeGreaterThan(4);
    expect(at('d', 'previous').goodputPerSecond).toBeLessThan(50);
    expect(at('d', 'previous').calls).toBe(at('d', 'budget').calls);
  });

  it('judges the aims as docs/simulate.md reports them', () => {
    const verdicts = Object.fromEntries(['a1', 'a2', 'b20', 'b50', 'b90', 'd'].map((c) => [c, W7_DESIGNS.slice(1).map((d) => at(c, d).met)]));
    // Designs in order: landed, previous, sre, budget, breaker-only.
    expect(verdicts).toEqual({
      a1: [true, true, false, true, true],
      a2: [true, true, false, false, true],
      b20: [true, true, false, true, true],
      b50: [true, true, false, true, true],
      b90: [false, false, false, false, false],
      d: [true, false, false, false, false],
    });
    // Where previous misses: b90 held by its breaker, d paced by its retry budget; breaker-only finishes both.
    expect(at('b90', 'previous').finished).toBe(false);
    expect(at('b90', 'breaker-only').timeRatio).toBeLessThan(1.2);
    expect(at('d', 'breaker-only').goodputPerSecond).toBeGreaterThan(450);
    // landed's capacity probe tells d's full target from b90's failing one: d at its capacity with under a third of
    // none's calls (within 1.2 a task even at 2,000 tasks, done in 4 s, where the calls made while it finds out weigh
    // most), b90 left to its retries.
    expect(at('d', 'landed').goodputPerSecond).toBeGreaterThan(450);
    expect(at('d', 'landed').callsPerTask).toBeLessThanOrEqual(1.2);
    expect(at('d', 'landed').callsRatio).toBeLessThan(0.35);
    expect(at('b90', 'landed').finished).toBe(true);
    expect(at('b90', 'landed').timeRatio).toBeLessThan(1.2);
  });

  it('prints one table row per case and design, none marked as the reference, and the aims under it', () => {
    const table = w7Table(results, { seed: 2015, tasks: 2_000 });
    expect(table).toMatch(/^case +design +aim +succeeded +exhausted +pending +time \(s\) +calls +calls\/task +busiest 100 ms +goodput\/s +timeouts +good lag p99 \(s\) +time ÷ none +calls ÷ none$/m);
    expect(table).toMatch(/^a1 +none +reference +2,000 +0 +0 +[\d.]+ +4,000 +2\.00 /m);
    expect(table).toMatch(/^a1 +landed +met +2,000 /m);
    expect(table).toMatch(/^b90 +previous +NOT MET +[\d,]+ +0 +[\d,]+ +≥ 300\.00 /m);
    expect(table).toContain('a1, a2, b20, b50: time ≤ 1.2× none, calls/task ≤ none; b90: time ≤ none, calls/task < none; d: goodput ≥ 450/s');
    expect(table.split('\n').filter((line) => /^(a1|a2|b20|b50|b90|d) /.test(line))).toHaveLength(results.length);
  });

  it('draws a well-formed chart: a bar per design and case in each panel, open bars for runs still pending', () => {
    const svg = w7Svg(results, { seed: 2015, tasks: 2_000 });
    expect(validate(svg)).toBe(true);
    // 5 designs × 6 cases in each of the two panels.
    expect(svg.match(/<rect x=/g)).toHaveLength(2 * 5 * 6 + 5);
    expect(svg).toContain('stroke-dasharray="4 2"');
    for (const design of W7_DESIGNS.slice(1)) expect(svg).toContain(`>${DESIGN_STYLE[design].label}</text>`);
    expect(svg).not.toMatch(/NaN|Infinity|undefined/);
  });
});

describe('simulateW7: f, dead for an hour (200 tasks)', () => {
  const results = simulateW7({ cases: ['f'], tasks: 200 });
  const at = (design: W7Design) => find(results, 'f', design);

  it('none calls until every task used its 30 attempts, far more than 100 calls', () => {
    expect(at('none')).toMatchObject({ calls: 200 * W7_POLICY.maxAttempts, exhausted: 200, succeeded: 0, finished: true, met: null });
  });

  it('previous holds the target after its first wave: the wave, then one probe per open period, over the 100 the aim allows', () => {
    const previous = at('previous');
    expect(previous.pending).toBeGreaterThanOrEqual(198);
    // 64 in flight and 19 more sent before the 20th failure came back; about 55 probes in the hour.
    expect(previous.calls).toBeGreaterThan(100);
    expect(previous.calls).toBeLessThan(160);
    expect(previous.met).toBe(false);
    expect(previous.timeRatio).toBeNull();
  });

  it('landed holds it after a first wave of 10 in flight (its slow start): within the 100 calls the aim allows', () => {
    const landed = at('landed');
    expect(landed.pending).toBeGreaterThanOrEqual(198);
    expect(landed.calls).toBeGreaterThan(60);
    expect(landed.calls).toBeLessThanOrEqual(100);
    expect(landed.met).toBe(true);
  });

  it('sre refuses almost every call to a target that accepts none: within the aim, every task still pending', () => {
    expect(at('sre').calls).toBeLessThanOrEqual(100);
    expect(at('sre')).toMatchObject({ pending: 200, met: true });
    expect(at('sre').refused).toBeGreaterThan(1_000_000);
  });
});

describe('simulateW7: e, slow under load (2,000 tasks, seed 2015)', () => {
  const results = simulateW7({ cases: ['e'] });
  const at = (design: W7Design) => find(results, 'e', design);

  it('runs with the service\'s default concurrency and attempt timeout', () => {
    expect(W7_SERVICE_CONCURRENCY).toBe(DEFAULT_CONFIG.concurrency);
    expect(W7_ATTEMPT_TIMEOUT_MS).toBe(DEFAULT_CONFIG.attemptTimeoutMs);
    expect(W7_CASES.find((c) => c.id === 'e')?.concurrency).toBe(W7_SERVICE_CONCURRENCY);
    expect(W7_SLOW_CAPACITY_PER_SECOND).toBe(1_000);
  });

  it('none keeps the downstream at its capacity, one call a task, no timeout: 256 in flight never pile up to 30 s', () => {
    const none = at('none');
    expect(none).toMatchObject({ calls: 2_000, succeeded: 2_000, timeouts: 0, finished: true, met: null });
    // 200 served at once in 200 ms: 1,000/s, less the first call's round trip (about 220 ms of a 1 s measure).
    expect(none.goodputPerSecond).toBeGreaterThan(900);
    expect(none.goodputPerSecond).toBeLessThan(1_000);
    expect(none.busiest100ms).toBeLessThanOrEqual(W7_SERVICE_CONCURRENCY);
  });

  it('with no failure, nothing trips: previous, budget and breaker-only are none to the millisecond', () => {
    for (const design of ['previous', 'budget', 'breaker-only'] as const) {
      expect(at(design).timeMs, design).toBe(at('none').timeMs);
      expect(at(design).met, design).toBe(true);
    }
  });

  it('landed misses the goodput at 2,000 tasks by its slow start: 10 in flight until the first answer, a call (220 ms) later', () => {
    const landed = at('landed');
    expect(landed).toMatchObject({ calls: 2_000, timeouts: 0, met: false });
    expect(landed.goodputPerSecond).toBeGreaterThan(700);
    expect(landed.goodputPerSecond).toBeLessThan(900);
    // About one call later than none, whatever the backlog.
    expect(landed.timeMs - at('none').timeMs).toBeGreaterThan(150);
    expect(landed.timeMs - at('none').timeMs).toBeLessThan(300);
    // W7's full size amortizes it.
    expect(simulateW7({ cases: ['e'], designs: ['landed'], tasks: 5_000 })[1]).toMatchObject({ design: 'landed', met: true });
  });

  it('sre refuses most of the cold start: 100 s and more, with every call accepted', () => {
    expect(at('sre').met).toBe(false);
    expect(at('sre').timeRatio).toBeGreaterThan(50);
    expect(at('sre').refused).toBeGreaterThan(10_000);
  });

  it('counts the attempts that time out, and the downstream serves them all the same (a pile-up)', () => {
    // One request at a time, 1 s each, 64 in flight: from the 31st in its queue on, an attempt outlives its 30 s.
    const e = W7_CASES.find((c) => c.id === 'e') as W7Case;
    const spec: W7Case = { ...e, downstream: { kind: 'slow', inFlight: 1, baseMs: 1_000 }, concurrency: 64 };
    const run = runW7Case(spec, 'none', 100, 2015);
    expect(run.timeouts).toBeGreaterThan(30);
    // Each timed-out attempt is retried while the downstream still serves it: more calls than tasks.
    expect(run.calls).toBeGreaterThan(100);
    expect(run.finished).toBe(false);
  });
});

describe('simulateW7: g, one bad target among nine good ones (2,000 tasks, seed 2015)', () => {
  const results = simulateW7({ cases: ['g'] });
  const at = (design: W7Design) => find(results, 'g', design);

  it('none\'s good targets wait as long as with the bad target answering at once: every first attempt goes before any retry', () => {
    const none = at('none');
    expect(none).toMatchObject({ succeeded: 2_000, finished: true, met: null, timeouts: 0 });
    expect(none.goodLagRatio).toBeGreaterThan(0.95);
    expect(none.goodLagRatio).toBeLessThan(1.05);
    // 2,000 first attempts at 64 in flight, about 20 ms each: the last good ones go after about 0.6 s.
    expect(none.goodLagP99Ms).toBeGreaterThan(500);
    expect(none.goodLagP99Ms).toBeLessThan(750);
    // The bad target gets d's retries: more than one call a task over all.
    expect(none.callsPerTask).toBeGreaterThan(2);
  });

  it('landed leaves the good targets as they were, and paces the bad one: fewer calls, done sooner', () => {
    const landed = at('landed');
    expect(landed.met).toBe(true);
    expect(landed.goodLagRatio).toBeLessThanOrEqual(1.2);
    expect(landed.callsRatio).toBeLessThan(0.8);
    expect(landed.timeRatio).toBeLessThan(1);
  });

  it('judges the aim per design: sre starves the good targets it has not yet seen answer, the retry budget only the bad one', () => {
    expect(W7_DESIGNS.slice(1).map((d) => at(d).met)).toEqual([true, true, false, true, true]);
    expect(at('sre').goodLagRatio).toBeGreaterThan(5);
    // previous and budget pace the bad target's retries at the budget's floor, each target its own budget: the good
    // targets' lag is none's, the run's time many times it.
    expect(at('previous').goodLagRatio).toBeLessThan(1.2);
    expect(at('previous').timeRatio).toBeGreaterThan(10);
  });

  it('prints e and g with their goodput, timeouts and the good targets\' lag', () => {
    const table = w7Table(simulateW7({ cases: ['e', 'g'], designs: ['landed'], tasks: 300 }), { seed: 2015, tasks: 300 });
    expect(table).toContain('all due at 0, 64 in flight (e: 256)');
    expect(table).toMatch(/^e +none +reference +300 +0 +0 +[\d.]+ +300 +1\.00 +\d+ +[\d,]+ +0 +– /m);
    expect(table).toMatch(/^g +landed +(met|NOT MET) +300 +.* \d+\.\d\d \(\d+\.\d\d×\) /m);
    expect(table).toContain("e: goodput ≥ 900/s, no timeouts; g: good targets' lag p99 ≤ 1.2× without the bad one");
  });
});

describe('simulateW7: seeds', () => {
  const options = { cases: ['a2', 'b50', 'd'], designs: ['landed', 'sre'] as W7Design[], tasks: 300 };

  it('gives the same rows for the same seed, and others for another seed', () => {
    const first = simulateW7({ ...options, seed: 7 });
    expect(simulateW7({ ...options, seed: 7 })).toEqual(first);
    expect(simulateW7({ ...options, seed: 8 })).not.toEqual(first);
  });

  it('gives a row that does not depend on which other rows run', () => {
    const all = simulateW7({ ...options, seed: 7 });
    const alone = simulateW7({ cases: ['b50'], designs: ['sre'], tasks: 300, seed: 7 });
    expect(alone).toEqual([find(all, 'b50', 'none'), find(all, 'b50', 'sre')]);
  });

  it('refuses an unknown case', () => {
    expect(() => simulateW7({ cases: ['z'] })).toThrow('unknown W7 case "z"');
  });

  it('lists the cases in WORKLOADS.md\'s order (a case\'s streams do not depend on it)', () => {
    expect(W7_CASE_IDS).toEqual(['a1', 'a2', 'b20', 'b50', 'b90', 'd', 'e', 'f', 'g']);
    const g = simulateW7({ cases: ['g'], designs: ['landed'], tasks: 300, seed: 7 });
    expect(simulateW7({ cases: ['e', 'g'], designs: ['landed'], tasks: 300, seed: 7 }).slice(2)).toEqual(g);
  });
});

describe('the W7 aims', () => {
  const none: AimFigures = { finished: true, timeMs: 1_000, calls: 4_000, callsPerTask: 2, goodputPerSecond: null, timeouts: 0, goodLagRatio: null };

  it('near none: finished within 1.2× none\'s time, with no more calls per task', () => {
    expect(aimMet(W7Aim.NEAR_NONE, { ...none, timeMs: 1_200 }, none)).toBe(true);
    expect(aimMet(W7Aim.NEAR_NONE, { ...none, timeMs: 1_201 }, none)).toBe(false);
    expect(aimMet(W7Aim.NEAR_NONE, { ...none, callsPerTask: 2.001 }, none)).toBe(false);
    expect(aimMet(W7Aim.NEAR_NONE, { ...none, finished: false, timeMs: 900 }, none)).toBe(false);
    expect(aimMet(W7Aim.NEAR_NONE, none, { ...none, finished: false })).toBeNull();
  });

  it('sooner with fewer calls: no later than none, strictly fewer calls per task', () => {
    expect(aimMet(W7Aim.SOONER_WITH_FEWER_CALLS, { ...none, callsPerTask: 1.9 }, none)).toBe(true);
    expect(aimMet(W7Aim.SOONER_WITH_FEWER_CALLS, none, none)).toBe(false);
    expect(aimMet(W7Aim.SOONER_WITH_FEWER_CALLS, { ...none, timeMs: 1_001, callsPerTask: 1 }, none)).toBe(false);
  });

  it('goodput: at least 450/s with at most 1.2 calls per task; few calls: at most 100', () => {
    expect(aimMet(W7Aim.GOODPUT, { ...none, goodputPerSecond: 450, callsPerTask: 1.2 }, none)).toBe(true);
    expect(aimMet(W7Aim.GOODPUT, { ...none, goodputPerSecond: 449, callsPerTask: 1 }, none)).toBe(false);
    expect(aimMet(W7Aim.GOODPUT, { ...none, goodputPerSecond: 500, callsPerTask: 1.21 }, none)).toBe(false);
    expect(aimMet(W7Aim.FEW_CALLS, { ...none, calls: 100 }, none)).toBe(true);
    expect(aimMet(W7Aim.FEW_CALLS, { ...none, calls: 101 }, none)).toBe(false);
  });

  it('e: at least 900/s with no timeout; g: the good targets\' lag within 1.2× of theirs without the bad one', () => {
    expect(aimMet(W7Aim.GOODPUT_NO_TIMEOUTS, { ...none, goodputPerSecond: 900 }, none)).toBe(true);
    expect(aimMet(W7Aim.GOODPUT_NO_TIMEOUTS, { ...none, goodputPerSecond: 899 }, none)).toBe(false);
    expect(aimMet(W7Aim.GOODPUT_NO_TIMEOUTS, { ...none, goodputPerSecond: 1_000, timeouts: 1 }, none)).toBe(false);
    expect(aimMet(W7Aim.OTHERS_UNAFFECTED, { ...none, goodLagRatio: 1.2 }, none)).toBe(true);
    expect(aimMet(W7Aim.OTHERS_UNAFFECTED, { ...none, goodLagRatio: 1.21 }, none)).toBe(false);
    expect(aimMet(W7Aim.OTHERS_UNAFFECTED, none, none)).toBeNull();
  });

  it('p99 is the nearest rank', () => {
    expect(p99(Array.from({ length: 1_000 }, (_, i) => 1_000 - i))).toBe(990);
    expect(p99([5])).toBe(5);
    expect(p99([])).toBeNull();
  });

  it('goodput counts the successes until all but a second of capacity had succeeded', () => {
    // 1,000 tasks at 500/s: the 500th success at 1 s.
    const times = Array.from({ length: 1_000 }, (_, i) => (i + 1) * 2);
    expect(goodputPerSecond(times, 1_000, 500)).toBe(500);
    expect(goodputPerSecond([], 1_000, 500)).toBe(0);
  });
});

describe('AdaptiveThrottle (SRE client-side throttling)', () => {
  const never = () => 0.999_999;

  it('never refuses while the backend accepts at least 1/K of the requests', () => {
    const throttle = new AdaptiveThrottle(2, 120_000);
    for (let i = 0; i < 1_000; i++) {
      expect(throttle.admit(i, never)).toBe(true);
      if (i % 2 === 0) throttle.accepted(i);
    }
    expect(throttle.rejectProbability(1_000)).toBe(0);
  });

  it('refuses with probability (requests − K·accepts) / (requests + 1), refused requests counted', () => {
    const throttle = new AdaptiveThrottle(2, 120_000);
    for (let i = 0; i < 99; i++) throttle.admit(0, () => 0);
    for (let i = 0; i < 10; i++) throttle.accepted(0);
    expect(throttle.rejectProbability(0)).toBeCloseTo((99 - 20) / 100, 12);
  });

  it('forgets what left its window', () => {
    const throttle = new AdaptiveThrottle(2, 120_000);
    for (let i = 0; i < 100; i++) throttle.admit(0, () => 0);
    expect(throttle.rejectProbability(119_999)).toBeCloseTo(100 / 101, 12);
    expect(throttle.rejectProbability(120_000)).toBe(0);
  });
});

describe('the W7 downstreams', () => {
  it('not ready: 503 to the first requests of each key', () => {
    const answer = downstreamAnswer({ kind: 'not-ready', failFirst: 2 }, 1);
    expect([1, 2, 3, 4].map((n) => answer(5, n, 0))).toEqual([false, false, true, true]);
  });

  it('overload: the bucket\'s burst at once, then the rate', () => {
    const answer = downstreamAnswer({ kind: 'overload', perSecond: 500, burst: 50 }, 1);
    expect(Array.from({ length: 60 }, (_, i) => answer(i, 1, 0)).filter(Boolean)).toHaveLength(50);
    // 100 ms later: 50 more tokens.
    expect(Array.from({ length: 60 }, (_, i) => answer(i, 1, 100)).filter(Boolean)).toHaveLength(50);
  });

  it('slow: the first `inFlight` served in the base latency, the rest queued for the first place to free', () => {
    const serve = downstreamServiceTime({ kind: 'slow', inFlight: 2, baseMs: 100 });
    expect([serve(0), serve(0), serve(0), serve(250)]).toEqual([100, 100, 200, 100]);
    expect(downstreamServiceTime({ kind: 'overload', perSecond: 500, burst: 50 })(7)).toBe(0);
    expect(downstreamAnswer({ kind: 'slow', inFlight: 2, baseMs: 100 }, 1)(1, 1, 0)).toBe(true);
    expect(downstreamAnswer({ kind: 'ok' }, 1)(1, 1, 0)).toBe(true);
  });

  it('random: each key\'s n-th request answered the same way for the same seed, the share failing as asked', () => {
    const a = downstreamAnswer({ kind: 'random', failShare: 0.2 }, 3);
    const b = downstreamAnswer({ kind: 'random', failShare: 0.2 }, 3);
    const answers = Array.from({ length: 20_000 }, (_, i) => a(i, 1 + (i % 3), 0));
    expect(Array.from({ length: 20_000 }, (_, i) => b(i, 1 + (i % 3), 0))).toEqual(answers);
    expect(Math.abs(answers.filter((ok) => !ok).length / 20_000 - 0.2)).toBeLessThan(0.01);
  });
});
