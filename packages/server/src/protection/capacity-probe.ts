/** Options of {@link CapacityProbe}. */
export interface CapacityProbeOptions {
  /** The fewest sends a sample counts before it waits for their answers. Default 40. */
  minAnswers?: number;
  /**
   * The accepts a sample should hold at the share accepted last measured: it counts `minAccepts ÷ that share` sends
   * (at least `minAnswers`, at most 800), a number fixed when it opens. Default 40.
   */
  minAccepts?: number;
  /** A sample closes after this long whatever it holds, in ms (with fewer answers than `minAnswers`, it says nothing). Default 2,000. */
  maxSampleMs?: number;
  /** A sample with a larger share of counted failures starts a test. Default 0.7. */
  testAbove?: number;
  /** Sends allowed above what the target accepted, while it is paced. Default 1.05. */
  headroom?: number;
  /** After a test found failures in proportion to sends, no other test for this long, doubled each time. Default 4,000 ms. */
  quietMs?: number;
  /** The longest quiet period. Default 60,000 ms. */
  maxQuietMs?: number;
}

const DEFAULTS: Required<CapacityProbeOptions> = {
  minAnswers: 40,
  minAccepts: 40,
  maxSampleMs: 2_000,
  testAbove: 0.25,
  headroom: 1.05,
  quietMs: 4_000,
  maxQuietMs: 60_000,
};

/**
 * A sample is worth a test when it was sent more than this times the most the target was seen to accept: a full target
 * is sent more than it takes (even a busy service that can send it only twice its capacity), while a target failing
 * under a fifth of its calls at random, or one in the tail of its backlog (sends falling), is not worth the test's cost.
 */
const TEST_ABOVE_PEAK = 1.25;

/** While paced, the pace rises by a tenth at most this often, in ms. */
const RAISE_EVERY_MS = 250;

/** A paced sample sent at least this share of the pace was bound by it: only then may the pace rise. */
const BOUND_SHARE = 0.8;

/**
 * A test's sample with at least this share accepted found the target full. A target failing calls at random now and
 * then looks full in one test's few dozen answers; pacing it, the probe finds accepts falling with the pace within a
 * few samples, and frees it (`not-full`).
 */
const FULL_SHARE = 0.9;

/** The buckets accepts are counted in for the peak accept rate, in ms. */
const PEAK_BUCKET_MS = 250;
/** How fast the peak accept rate is forgotten: halved every 30 s. */
const PEAK_HALF_LIFE_MS = 30_000;

/** How long a paced target is sent well below its pace before it is freed, in ms. */
const UNBOUND_MS = 2_000;
/** The shortest sample, in ms. */
const MIN_SAMPLE_MS = 30;
/** The most sends a sample counts. */
const MAX_ANSWERS = 800;
/**
 * A sample whose sends are not all answered this many times the answers' usual latency after its last send is judged
 * on the answers it has: an attempt may end without an answer the probe is told of. At least {@link MIN_SAMPLE_MS}, and
 * only once half its sends were answered: the missing ones are then a few lost, not still on their way. A service's
 * first sends to a target wait for its connections to open, and its answers' usual latency, learnt from the few sent
 * before, is a fraction of theirs: closed on it, a sample held none of its answers and said nothing, sent unpaced.
 */
const GRACE_LATENCIES = 4;

/**
 * What the probe is doing: sending freely, cutting its sends for one sample to test the target, sending freely again
 * for one sample to measure once more what it measured before a test that found accepts falling, or pacing it.
 */
export type CapacityMode = 'free' | 'testing' | 'confirming' | 'paced';

/** One sample: the sends of an interval, and the answers to them. */
interface Sample {
  start: number;
  /**
   * The last ms whose sends it counts (Infinity while it still counts them): sends after it are not counted, and the
   * sample waits for the answers to the sends it counted.
   */
  sendsUntil: number;
  sends: number;
  accepts: number;
  rejects: number;
  /** Answers to its sends that say nothing of load (see {@link CapacityProbe.skipped}). */
  skipped: number;
}

/** A sample closed before all its answers came (see `settled`), which goes on counting them, and its send rate. */
interface Unsettled {
  sample: Sample;
  sendRate: number;
}

