import { describe, expect, it } from 'vitest';
import { CapacityProbe } from '../src/protection/capacity-probe.js';
import { xoshiro128 } from '../src/simulate/seeded-random.js';

// The capacity probe against two downstreams that look alike at first (most calls fail with a bare 503): one full at
// `capacity` accepts a second, one failing a share of calls at random. Sends are spread evenly at the rate asked (or
// the probe's pace, when lower), each answered 10 ms later; time is simulated, 1 ms steps.

interface Run {
  probe: CapacityProbe;
  /** The pace at the end of each 100 ms, in sends per second (null: free). */
  paces: (number | null)[];
  /** What the probe was doing at the end of each 100 ms. */
  modes: string[];
  sent: number;
  accepted: number;
}

function drive(sendRate: number | ((probe: CapacityProbe, now: number) => number), accepts: (now: number, sent: number) => boolean, ms: number): Run {
  const probe = new CapacityProbe();
  const rateAt = typeof sendRate === 'number' ? () => sendRate : (now: number) => sendRate(probe, now);
  const inFlight: { sentAt: number; accepted: boolean; at: number }[] = [];
  const paces: (number | null)[] = [];
  const modes: string[] = [];
  let credit = 0;
  let sent = 0;
  let accepted = 0;
  for (let now = 0; now < ms; now++) {
    while (inFlight.length > 0 && (inFlight[0] as { at: number }).at <= now) {
      const answer = inFlight.shift() as { sentAt: number; accepted: boolean };
      probe.answered(answer.accepted, answer.sentAt, now);
      if (answer.accepted) accepted++;
    }
    const pace = probe.rateAt(now);
    credit += Math.min(rateAt(now), pace ?? Infinity) / 1_000;
    for (; credit >= 1; credit--) {
      probe.sent(now);
      sent++;
      inFlight.push({ sentAt: now, accepted: accepts(now, sent), at: now + 10 });
    }
    if (now % 100 === 99) {
      paces.push(pace);
      modes.push(probe.modeAt(now));
    }
  }
  return { probe, paces, modes, sent, accepted };
}

/** A downstream that accepts `perSecond` a second (a bucket of `bucketMs` worth) and refuses the rest. */
function full(perSecond: number, bucketMs = 10): (now: number) => boolean {
  const most = (perSecond * bucketMs) / 1_000;
  let tokens = most;
  let at = 0;
  return (now) => {
    tokens = Math.min(most, tokens + ((now - at) * perSecond) / 1_000);
    at = now;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };
}

/**
 * A probe sent `rate` a second (or its pace, when lower) in 1 ms steps from `clock.t`, each send answered a ms later as
 * `clock.accepts` says (which a test may swap), recording the modes it was in.
 */
function stepped(accepts: (now: number) => boolean) {
  const probe = new CapacityProbe();
  const modes = new Set<string>();
  const clock = { t: 0, accepts };
  const send = (until: number, rate: number) => {
    for (; clock.t < until; clock.t += 1) {
      const t = clock.t;
      const pace = probe.rateAt(t);
      const n = Math.round(Math.min(rate, pace ?? Infinity) / 1_000 + (t % 2 === 0 ? 0.5 : 0));
      for (let i = 0; i < n; i++) {
        probe.sent(t);
        probe.answered(clock.accepts(t), t, t + 1);
      }
      modes.add(probe.modeAt(t));
    }
  };
  return { probe, clock, send, modes };
}

/** A downstream that refuses `share` of requests at random. */
function failing(share: number, seed: number): () => boolean {
  const random = xoshiro128(seed);
  return () => random() >= share;
}

