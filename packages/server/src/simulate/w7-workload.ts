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

/** Attempts the service has in flight at once (its dispatch concurrency). */
export const W7_CONCURRENCY = 64;
/** Default tasks per case: the CI-sized run of WORKLOADS.md. */
export const DEFAULT_W7_TASKS = 2_000;
/** Case d's capacity in requests per second, served from a bucket of a tenth of a second's worth (as bench/service/w7.mjs's downstream). */
export const W7_CAPACITY_PER_SECOND = 500;
export const W7_CAPACITY_BURST = 50;
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
  | { kind: 'dead' };

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
} as const;
export type W7Aim = (typeof W7Aim)[keyof typeof W7Aim];

/** One case of W7. */
export interface W7Case {
  id: string;
  title: string;
  downstream: W7Downstream;
  aim: W7Aim;
}

/**
 * The cases, in the order tables list them. c (W3's outage), e (slow under load: latency that grows past 200 in flight,
 * which a dispatcher of {@link W7_CONCURRENCY} never reaches) and g (several targets) are not modelled.
 */
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
  { id: 'f', title: 'dead for an hour: 503 to everything', downstream: { kind: 'dead' }, aim: W7Aim.FEW_CALLS },
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