/** What a closed sample measured. */
interface Measured {
  /** Sends per second. */
  sendRate: number;
  /** The share of its answered sends that were accepted. */
  accepted: number;
  /** Accepts per second: `sendRate × accepted`. */
  acceptRate: number;
  /**
   * A sample closed before all its answers came (see `settled`): the accepts per second as if every answer still to
   * come were a refusal, what a test paces at. A full target sent in bursts answers its refusals last, so the answers
   * in say more was accepted than was: a test paced at them would not cut the sends, and say nothing.
   */
  acceptRateAtLeast?: number;
}

/**
 * Tells a target that is **full** from one that **fails a share of its calls**, when both answer with bare failures
 * (a `503` without `Retry-After`), and paces sends to what a full one accepts.
 *
 * The two look alike in any one sample: most calls fail. They differ in how accepts follow sends. A target that fails
 * a share of calls at random accepts that share of whatever it is sent: cut the sends, and accepts fall as much. A full
 * one accepts its capacity whatever it is sent, as long as it is sent more than that: cut the sends, and accepts hold.
 * So when more than `testAbove` of a sample's answers fail, and it was sent more than 1.25× the most the target was
 * seen to accept (a full target is sent more than it takes, even by a busy service that can send it only twice its
 * capacity; one failing at random in the tail of a backlog is not worth the test's cost), the probe paces the sends for
 * one sample, the test, at what the sample accepted plus `headroom`, as a full target would be paced. A test that got
 * nearly all its sends accepted found the target full (a target failing a share at random fails that share at any
 * pace); otherwise it compares accepts per second, the line between "held" and "fell" the geometric mean of the two
 * outcomes, whatever the test's pace actually achieved. Held: the target is full, and sends are paced at the most it
 * accepted (in the test or the sample before, which refused sends, so accepted what the target takes) plus
 * `headroom`. Fell: the sample before is measured once more (a first sample can hold a burst that a queue or a
 * bucket absorbed, which makes accepts after it look as if they fell, never as if they held), and the test is judged
 * against the one of the two that accepted less; fell again, the target answers, and is left alone (no other test for `quietMs`, doubling each
 * time). While paced, the pace follows what the target accepts: up by a tenth (until the pace first refused sends,
 * half the way to the most it was seen to accept, when more) after a sample sent at 80% of it or more with under 3% refused (it may have room again; at most every 250 ms, since a short sample fits in a target's
 * own burst), down to its accepts plus `headroom` after one with over 5% (so a full target settles with about
 * `headroom − 1` of its sends refused, not the up to 15% a wider band let it keep); when accepts fall to half of what
 * the test found in a sample sent at the pace (it was not full after all, or it went down, which the breaker sees) or the pace no longer binds, sends are free again.
 *
 * A sample is the sends of an interval and **all** the answers to those sends: it counts sends until it holds a number
 * fixed when it opens (enough to hold `minAccepts` at the share last measured; a test's, at the share a full target
 * would accept at the test's pace), then waits for their answers, and is judged when every one came (or a few answer
 * latencies after its last send, or after `maxSampleMs`, or once the answers still to come cannot change what it says:
 * the first after idle, which starts no test, at `minAnswers` with a quarter of them refused; another, once its
 * refusals alone are over `testAbove` of its sends, its test then paced as if every answer still to come were a refusal): short when the target accepts much,
 * as long as it takes to count enough accepts when it accepts little. A test counts its sends from two answer
 * latencies after it begins: the sends before it still reach the target for about one, and use what it takes; one
 * started by a sample closed early is judged against all that sample's answers, those that came during the test too.
 * Judged on its first answers instead, it would be wrong exactly when it matters: a service sends a full target bursts of a claim's worth, the target takes the first of each burst and
 * refuses the rest, and the refusals are answered last, so a sample closed on its first answers saw a full target
 * accept everything. "Accepted" is a success, "rejected" a counted failure; the caller leaves out the answers that say
 * nothing of load (a key not ready yet, a probe while the breaker holds the target, any before a first success), and
 * tells the probe of them ({@link CapacityProbe.skipped}), so that it knows when a sample's answers are all in.
 * Time is given by the caller; pure otherwise. Chosen from `retryd simulate w7` (docs/simulate.md), as the design
 * `capacity`.
 */
