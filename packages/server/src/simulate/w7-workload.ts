import type { RetryPolicy } from '@retryd/core';

// W7 of WORKLOADS.md ("partial failure: protection must never starve a target that answers"), as the simulation runs
// it: the cases, the protection designs and the aims, as plain data. The model is w7-model.ts.

/** Every task's policy (WORKLOADS.md W7): EXPONENTIAL from 20 ms, ×2, up to 1 s, 30 attempts, FULL jitter. */
export const W7_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 30,
  backoffType: 'EXPONENTIAL',
  initialDelayMs: 20,
  multiplier: 2,
  maxDelayMs: 1_000,
  jitterType: 'FULL',
});

/**
 * Attempts the model's service has in flight at once (its dispatch concurrency), in every case but e. The service's
 * default is {@link W7_SERVICE_CONCURRENCY}.
 */
export const W7_CONCURRENCY = 64;
/**
 * The service's default dispatch concurrency (`DEFAULT_CONFIG.concurrency`, a test checks they agree), which case e runs
 * with: e is about a downstream whose latency grows past 200 in flight, which {@link W7_CONCURRENCY} never reaches.
 */
export const W7_SERVICE_CONCURRENCY = 256;
/**
 * The service's default attempt timeout, in ms (`DEFAULT_CONFIG.attemptTimeoutMs`, `--attempt-timeout`; a test checks
 * they agree): an attempt not answered by then fails, and its retry is due by the policy while the downstream may still
 * be working on it.
 */
export const W7_ATTEMPT_TIMEOUT_MS = 30_000;
/** Default tasks per case: the CI-sized run of WORKLOADS.md. */
export const DEFAULT_W7_TASKS = 2_000;
/** Case d's capacity in requests per second, served from a bucket of a tenth of a second's worth (as bench/service/w7.mjs's downstream). */
export const W7_CAPACITY_PER_SECOND = 500;
export const W7_CAPACITY_BURST = 50;
/** Case e: the requests the downstream serves at once; more wait in its queue. */
export const W7_SLOW_IN_FLIGHT = 200;
/**
 * Case e: how long the downstream takes to serve one request, in ms, so that its capacity is 200 ÷ 0.2 s = 1,000
 * requests/s. 200 ms, not the 20 ms of a fast call, for two reasons. The model's network takes about 20 ms there and
 * back, time a request is in flight without using the downstream: at 20 ms a dispatcher needs about 400 in flight to
 * keep 200 at the downstream (the service's 256 would reach 64% of the capacity however it behaved), at 200 ms about
 * 220. And 2,000 tasks are then a backlog of 2 s, ten calls long: goodput, which counts from 0, pays the first call's
 * round trip once (about 220 ms, a tenth), where at 20 ms the whole backlog would take a few round trips.
 */
export const W7_SLOW_BASE_MS = 200;
/** Case e's capacity in requests per second: {@link W7_SLOW_IN_FLIGHT} ÷ {@link W7_SLOW_BASE_MS}. */
export const W7_SLOW_CAPACITY_PER_SECOND = (W7_SLOW_IN_FLIGHT * 1_000) / W7_SLOW_BASE_MS;
/** Case g: the targets answering `200` at once beside the overloaded one. */
export const W7_GOOD_TARGETS = 9;
/** Case f runs this long (virtual ms): the aim is a number of calls an hour. */
export const W7_DEAD_MS = 3_600_000;
/** Case f's aim: at most this many calls in its hour. */
export const W7_DEAD_CALLS_AIM = 100;
/** Every other case stops here (virtual ms) if tasks are still pending, and reports how many were done. */
export const W7_TIME_CAP_MS = 300_000;

/** What a case's downstream does with each request. */
export type W7Downstream =
  /** `503` to the first `failFirst` requests of each key, then `200`. */
  | { kind: 'not-ready'; failFirst: number }
  /** `503` to a share of requests, drawn independently for each. */
  | { kind: 'random'; failShare: number }
  /** `200` while a token bucket of `perSecond` (and `burst`) has a token, `503` without Retry-After beyond. */
  | { kind: 'overload'; perSecond: number; burst: number }
  /** `503` to everything. */
  | { kind: 'dead' }
  /** `200` to everything, at once. */
  | { kind: 'ok' }
  /**
   * `200` to everything, each request served in `baseMs` once it has one of `inFlight` places; the requests beyond wait
   * in a queue, first come first served, so that latency grows with the requests in flight past `inFlight`. A request
   * whose caller gave up (its attempt timed out) keeps its place: the downstream cannot tell.
   */
  | { kind: 'slow'; inFlight: number; baseMs: number };

