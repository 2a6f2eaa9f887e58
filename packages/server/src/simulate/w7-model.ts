import { computeDelay, planRetry } from '@retryd/core';
import { EventQueue } from './event-queue.js';
import { networkDelay } from './network-delay.js';
import { DEFAULT_SIMULATION_SEED, deriveSeed, xoshiro128 } from './seeded-random.js';
import { simulationClock } from './simulation-clock.js';
import { AIM_TEXT, aimMet, goodputPerSecond } from './w7-aims.js';
import { downstreamAnswer } from './w7-downstream.js';
import { protectionFor } from './w7-protection.js';
import {
  DEFAULT_W7_TASKS,
  W7_CASES,
  W7_CONCURRENCY,
  W7_DEAD_MS,
  W7_DESIGNS,
  W7_POLICY,
  W7_TIME_CAP_MS,
  W7Design,
  type W7Case,
} from './w7-workload.js';

/** What {@link simulateW7} runs. */
export interface W7Options {
  /** Case ids (`W7_CASE_IDS`), in output order. Default all. */
  cases?: readonly string[];
  /** The designs beside `none`, which every case runs first as the reference. Default all of `W7_DESIGNS`. */
  designs?: readonly W7Design[];
  /** Tasks per case, all due at 0. Default {@link DEFAULT_W7_TASKS}. */
  tasks?: number;
  /** Seed of every draw. Default {@link DEFAULT_SIMULATION_SEED}. */
  seed?: number;
}

/** One design in one case. */
export interface W7Result {
  case: string;
  design: W7Design;
  tasks: number;
  /** Every task ended (succeeded, or ran out of attempts) before the run stopped. */
  finished: boolean;
  /** Virtual ms until the last task ended; when not finished, when the run stopped (f's hour, or the time cap). */
  timeMs: number;
  succeeded: number;
  /** Tasks that ran out of attempts. */
  exhausted: number;
  /** Tasks still waiting when the run stopped. */
  pending: number;
  /** Requests the downstream received (f: in its hour). */
  calls: number;
  callsPerTask: number;
  /** The most requests the downstream received in any 100 ms. */
  busiest100ms: number;
  /** Attempts the design refused locally (SRE throttling), each rescheduled by its task's policy. */
  refused: number;
  /** Case d: first successes per second while the backlog lasted; null for the other cases. */
  goodputPerSecond: number | null;
  /** timeMs ÷ none's; null for f (every run lasts its hour) or when none did not finish. */
  timeRatio: number | null;
  /** calls ÷ none's (null when none made none). */
  callsRatio: number | null;
  /** The case's aim (WORKLOADS.md W7), in words. */
  aim: string;
  /** Whether this design met it beside none: null for none itself, and when it cannot be told. */
  met: boolean | null;
}

type RunFigures = Omit<W7Result, 'timeRatio' | 'callsRatio' | 'aim' | 'met'>;

// An event is `task × 4 + kind`: a task's retry falls due; its request reaches the downstream; the answer reaches the
// service; a hold of the target ends (task 0).
const DUE = 0;
const ARRIVE = 1;
const ANSWER = 2;
const WAKE = 3;
// Mixed into every seed of this model, so that its streams are not another model's.
const MODEL_TAG = 0x7707;
const WINDOW_MS = 100;

/**
 * W7 on a virtual clock: for each case, `tasks` tasks all due at 0, each retried with {@link W7_POLICY} through
 * core's `planRetry`, dispatched by a service with {@link W7_CONCURRENCY} attempts in flight, earliest due first, to
 * one target protected by each design; every message takes `|Normal(10, 2)|` ms. `none` runs first in every case as
 * the reference of the ratios and aims. Pure and seeded: each (case, design) draws from streams derived from the seed
 * and its place in `W7_CASES` and `W7_DESIGNS`, so a row does not depend on which other rows are run.
 *
 * @example
 * ```ts
 * simulateW7({ cases: ['a1'], designs: ['landed'] });
 * // [{ case: 'a1', design: 'none', callsPerTask: 2, … }, { case: 'a1', design: 'landed', met: true, … }]
 * ```
 */
export function simulateW7(options: W7Options = {}): W7Result[] {
  const cases = (options.cases ?? W7_CASES.map((c) => c.id)).map((id) => {
    const found = W7_CASES.find((c) => c.id === id);
    if (found === undefined) throw new RangeError(`unknown W7 case ${JSON.stringify(id)}`);
    return found;
  });
  const designs = [W7Design.NONE, ...(options.designs ?? W7_DESIGNS).filter((d) => d !== W7Design.NONE)];
  const tasks = options.tasks ?? DEFAULT_W7_TASKS;
  const seed = options.seed ?? DEFAULT_SIMULATION_SEED;
  const results: W7Result[] = [];
  for (const spec of cases) {
    const none = runCell(spec, W7Design.NONE, tasks, seed);
    for (const design of designs) {
      const run = design === W7Design.NONE ? none : runCell(spec, design, tasks, seed);
      results.push({
        ...run,
        timeRatio: spec.downstream.kind === 'dead' || !none.finished ? null : run.timeMs / none.timeMs,
        callsRatio: none.calls === 0 ? null : run.calls / none.calls,
        aim: AIM_TEXT[spec.aim],
        met: design === W7Design.NONE ? null : aimMet(spec.aim, run, none),
      });
    }
  }
  return results;
}