export class CapacityProbe {
  private readonly o: Required<CapacityProbeOptions>;
  private sample: Sample = { start: -Infinity, sendsUntil: Infinity, sends: 0, accepts: 0, rejects: 0, skipped: 0 };
  /** The answers (accepted or refused) the open sample counts sends for. */
  private needed: number;
  /** The share of a sample's sends whose answers count (the others the caller skips), as last measured. */
  private countedShare = 1;
  /**
   * What the samples since `since` measured when they held too few accepts to go by, carried into the next: a sample
   * sized for the share accepted before the target filled up would otherwise say nothing, and the next start from nothing.
   */
  private carried: { since: number; sends: number; ms: number; accepts: number; rejects: number } | null = null;
  /** The usual time from a send to its answer, in ms (a moving average), for how long a sample waits for the last. */
  private latency = 0;
  private mode: CapacityMode = 'free';
  private pace: number | null = null;
  /**
   * While testing, after a sample closed before all its answers came (see {@link settled}): that sample, which goes on
   * counting them, so that the test is judged against all of them.
   */
  private unsettled: Unsettled | null = null;
  /** While testing: the sample that started it; while confirming, the test's too. */
  private before: Measured = { sendRate: 0, accepted: 0, acceptRate: 0 };
  private test: Measured = { sendRate: 0, accepted: 0, acceptRate: 0 };
  /** While paced: the accepts per second the test found; accepts well below them mean the target is not full. */
  private fullAcceptRate = 0;
  private quietUntil = -Infinity;
  private quietMs: number;
  /** While paced: when the pace was last set, raised or lowered. */
  private pacedAt = -Infinity;
  /** While paced: whether a sample at the pace had sends refused (it was lowered to the accepts) since the test. */
  private paceRefused = false;
  /** While paced: since when its sends have been well below the pace, or null. */
  private unboundSince: number | null = null;
  /**
   * The most accepts per second counted in a {@link PEAK_BUCKET_MS} bucket (by answer time), as of `peakSince`: what the
   * target has shown it can take. A burst a queue absorbs in a few ms weighs a bucket's worth, no more.
   */
  private peak = 0;
  private peakSince = 0;
  private bucketStart = -Infinity;
  private bucketAccepts = 0;
  /** Whether an answer was given yet: sends are measured from the first. */
  private fed = false;
  /** When the last send was counted. */
  private lastSentAt = -Infinity;
  /**
   * Whether the open sample is the first since sends began or came back after {@link UNBOUND_MS} without any: it holds
   * what the target's own bucket or queue absorbed while idle (a tenth of a second's worth, taken in its first ms), so
   * its accepts say more than the target takes, and a test paced at them would not bind. It starts no test.
   */
  private afterIdle = true;

  constructor(options: CapacityProbeOptions = {}) {
    this.o = { ...DEFAULTS, ...options };
    this.quietMs = this.o.quietMs;
    this.needed = this.o.minAnswers;
  }

  /** An attempt went out at `now`. */
  sent(now: number): void {
    // Sends before the first answer it is given are not measured: the caller feeds none until its target answered once
    // (and a sample opened while it holds back would average the wait into the send rate).
    if (!this.fed) return;
    this.closeIfOld(now);
    if (now - this.lastSentAt >= UNBOUND_MS && this.sample.sends === 0) this.afterIdle = true;
    this.lastSentAt = now;
    const s = this.sample;
    if (s.start === -Infinity) s.start = now;
    // Past its last ms of sends, the sample waits for their answers; sends in that ms still count (a burst goes at once).
    // Before its first (a test's, while the sends before it drain), none count.
    if (now > s.sendsUntil || now < s.start) return;
    s.sends++;
    // Not before MIN_SAMPLE_MS: rates over a few ms are a burst's (a queue drained at once), not the target's.
    if (s.sendsUntil === Infinity && s.sends * this.countedShare >= this.needed && now - s.start >= MIN_SAMPLE_MS) s.sendsUntil = now;
  }