describe('CapacityProbe', () => {
  it('finds a full target by cutting its sends to what it accepts, and paces it near that', () => {
    const run = drive(3_000, full(500), 5_000);
    expect(run.probe.modeAt(5_000)).toBe('paced');
    const pace = run.paces.at(-1) as number;
    expect(pace).toBeGreaterThan(450);
    expect(pace).toBeLessThan(700);
    // Sent at 3,000 a second, it would have made 15,000 calls for its 2,500 accepts. Accepts held through the test, so
    // it paces at once, without sending freely again to confirm (which cost another sample at 3,000 a second).
    expect(run.sent / run.accepted).toBeLessThan(1.25);
    // Paced within 300 ms: the first sample holds what the target's bucket absorbed while idle, and starts no test.
    expect(run.modes[2]).toBe('paced');
    expect(run.modes).not.toContain('confirming');
  });

  it('finds a full target that a busy service can send only twice its capacity', () => {
    // Half refused: a target failing half its calls at random looks the same in one sample; the test tells them apart.
    const run = drive(1_000, full(500), 5_000);
    expect(run.probe.modeAt(5_000)).toBe('paced');
    expect(run.paces.at(-1)).toBeGreaterThan(450);
    expect(run.paces.at(-1)).toBeLessThan(650);
    expect(run.sent / run.accepted).toBeLessThan(1.2);
  });

  it('finds a full target sent in bursts whose refusals are answered last', () => {
    // A busy service sends a claim's worth at once: 100 sends every 50 ms (2,000 a second), each burst's first
    // quarter taken by the target's bucket (a tenth of a second's worth, as W7's d) and answered at once, the rest
    // refused and answered 20 ms later. Judged on a sample's first answers, the probe saw most bursts accepted; judged
    // on all of them, it sees three quarters refused.
    const probe = new CapacityProbe();
    const accepts = full(500, 100);
    const answers: { sentAt: number; accepted: boolean; at: number }[] = [];
    let sent = 0;
    let accepted = 0;
    for (let now = 0; now < 5_000; now++) {
      answers.sort((a, b) => a.at - b.at);
      while (answers.length > 0 && (answers[0] as { at: number }).at <= now) {
        const answer = answers.shift() as { sentAt: number; accepted: boolean };
        probe.answered(answer.accepted, answer.sentAt, now);
        if (answer.accepted) accepted++;
      }
      if (now % 50 !== 0) continue;
      // The pace, when there is one, lets this burst send what it accrued since the last.
      const pace = probe.rateAt(now);
      const burst = pace === null ? 100 : Math.round((pace * 50) / 1_000);
      for (let i = 0; i < burst; i++) {
        probe.sent(now);
        sent++;
        const ok = accepts(now);
        answers.push({ sentAt: now, accepted: ok, at: now + (ok ? 1 : 20) });
      }
    }
    expect(probe.modeAt(5_000)).toBe('paced');
    expect(sent / accepted).toBeLessThan(1.4);
  });

  it('judges a sample once the answers it waits for came, counting those that say nothing of load as answered', () => {
    // Every other answer is skipped (as a key not ready yet would be), and answered at once, the others 10 ms later:
    // the samples close once their counted answers came, and the full target is found within the first 300 ms.
    const probe = new CapacityProbe();
    const accepts = full(500);
    const later: { sentAt: number; accepted: boolean }[][] = [];
    let paced: number | undefined;
    for (let now = 0; now < 1_000; now++) {
      for (const answer of later[now] ?? []) probe.answered(answer.accepted, answer.sentAt, now);
      const pace = probe.rateAt(now) ?? 3_000;
      for (let i = 0; i < Math.round(pace / 1_000 + (now % 2 === 0 ? 0.4 : 0)); i++) {
        probe.sent(now);
        const accepted = accepts(now);
        if (i % 2 === 1) probe.skipped(now, now);
        else (later[now + 10] ??= []).push({ sentAt: now, accepted });
      }
      if (paced === undefined && probe.modeAt(now) === 'paced') paced = now;
    }
    expect(paced).toBeLessThan(300);
    expect(probe.modeAt(1_000)).toBe('paced');
  });

  it('paces a full target at what it accepted before the test when the test itself was sent less (its tasks waiting out their backoff)', () => {
    // 3,000 a second until the test begins, then 150 a second: the test's sends never reach the target's capacity.
    let tested = false;
    const run = drive(
      (probe, now) => {
        tested ||= probe.modeAt(now) !== 'free';
        return tested ? 150 : 3_000;
      },
      full(500),
      2_000,
    );
    expect(run.modes).toContain('paced');
    // Paced at what it accepted while sent 3,000 a second, not at the test's 150.
    const paced = run.paces.filter((_, i) => run.modes[i] === 'paced') as number[];
    expect(paced.length).toBeGreaterThan(0);
    expect(Math.min(...paced)).toBeGreaterThan(450);
  });

  it('leaves a target failing 90% of calls at random to its retries: the test finds accepts falling with sends', () => {
    for (const seed of [1, 2, 3]) {
      const run = drive(3_000, failing(0.9, seed), 10_000);
      // Tested, and found answering each time: never paced, and halved for under a second in all.
      expect(run.modes).toContain('testing');
      expect(run.modes).not.toContain('paced');
      expect(run.paces.filter((p) => p !== null).length).toBeLessThanOrEqual(8);
      expect(run.sent).toBeGreaterThan(0.95 * 30_000);
    }
  });

  it('never paces a target that fails half its calls, nor tests one sent less than 1.25× what it was seen to accept', () => {
    for (const seed of [7, 8, 9]) expect(drive(3_000, failing(0.5, seed), 10_000).modes).not.toContain('paced');
    // Accepting 3,000 a second at first, then sent 4,000 a second of which 90% fail: not worth a test.
    const probe = new CapacityProbe();
    const answer = failing(0.9, 5);
    let t = 0;
    const call = (accepted: boolean) => {
      probe.sent(t);
      probe.answered(accepted, t, t);
    };
    for (; t < 1_000; t++) for (let i = 0; i < 3; i++) call(true);
    for (; t < 5_000; t += 2.5) call(answer());
    expect(probe.modeAt(t)).toBe('free');
    expect(probe.rateAt(t)).toBeNull();
  });

  it('frees a paced target once it takes all it is sent again, or when its accepts fall to half', () => {
    // Full at 500 a second, then the full target's capacity grows past what is sent: the pace climbs, then stops binding.
    const run = stepped(full(500));
    run.send(3_000, 3_000);
    expect(run.probe.modeAt(run.clock.t)).toBe('paced');
    run.clock.accepts = () => true;
    // Raised a tenth every 250 ms while the sends reach it, then freed once they have stayed below it for 2 s.
    run.send(12_000, 1_000);
    expect(run.probe.modeAt(run.clock.t)).toBe('free');
  });

  it("keeps a full target paced through a pause in this service's own sends", () => {
    // Paced at about 500 a second; then the service sends nothing for 150 ms (its event loop busy), then sends again.
    // The sample across the pause accepted less a second, all it was sent: that says nothing of the target.
    const run = stepped(full(500));
    run.send(3_000, 3_000);
    expect(run.probe.modeAt(run.clock.t)).toBe('paced');
    run.modes.clear();
    for (const pause of [150, 300, 600]) {
      run.clock.t += pause;
      run.send(run.clock.t + 1_000, 3_000);
    }
    expect([...run.modes]).toEqual(['paced']);
  });

  it('lets a pace lapse once nothing was sent for 2 s: the backlog is gone, and the gate is not left paced', () => {
    const run = drive(3_000, full(500), 3_000);
    expect(run.probe.modeAt(3_000)).toBe('paced');
    expect(run.probe.rateAt(4_900)).not.toBeNull();
    expect(run.probe.rateAt(5_000)).toBeNull();
    expect(run.probe.modeAt(5_000)).toBe('free');
  });

  describe('a flood whose answers come late', () => {
    // A service's first sends to a full target: a burst from every free slot, answered tens of ms later (the target's
    // queue, the service's own), the target's bucket taking the first ones. `send` counts sends each ms, `answer`
    // feeds answers to sends of a given ms.
    function flood() {
      const probe = new CapacityProbe();
      probe.answered(true, 0, 0);
      const send = (from: number, to: number, perMs: number) => {
        for (let now = from; now <= to; now++) for (let i = 0; i < perMs; i++) probe.sent(now);
      };
      const answer = (accepted: boolean, sentAt: number, count: number, at: number) => {
        for (let i = 0; i < count; i++) probe.answered(accepted, sentAt, at);
      };
      return { probe, send, answer };
    }

    /** The flood of the first case below, its answers all in by 55 ms: testing from 122 ms. */
    function testing() {
      const f = flood();
      f.send(0, 30, 2);
      f.answer(true, 5, 40, 50);
      f.answer(false, 25, 21, 55);
      f.send(56, 85, 2);
      f.answer(true, 60, 10, 120);
      f.answer(false, 70, 16, 122);
      expect(f.probe.modeAt(122)).toBe('testing');
      return f;
    }

    it('keeps the first sample after idle open until the target\'s burst is spent, then tests on refusals that settle it', () => {
      const { probe, send, answer } = flood();
      // 62 sends in the first 31 ms: the target's bucket takes 40, refuses the rest.
      send(0, 30, 2);
      answer(true, 5, 40, 50);
      // Forty accepts are not enough to close it: they are the bucket's.
      expect(probe.modeAt(50)).toBe('free');
      answer(false, 25, 10, 55);
      // Ten refusals: the bucket is spent, and it closes without the dozen answers still to come (it starts no test).
      expect(probe.modeAt(55)).toBe('free');
      // The next sample counts 60 sends over 31 ms (1,935 a second); its first 25 answers: 10 accepts, 15 refusals.
      send(56, 85, 2);
      answer(true, 60, 10, 120);
      answer(false, 70, 15, 121);
      expect(probe.modeAt(121)).toBe('free');
      answer(false, 80, 1, 122);
      // 16 refusals of 60 sends: over a quarter whatever the 34 answers still to come say. The test starts, paced as if
      // they were all refusals (1,935 a second × 10 ÷ 60 × 1.05 = 339), not at the 10 of 26 answered (781).
      expect(probe.modeAt(122)).toBe('testing');
      expect(probe.rateAt(122)).toBeCloseTo(((60_000 / 31) * 10 * 1.05) / 60, 6);
    });

    it('judges the test against all the answers of the sample that started it, those that came during the test too', () => {
      const { probe, answer } = testing();
      // The 34 answers still to come are refusals: the sample accepted 10 of 60 (323 a second), not 10 of 26 (744).
      answer(false, 82, 34, 130);
      // The test's sends, every fifth refused: 4 of 5 accepted, 267 a second of its 333. Against 744 that looks as if
      // accepts fell with the sends; against 323 they held: full.
      const modes = new Set<string>();
      let n = 0;
      for (let now = 131; now <= 700; now++) {
        if (now >= 161 && (now - 161) % 3 === 0) answer(++n % 5 !== 0, now - 30, 1, now);
        if ((now - 131) % 3 === 0) probe.sent(now);
        modes.add(probe.modeAt(now));
      }
      expect([...modes]).toEqual(['testing', 'paced']);
    });

    it('waits for the answers of a sample sent while the target was slow to answer, though they come far later than usual', () => {
      const { probe, send, answer } = flood();
      // Quiet at first: 40 answers a ms after their sends, 10 of them refused (the first sample after idle closes).
      send(0, 30, 2);
      answer(true, 29, 30, 31);
      answer(false, 30, 10, 31);
      expect(probe.modeAt(31)).toBe('free');
      // Then a flood whose answers take 120 ms, where the usual latency is 1 ms: the sample's 60 sends go unanswered for
      // far longer than four usual latencies, and it waits for them rather than close on none.
      send(32, 62, 2);
      for (let now = 63; now < 180; now++) probe.modeAt(now);
      answer(true, 40, 12, 180);
      answer(false, 50, 48, 181);
      // All in: 48 of 60 refused. The test starts on them.
      expect(probe.modeAt(181)).toBe('testing');
    });

    it("counts a test's sends once those before it had two answer latencies to reach the target", () => {
      const { probe, answer } = testing();
      // Answers came 50–65 ms after their sends: the test counts from about 100 ms on. The flood's tail keeps the target
      // full until 220, so the test's first sends are refused; the sends counted, after, are all accepted: full.
      for (let now = 123; now <= 600; now++) {
        if (now >= 153 && (now - 153) % 3 === 0) answer(now - 30 >= 220, now - 30, 1, now);
        if ((now - 123) % 3 === 0) probe.sent(now);
      }
      expect(probe.modeAt(600)).toBe('paced');
    });
  });
});