function runCell(spec: W7Case, design: W7Design, n: number, seed: number): RunFigures {
  const caseIndex = W7_CASES.indexOf(spec);
  const queue = new EventQueue();
  // Due tasks waiting for a slot or for the gate, earliest due first, then by task (the stores' `ORDER BY
  // next_attempt_at, task_id`): a held task that keeps its place ties with the tasks enqueued with it, and goes first.
  const line = new EventQueue();
  const clock = simulationClock(() => queue.time);
  // Network delays and backoff draw from the case's stream, the same for every design up to where they part.
  const random = xoshiro128(deriveSeed(seed, MODEL_TAG, caseIndex));
  const delay = networkDelay(random);
  const protection = protectionFor(design, clock, xoshiro128(deriveSeed(seed, MODEL_TAG, caseIndex, W7_DESIGNS.indexOf(design))));
  const answer = downstreamAnswer(spec.downstream, seed);
  const stopAt = spec.downstream.kind === 'dead' ? W7_DEAD_MS : W7_TIME_CAP_MS;

  const attempts = new Int32Array(n);
  const refusals = new Int32Array(n);
  const dueAt = new Float64Array(n);
  const sentAt = new Float64Array(n);
  const previousDelay = new Float64Array(n);
  const answered = new Uint8Array(n);
  const arrivals: number[] = [];
  const successTimes: number[] = [];
  let inFlight = 0;
  let wakeAt = Infinity;
  let succeeded = 0;
  let exhausted = 0;
  let refused = 0;
  let lastEndAt = 0;

  const due = (task: number, at: number, now: number) => {
    if (at <= now) line.push(at, task, task);
    else queue.push(at, task * 4 + DUE);
  };

  // Whether a due task may go now: a slot free and the design's gate open (else a wake-up when the gate opens).
  const canSend = (now: number) => {
    if (inFlight >= W7_CONCURRENCY) return false;
    const openAt = protection.openAt(now, inFlight);
    if (openAt <= now) return true;
    if (openAt < wakeAt) queue.push((wakeAt = openAt), WAKE);
    return false;
  };

  // Sends a due task's next attempt, or reschedules it when the design refuses it.
  const take = (task: number, dueTime: number, now: number) => {
    const attempt = (attempts[task] as number) + 1;
    if (!protection.admit(attempt, now)) {
      // Refused locally: rescheduled by its policy, each refusal one more step of its backoff (up to the policy's last
      // step, past which the delay no longer grows), its attempts kept.
      refused++;
      const step = Math.min(attempt + (refusals[task] = (refusals[task] as number) + 1) - 1, W7_POLICY.maxAttempts);
      const wait = computeDelay(W7_POLICY, step, previousDelay[task] as number, random);
      previousDelay[task] = wait;
      due(task, now + wait, now);
      return;
    }
    attempts[task] = attempt;
    dueAt[task] = dueTime;
    sentAt[task] = now;
    inFlight++;
    queue.push(now + delay(), task * 4 + ARRIVE);
  };

  const dispatch = (now: number) => {
    while (line.size > 0 && canSend(now)) {
      const task = line.pop();
      take(task, line.time, now);
    }
  };

  const ended = (task: number, now: number) => {
    inFlight--;
    const success = answered[task] === 1;
    let retryAt: number | null = null;
    if (success) {
      succeeded++;
      successTimes.push(now);
      lastEndAt = now;
    } else {
      const plan = planRetry({ policy: W7_POLICY, attemptsMade: attempts[task] as number, elapsedMs: now, previousDelayMs: previousDelay[task] as number, random });
      if (plan.retry) {
        retryAt = now + plan.delayMs;
        previousDelay[task] = plan.previousDelayMs;
      } else {
        exhausted++;
        lastEndAt = now;
      }
    }
    const at = protection.ended(
      { attempt: attempts[task] as number, success, sentAt: sentAt[task] as number, dueAt: dueAt[task] as number, retryAt },
      now,
    );
    if (retryAt !== null) due(task, at ?? retryAt, now);
  };

  for (let task = 0; task < n; task++) line.push(0, task, task);
  dispatch(0);
  while (queue.size > 0) {
    const event = queue.pop();
    const now = queue.time;
    if (now > stopAt) break;
    const task = event >> 2;
    switch (event & 3) {
      case DUE:
        // Straight to its attempt when nothing waits before it (the common case, and half the work of a refusal).
        if (line.size === 0 && canSend(now)) take(task, now, now);
        else line.push(now, task, task);
        break;
      case ARRIVE:
        arrivals.push(now);
        answered[task] = answer(task, attempts[task] as number, now) ? 1 : 0;
        queue.push(now + delay(), task * 4 + ANSWER);
        continue;
      case ANSWER:
        ended(task, now);
        break;
      case WAKE:
        if (now >= wakeAt) wakeAt = Infinity;
        break;
    }
    dispatch(now);
  }
  const finished = succeeded + exhausted === n;
  return {
    case: spec.id,
    design,
    tasks: n,
    finished,
    timeMs: finished ? lastEndAt : stopAt,
    succeeded,
    exhausted,
    pending: n - succeeded - exhausted,
    calls: arrivals.length,
    callsPerTask: arrivals.length / n,
    busiest100ms: busiest(arrivals, WINDOW_MS),
    refused,
    goodputPerSecond: spec.downstream.kind === 'overload' ? goodputPerSecond(successTimes, n, spec.downstream.perSecond) : null,
  };
}

/** The most of `times` (ascending) in any window of `windowMs`. */
function busiest(times: readonly number[], windowMs: number): number {
  let most = 0;
  let from = 0;
  for (let i = 0; i < times.length; i++) {
    while ((times[from] as number) <= (times[i] as number) - windowMs) from++;
    most = Math.max(most, i - from + 1);
  }
  return most;
}