  /** The attempt sent at `sentAt` was answered at `now`: `accepted` when it succeeded, not when it is a counted failure. */
  answered(accepted: boolean, sentAt: number, now: number): void {
    if (!this.fed) {
      this.fed = true;
      this.sample.start = now;
    }
    this.closeIfOld(now);
    if (accepted) this.countAccept(1, now);
    const u = this.unsettled?.sample;
    if (u !== undefined && sentAt >= u.start && sentAt <= u.sendsUntil) {
      if (accepted) u.accepts++;
      else u.rejects++;
    }
    const s = this.sample;
    if (!this.answeredIn(s, sentAt, now)) return;
    if (accepted) s.accepts++;
    else s.rejects++;
    this.closeIfAnswered(s, now);
  }

  /**
   * The attempt sent at `sentAt` was answered at `now` with an answer that says nothing of load (not counted: a key not
   * ready yet, a neutral outcome, a probe of the breaker's): the sample it belongs to knows it need not wait for it.
   */
  skipped(sentAt: number, now: number): void {
    if (!this.fed) return;
    this.closeIfOld(now);
    const s = this.sample;
    if (!this.answeredIn(s, sentAt, now)) return;
    s.skipped++;
    this.closeIfAnswered(s, now);
  }

  /** Learns the answer's latency; whether an answer to a send at `sentAt` belongs to the open sample `s`. */
  private answeredIn(s: Sample, sentAt: number, now: number): boolean {
    this.latency += 0.1 * (now - sentAt - this.latency);
    return sentAt >= s.start && sentAt <= s.sendsUntil;
  }

  /**
   * Closes `s` once it counts no more sends and all of them were answered, or once the answers still to come cannot
   * change what it says (see {@link settled}).
   */
  private closeIfAnswered(s: Sample, now: number): void {
    if (now <= s.sendsUntil) return;
    if (s.accepts + s.rejects + s.skipped >= s.sends) this.close(now);
    else if (this.settled(s, now)) this.close(now, true);
  }

  /**
   * Whether the answers `s` still waits for cannot change what it says, sent freely: the first sample after idle,
   * which starts no test, once it holds `minAnswers` and a quarter of them refused (the target's own bucket or queue,
   * which it is there to hold, is spent: a sample after it that holds the rest of it finds more accepted than the
   * target takes); any other, once it holds half of them and a quarter of the accepts it is sized for, and refusals
   * above `testAbove` of all its sends (as if every answer still to come were an accept), sent above the peak: it starts
   * a test whatever those say. A service sending a target far past what it takes waits longest for its last answers
   * (the target's own queue, and its own), and every ms of that wait is a ms sent unpaced; a test needs no more
   * certainty.
   */
  private settled(s: Sample, now: number): boolean {
    if (this.mode !== 'free') return false;
    const answers = s.accepts + s.rejects;
    if (this.afterIdle) return answers >= this.o.minAnswers && s.rejects >= this.o.minAnswers / 4;
    if (answers < this.o.minAnswers / 2 || now < this.quietUntil || this.carried !== null || s.accepts < this.o.minAccepts / 4) return false;
    if (s.rejects <= this.o.testAbove * (s.sends - s.skipped)) return false;
    const sendRate = (s.sends * 1_000) / Math.max(1, s.sendsUntil + 1 - s.start);
    return sendRate > TEST_ABOVE_PEAK * this.peakAt(now);
  }

  /** The pace at `now`, in sends per second, or null when sends are free. */
  rateAt(now: number): number | null {
    this.closeIfOld(now);
    return this.pace;
  }

  /** What the probe is doing at `now`. */
  modeAt(now: number): CapacityMode {
    this.closeIfOld(now);
    return this.mode;
  }

  private closeIfOld(now: number): void {
    // Paced, and nothing sent for as long as sends well below the pace free it: its backlog is gone (or held by the
    // breaker), and the pace lapses with it rather than stay in the store's gate until traffic comes back to show it.
    if (this.mode === 'paced' && now - this.lastSentAt >= UNBOUND_MS) this.free(now, 'not-full');
    const s = this.sample;
    if (now - s.start >= this.o.maxSampleMs) return this.close(now);
    const halfAnswered = 2 * (s.accepts + s.rejects + s.skipped) >= s.sends;
    if (now > s.sendsUntil && halfAnswered && now - s.sendsUntil >= Math.max(MIN_SAMPLE_MS, GRACE_LATENCIES * this.latency)) this.close(now);
  }