/** What a design must do beside `none` in a case (WORKLOADS.md W7, as bench/service/w7.mjs judges it). */
export const W7Aim = {
  /** Every task ended within 1.2× none's time, with no more calls per task. */
  NEAR_NONE: 'near-none',
  /** Every task ended no later than none's, with fewer calls per task. */
  SOONER_WITH_FEWER_CALLS: 'sooner-with-fewer-calls',
  /** Goodput at least 90% of the capacity while the backlog lasts, at most 1.2 calls per task. */
  GOODPUT: 'goodput',
  /** At most {@link W7_DEAD_CALLS_AIM} calls in the hour. */
  FEW_CALLS: 'few-calls',
  /** Case e: goodput at least 90% of the slow downstream's capacity, and no attempt timed out. */
  GOODPUT_NO_TIMEOUTS: 'goodput-no-timeouts',
  /** Case g: the good targets' lag p99 within 1.2× of theirs with the bad target answering at once like them. */
  OTHERS_UNAFFECTED: 'others-unaffected',
} as const;
export type W7Aim = (typeof W7Aim)[keyof typeof W7Aim];

/** One case of W7. */
export interface W7Case {
  id: string;
  title: string;
  /** The downstream of the case's target (g: of its one bad target). */
  downstream: W7Downstream;
  aim: W7Aim;
  /** Attempts the service has in flight at once. Default {@link W7_CONCURRENCY}. */
  concurrency?: number;
  /**
   * Targets beside the case's, each answering `200` at once (g). With them, every other task (the even ones) goes to the
   * case's target, the odd ones to these in turn: half the tasks on the bad target, as many on the good ones together.
   * Default 0: one target.
   */
  goodTargets?: number;
}

/** The cases, in the order tables list them. c (W3's outage, then a recovery with `429` and `Retry-After`) is not modelled. */
export const W7_CASES: readonly W7Case[] = Object.freeze([
  { id: 'a1', title: 'not ready: 503 to the 1st request of each key', downstream: { kind: 'not-ready', failFirst: 1 }, aim: W7Aim.NEAR_NONE },
  { id: 'a2', title: 'not ready: 503 to the first 2 requests of each key', downstream: { kind: 'not-ready', failFirst: 2 }, aim: W7Aim.NEAR_NONE },
  { id: 'b20', title: 'partly failing: 503 to 20% at random', downstream: { kind: 'random', failShare: 0.2 }, aim: W7Aim.NEAR_NONE },
  { id: 'b50', title: 'partly failing: 503 to 50% at random', downstream: { kind: 'random', failShare: 0.5 }, aim: W7Aim.NEAR_NONE },
  { id: 'b90', title: 'partly failing: 503 to 90% at random', downstream: { kind: 'random', failShare: 0.9 }, aim: W7Aim.SOONER_WITH_FEWER_CALLS },
  {
    id: 'd',
    title: `overload: ${W7_CAPACITY_PER_SECOND} requests/s, 503 beyond`,
    downstream: { kind: 'overload', perSecond: W7_CAPACITY_PER_SECOND, burst: W7_CAPACITY_BURST },
    aim: W7Aim.GOODPUT,
  },
  {
    id: 'e',
    title: `slow under load: ${W7_SLOW_IN_FLIGHT} served at once in ${W7_SLOW_BASE_MS} ms, the rest queued, no errors`,
    downstream: { kind: 'slow', inFlight: W7_SLOW_IN_FLIGHT, baseMs: W7_SLOW_BASE_MS },
    aim: W7Aim.GOODPUT_NO_TIMEOUTS,
    concurrency: W7_SERVICE_CONCURRENCY,
  },
  { id: 'f', title: 'dead for an hour: 503 to everything', downstream: { kind: 'dead' }, aim: W7Aim.FEW_CALLS },
  {
    id: 'g',
    title: `one bad target among good ones: d on one target, 200 at once on ${W7_GOOD_TARGETS} others, half the tasks on the bad one`,
    downstream: { kind: 'overload', perSecond: W7_CAPACITY_PER_SECOND, burst: W7_CAPACITY_BURST },
    aim: W7Aim.OTHERS_UNAFFECTED,
    goodTargets: W7_GOOD_TARGETS,
  },
]);

/** Every case id, in display order. */
export const W7_CASE_IDS: readonly string[] = Object.freeze(W7_CASES.map((c) => c.id));

/** The protection designs, in the order tables list them; `none` is every other's reference. */
export const W7Design = {
  /** Protections off: every task retried on its own schedule. */
  NONE: 'none',
  /**
   * The service's defaults as it runs them: breaker (100 in a row, one good probe closes it), storm detection, the
   * ready-attempt rule, no retry budget, the capacity probe pacing a full target, 10 in flight until a first success.
   */
  LANDED: 'landed',
  /** The defaults before the capacity probe: retry budget and pacer on, 50 in a row, three good probes, no slow start. */
  PREVIOUS: 'previous',
  /** Google SRE client-side adaptive throttling alone. */
  SRE: 'sre',
  /** The retry budget and its pacer alone. */
  BUDGET: 'budget',
  /** `previous` without the retry budget, its breaker opening on 100 counted failures in a row and closing on one good probe. */
  BREAKER_ONLY: 'breaker-only',
} as const;
export type W7Design = (typeof W7Design)[keyof typeof W7Design];

/** Every design, in display order. */
export const W7_DESIGNS: readonly W7Design[] = Object.freeze(Object.values(W7Design));