  /** Closes the open sample and concludes it; `settled` when it closed before all its answers came (see {@link settled}). */
  private close(now: number, settled = false): void {
    const s = this.sample;
    this.sample = { start: now, sendsUntil: Infinity, sends: 0, accepts: 0, rejects: 0, skipped: 0 };
    if (s.start === -Infinity) return;
    const afterIdle = this.afterIdle && s.sends > 0;
    if (afterIdle) this.afterIdle = false;
    if (s.accepts + s.rejects + s.skipped > 0) this.countedShare = Math.max(0.05, (s.accepts + s.rejects) / (s.accepts + s.rejects + s.skipped));
    // Over the ms it counted sends in (its last one whole), not the wait for their answers.
    const c = { since: s.start, sends: s.sends, ms: Math.max(1, Math.min(now, s.sendsUntil + 1) - s.start), accepts: s.accepts, rejects: s.rejects };
    const carried = this.carried;
    this.carried = null;
    if (carried !== null) {
      c.since = carried.since;
      c.sends += carried.sends;
      c.ms += carried.ms;
      c.accepts += carried.accepts;
      c.rejects += carried.rejects;
    }
    const answers = c.accepts + c.rejects;
    if (answers < this.o.minAnswers / 2) {
      // Too little to say anything; a test that got this little did not bind either.
      if (this.mode === 'testing' || this.mode === 'confirming') this.free(now, 'inconclusive');
      return;
    }
    const accepted = c.accepts / answers;
    this.needed = this.answersFor(accepted);
    // Too few accepts to go by, and time left to count more (a test's few accepts are its answer): carried on.
    const fewest = this.mode === 'free' ? this.o.minAccepts / 4 : this.o.minAccepts / 2;
    if (this.mode !== 'testing' && c.accepts < fewest && answers < MAX_ANSWERS && now - c.since < this.o.maxSampleMs) {
      this.carried = c;
      this.needed = Math.max(this.o.minAnswers / 2, this.needed - answers);
      return;
    }
    const sendRate = (c.sends * 1_000) / c.ms;
    // Enough to go by: the answers, and half the accepts a sample is sized for (a quarter for starting a test: its own
    // sample measures again; one cut short by maxSampleMs at a low rate holds a handful, whose share is noise), and not
    // the first sample after idle.
    const enough = (settled || answers >= this.o.minAnswers) && c.accepts >= fewest && !(afterIdle && this.mode === 'free');
    const m: Measured = { sendRate, accepted, acceptRate: sendRate * accepted };
    if (settled) m.acceptRateAtLeast = (sendRate * c.accepts) / Math.max(1, c.sends - s.skipped);
    this.concludeSample(m, enough, settled || answers >= this.o.minAnswers, now, settled ? { sample: s, sendRate } : null);
  }

  private concludeSample(m: Measured, enough: boolean, answered: boolean, now: number, unsettled: Unsettled | null = null): void {
    if (this.mode === 'testing') {
      const started = this.unsettled;
      this.unsettled = null;
      if (started !== null) {
        // The sample that started it, on all the answers that came since: its first answers were its accepts.
        const { accepts, rejects } = started.sample;
        const accepted = accepts / Math.max(1, accepts + rejects);
        this.before = { sendRate: started.sendRate, accepted, acceptRate: started.sendRate * accepted };
      }
      // Too few answers came: it says nothing. Few accepts are an answer (the sample was sized for a full target's).
      if (!answered) return this.free(now, 'inconclusive');
      // Nearly all accepted once sent what it accepted: full. A target failing a share of calls at random fails that
      // share at any pace, even when the test's sends fell short of its pace (its tasks waiting out their backoff).
      if (m.accepted >= FULL_SHARE) return this.full(m, this.before, now);
      // Accepts per second say something only of sends cut by a quarter or more: against a smaller cut, a sample before
      // that was unlucky (a target failing a fifth at random refusing a third of it) makes the next look as if it held.
      if (m.sendRate > 0.75 * this.before.sendRate) return this.free(now, 'inconclusive');
      // Held against the sample before: full, at once. A first sample can hold a burst a queue or a bucket absorbed,
      // which makes accepts after it look as if they fell, never as if they held: only a fall is measured again.
      if (this.held(m, this.before)) return this.full(m, this.before, now);
      this.test = m;
      this.mode = 'confirming';
      this.pace = null;
      // It measures the "before" again: sized for the share accepted then, not the halved pace's.
      this.needed = this.answersFor(this.before.accepted);
      return;
    }
    if (this.mode === 'confirming') {
      if (!enough) return this.free(now, 'inconclusive');
      // Sent freely again: the sample before the test is measured once more, after it, and the one that accepted less
      // stands for both. A first sample can hold a burst that a queue or a bucket absorbed, which no later sample
      // repeats (a target's bucket of a tenth of a second's worth, emptied in the first ms of a 30 ms sample, doubled
      // the accepts it showed); it only ever adds accepts, while a target failing at random accepts its share of the
      // same sends in both.
      const before = m.acceptRate < this.before.acceptRate ? m : this.before;
      return this.held(this.test, before) ? this.full(this.test, before, now) : this.free(now, 'answering');
    }
    if (!enough) return;
    if (this.mode === 'paced') {
      const pace = this.pace as number;
      // Judged only on a sample sent at the pace: one whose sends paused (the service's event loop busy for a moment)
      // accepted less for it, which says nothing of the target, and freed, it was sent a flood.
      if (m.sendRate >= BOUND_SHARE * pace && m.acceptRate < 0.5 * this.fullAcceptRate) return this.free(now, 'not-full');
      // Sent well below the pace (the backlog is waiting out its backoff, or gone), or below it with nothing refused (it
      // takes all it is sent: the pace rises only while it binds, so it no longer does). Freed once that has lasted
      // UNBOUND_MS (a backlog's retries come back in waves, and freeing it between two sends the next wave unpaced).
      if (m.sendRate < 0.5 * pace || (m.sendRate < BOUND_SHARE * pace && m.accepted > 0.97)) {
        this.unboundSince ??= now;
        if (now - this.unboundSince >= UNBOUND_MS) return this.free(now, 'not-full');
        return;
      }
      this.unboundSince = null;
      // The band is narrow: every refused send past it is a call the target did not want. Raised only when the sends
      // reached the pace: a pace its sends never reach shows no room, and one raised on and on past them frees the
      // target (sends below half the pace) while its backlog still waits, whose next burst the target refuses.
      if (m.accepted > 0.97) {
        // At most once every RAISE_EVERY_MS: a sample can be a few dozen ms, which a target's own bucket absorbs. A
        // tenth; until the pace first refused sends, half the way to the most the target was seen to accept when that
        // is more: a test paced at what a flood's first answers showed (its refusals answered last) starts low, and a
        // tenth at a time took 2 s to climb to a capacity the target had already shown, with the backlog waiting. Not
        // after: the peak holds the burst a target's bucket absorbed, and climbing halfway to it each time overshot.
        if (m.sendRate >= BOUND_SHARE * pace && now - this.pacedAt >= RAISE_EVERY_MS) {
          this.pace = this.paceRefused ? pace * 1.1 : Math.max(pace * 1.1, (pace + this.peakAt(now)) / 2);
          this.pacedAt = now;
        }
      } else if (m.accepted < 0.95) {
        // The pace times the share accepted, not this sender's accepts: where several instances share one pace (the
        // store's gate), each sends a part of it, but the share accepted is the target's, the same for all of them.
        this.pace = Math.max(1, pace * m.accepted * this.o.headroom);
        this.pacedAt = now;
        this.paceRefused = true;
      }
      return;
    }
    const peak = this.peakAt(now);
    // A full target is sent above what it ever accepted; sends below TEST_ABOVE_PEAK times that are not worth a test (a
    // target failing calls at random, in the tail of its backlog, would pay for it in time).
    if (1 - m.accepted > this.o.testAbove && now >= this.quietUntil && m.sendRate > TEST_ABOVE_PEAK * peak) {
      this.mode = 'testing';
      this.carried = null;
      this.before = m;
      this.unsettled = unsettled;
      // What it accepted plus the headroom, as it would be paced: a full target still gets about what it takes (so its
      // accepts hold, and the test's sends are hardly refused), one failing at random loses its share of them.
      this.pace = Math.max(1, (m.acceptRateAtLeast ?? m.acceptRate) * this.o.headroom);
      // Sized for the share a full target would accept at that pace: one that answers at random gives a handful of
      // accepts in it, and the test is as short as a sample sent freely.
      this.needed = this.answersFor(Math.min(1, (m.acceptRateAtLeast ?? m.acceptRate) / this.pace));
      // Counted from two answer latencies on: the sends before the test still reach the target for about one, and use
      // what it takes, so that the test's own sends would be refused as if its accepts fell with them.
      this.sample.start = now + Math.max(MIN_SAMPLE_MS, 2 * this.latency);
    }
  }

  /** The peak accept rate as of `now`: the busiest bucket's, halving every {@link PEAK_HALF_LIFE_MS}. */
  private peakAt(now: number): number {
    this.countAccept(0, now);
    return this.peak * 0.5 ** ((now - this.peakSince) / PEAK_HALF_LIFE_MS);
  }

  /** Counts `accepts` answered at `now` into their bucket, closing the buckets that ended into the peak. */
  private countAccept(accepts: number, now: number): void {
    if (now >= this.bucketStart + PEAK_BUCKET_MS) {
      const rate = (this.bucketAccepts * 1_000) / PEAK_BUCKET_MS;
      const decayed = this.peak * 0.5 ** ((this.bucketStart - this.peakSince) / PEAK_HALF_LIFE_MS);
      if (rate >= decayed) {
        this.peak = rate;
        this.peakSince = this.bucketStart;
      }
      this.bucketStart = now;
      this.bucketAccepts = 0;
    }
    this.bucketAccepts += accepts;
  }

  /** The answers a sample must hold for `minAccepts` at the share `accepted`. */
  private answersFor(accepted: number): number {
    return Math.min(MAX_ANSWERS, Math.max(this.o.minAnswers, Math.ceil(this.o.minAccepts / Math.max(accepted, 0.01))));
  }

  /**
   * Whether accepts held when sends fell from `before` to `test`. Answering, accepts fall with sends (their ratio is the
   * sends'); full, they hold (a ratio of 1). The line between is the geometric mean of the two, whatever the test's
   * pace actually achieved.
   */
  private held(test: Measured, before: Measured): boolean {
    return test.acceptRate >= Math.sqrt(test.sendRate / before.sendRate) * before.acceptRate;
  }

  /**
   * The test found the target full: paced at the most it accepted, in the test or in the sample before (which refused
   * sends, so accepted what the target takes; the test's own sends may not have reached that, when its tasks were
   * waiting out their backoff, and a pace set from them would starve the backlog when it comes back).
   */
  private full(test: Measured, before: Measured, now: number): void {
    this.fullAcceptRate = test.acceptRate;
    this.paceRefused = false;
    this.pacedAt = now;
    this.mode = 'paced';
    this.carried = null;
    this.unboundSince = null;
    this.pace = Math.max(1, Math.max(test.acceptRate, before.acceptRateAtLeast ?? before.acceptRate) * this.o.headroom);
  }

  /**
   * Sends are free again: `answering` after a test that found accepts falling with sends (no other test for the quiet
   * period, doubled each time), `inconclusive` after a test that could not halve the sends or got too few answers (no
   * other for a quarter of the quiet period: a test that cannot bind would otherwise halve every other sample), `not-full` when a paced target no
   * longer acts full (it may be tested again at once).
   */
  private free(now: number, why: 'answering' | 'inconclusive' | 'not-full'): void {
    this.mode = 'free';
    this.pace = null;
    this.carried = null;
    this.unsettled = null;
    if (why === 'answering') {
      this.quietUntil = now + this.quietMs;
      this.quietMs = Math.min(this.o.maxQuietMs, this.quietMs * 2);
    } else if (why === 'inconclusive') {
      this.quietUntil = now + this.o.quietMs / 4;
    } else {
      this.quietMs = this.o.quietMs;
    }
  }

}
