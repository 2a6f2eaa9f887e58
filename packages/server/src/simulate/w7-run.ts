import { computeDelay, planRetry } from '@retryd/core';
import { EventQueue } from './event-queue.js';
import { networkDelay } from './network-delay.js';
import { deriveSeed, xoshiro128 } from './seeded-random.js';
import { simulationClock } from './simulation-clock.js';
import { goodputPerSecond, p99 } from './w7-aims.js';
import { downstreamAnswer, downstreamServiceTime, type DownstreamAnswer, type DownstreamServiceTime } from './w7-downstream.js';
import { protectionFor, type W7Protection } from './w7-protection.js';
import {
  W7_ATTEMPT_TIMEOUT_MS,
  W7_CONCURRENCY,
  W7_DEAD_MS,
  W7_DESIGNS,
  W7_POLICY,
  W7_SLOW_CAPACITY_PER_SECOND,
  W7_TIME_CAP_MS,
  W7Aim,
  type W7Case,
  type W7Design,
  type W7Downstream,
} from './w7-workload.js';

/** What one design did in one case (`simulateW7` adds the ratios to none's and the aim). */
export interface W7Run {
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
  /** Requests the downstreams received (f: in its hour). */
  calls: number;
  callsPerTask: number;
  /** The most requests the downstreams received in any 100 ms. */
  busiest100ms: number;
  /** Attempts the design refused locally (SRE throttling), each rescheduled by its task's policy. */
  refused: number;
  /** Cases d and e: first successes per second while the backlog lasted; null for the other cases. */
  goodputPerSecond: number | null;
  /** Attempts that ran out of the service's attempt timeout (`W7_ATTEMPT_TIMEOUT_MS`), each a failure retried by its policy. */
  timeouts: number;
  /**
   * Case g: the 99th percentile (nearest rank) of the good targets' tasks' lag, from due (0) to success, in virtual ms;
   * a task still pending counts as the run's time. Null for the other cases.
   */
  goodLagP99Ms: number | null;
}

// An event is `task × 4 + kind`: a task's retry falls due; its request reaches the downstream; its answer (or its
// attempt's timeout) reaches the service; a hold of a target ends (task 0).
const DUE = 0;
const ARRIVE = 1;
const ANSWER = 2;
const WAKE = 3;
// Mixed into every seed of this model, so that its streams are not another model's.
const MODEL_TAG = 0x7707;
const WINDOW_MS = 100;
// A case's streams derive from its place here, not in W7_CASES (the tables' order): a new case goes at the end, so
// that adding one changes no other case's rows.
const CASE_STREAMS: readonly string[] = ['a1', 'a2', 'b20', 'b50', 'b90', 'd', 'f', 'e', 'g'];
const OK: W7Downstream = Object.freeze({ kind: 'ok' });

/**
 * One design in one case, on a virtual clock: `n` tasks all due at 0, each retried with {@link W7_POLICY} through core's
 * `planRetry`, dispatched earliest due first by a service with the case's concurrency, to the case's targets, each
 * protected by its own instance of the design (as the service keeps one `ProtectedTarget` a target); every message
 * takes `|Normal(10, 2)|` ms. `healthy`: the case's own target answers `200` at once like the good ones (g's reference).
 * Pure: it draws from streams derived from `seed`, the case and the design, and from nothing else.
 */
export function runW7Case(spec: W7Case, design: W7Design, n: number, seed: number, healthy = false, sendsPerSecond = Infinity): W7Run {
  const caseIndex = CASE_STREAMS.indexOf(spec.id);
  if (caseIndex === -1) throw new RangeError(`W7 case ${JSON.stringify(spec.id)} has no stream: add it to CASE_STREAMS`);
  const designIndex = W7_DESIGNS.indexOf(design);
  const concurrency = spec.concurrency ?? W7_CONCURRENCY;
  const targetCount = 1 + (spec.goodTargets ?? 0);
  const queue = new EventQueue();
  // Each target's due tasks waiting for a slot or for its gate, earliest due first, then by task (the stores' `ORDER BY
  // next_attempt_at, task_id`): a held task that keeps its place ties with the tasks enqueued with it, and goes first.
  // The service claims past a target whose gate is shut, so one line a target, and the earliest head of an open one goes.
  const lines = Array.from({ length: targetCount }, () => new EventQueue());
  const clock = simulationClock(() => queue.time);
  // Network delays and backoff draw from the case's stream, the same for every design up to where they part.
  const random = xoshiro128(deriveSeed(seed, MODEL_TAG, caseIndex));
  const delay = networkDelay(random);
  const downstreams = Array.from({ length: targetCount }, (_, t) => (t === 0 && !healthy ? spec.downstream : OK));
  const answers = downstreams.map((d) => downstreamAnswer(d, seed));
  const serviceTimes = downstreams.map((d) => downstreamServiceTime(d));
  // The first target's stream is the one a single target always drew from; the others' have their number mixed in.
  const protections = downstreams.map((_, t) =>
    protectionFor(design, clock, xoshiro128(t === 0 ? deriveSeed(seed, MODEL_TAG, caseIndex, designIndex) : deriveSeed(seed, MODEL_TAG, caseIndex, designIndex, t))),
  );
  const stopAt = spec.downstream.kind === 'dead' ? W7_DEAD_MS : W7_TIME_CAP_MS;

  // Half the tasks (the even ones) on the case's target, the others in turn on the good ones.
  const targetOf = new Uint8Array(n);
  if (targetCount > 1) for (let task = 1; task < n; task += 2) targetOf[task] = 1 + ((task >> 1) % (targetCount - 1));
  const attempts = new Int32Array(n);
  const refusals = new Int32Array(n);
  const dueAt = new Float64Array(n);
  // The place in line a retry takes back when it is due while its target is held (NaN: none).
  const placeAt = new Float64Array(n).fill(NaN);
  const sentAt = new Float64Array(n);
  const previousDelay = new Float64Array(n);
  const answered = new Uint8Array(n);
  const timedOut = new Uint8Array(n);
  const successAt = new Float64Array(n).fill(Infinity);
  const inFlightTo = new Int32Array(targetCount);
  const arrivals: number[] = [];
  const successTimes: number[] = [];
  let inFlight = 0;
  let waiting = 0;
  let wakeAt = Infinity;
  let succeeded = 0;
  let exhausted = 0;
  let refused = 0;
  let timeouts = 0;
  let lastEndAt = 0;
  // The service's own ceiling on sends (its CPU): the next send goes no sooner than this.
  const sendGapMs = 1_000 / sendsPerSecond;
  let nextSendAt = 0;

  const due = (task: number, at: number, now: number) => {
    if (at > now) return queue.push(at, task * 4 + DUE);
    (lines[targetOf[task] as number] as EventQueue).push(at, task, task);
    waiting++;
  };

  // Whether the service may send now (else a wake-up when it may).
  const canSend = (now: number) => {
    if (nextSendAt <= now) return true;
    if (nextSendAt < wakeAt) queue.push((wakeAt = nextSendAt), WAKE);
    return false;
  };

  // Whether target `t`'s gate lets a due task go now (else a wake-up when it opens).
  const open = (t: number, now: number) => {
    const openAt = (protections[t] as W7Protection).openAt(now, inFlightTo[t] as number);
    if (openAt <= now) return true;
    if (openAt < wakeAt) queue.push((wakeAt = openAt), WAKE);
    return false;
  };

  // Sends a due task's next attempt, or reschedules it when the design refuses it.
  const take = (task: number, dueTime: number, now: number) => {
    const t = targetOf[task] as number;
    const attempt = (attempts[task] as number) + 1;
    if (!(protections[t] as W7Protection).admit(attempt, now)) {
      // Refused locally: rescheduled by its policy, each refusal one more step of its backoff (up to the policy's last
      // step, past which the delay no longer grows), its attempts kept.
      refused++;
      const step = Math.min(attempt + (refusals[task] = (refusals[task] as number) + 1) - 1, W7_POLICY.maxAttempts);
      const wait = computeDelay(W7_POLICY, step, previousDelay[task] as number, random);
      previousDelay[task] = wait;
      due(task, now + wait, now);
      return;
    }
    nextSendAt = Math.max(nextSendAt, now) + sendGapMs;
    attempts[task] = attempt;
    dueAt[task] = dueTime;
    sentAt[task] = now;
    inFlight++;
    inFlightTo[t] = (inFlightTo[t] as number) + 1;
    queue.push(now + delay(), task * 4 + ARRIVE);
  };

  const dispatch = (now: number) => {
    while (waiting > 0 && inFlight < concurrency && canSend(now)) {
      // The open target whose line's head is due first (an open gate is asked only of a head that would go first; when
      // none goes, every target with tasks waiting was asked, so each shut one has its wake-up).
      let best = -1;
      for (let t = 0; t < targetCount; t++) {
        const line = lines[t] as EventQueue;
        if (line.size === 0 || (best !== -1 && !line.headBefore(lines[best] as EventQueue))) continue;
        if (open(t, now)) best = t;
      }
      if (best === -1) return;
      const line = lines[best] as EventQueue;
      const task = line.pop();
      waiting--;
      take(task, line.time, now);
    }
  };

  const ended = (task: number, now: number) => {
    const t = targetOf[task] as number;
    inFlight--;
    inFlightTo[t] = (inFlightTo[t] as number) - 1;
    if (timedOut[task] === 1) {
      timedOut[task] = 0;
      timeouts++;
    }
    const success = answered[task] === 1;
    let retryAt: number | null = null;
    if (success) {
      succeeded++;
      successTimes.push(now);
      successAt[task] = now;
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
    const at = (protections[t] as W7Protection).ended(
      { attempt: attempts[task] as number, success, sentAt: sentAt[task] as number, dueAt: dueAt[task] as number, retryAt },
      now,
    );
    if (retryAt === null) return;
    if (typeof at === 'object') {
      placeAt[task] = at.placeAt;
      due(task, at.retryAt, now);
    } else due(task, at ?? retryAt, now);
  };

  for (let task = 0; task < n; task++) due(task, 0, 0);
  dispatch(0);
  while (queue.size > 0) {
    const event = queue.pop();
    const now = queue.time;
    if (now > stopAt) break;
    const task = event >> 2;
    switch (event & 3) {
      case DUE: {
        // Straight to its attempt when nothing waits (the common case, and half the work of a refusal).
        const t = targetOf[task] as number;
        const place = placeAt[task] as number;
        placeAt[task] = NaN;
        if (waiting === 0 && inFlight < concurrency && canSend(now) && open(t, now)) take(task, now, now);
        else due(task, place === place && ((protections[t] as W7Protection).holds?.(now) ?? false) ? place : now, now);
        break;
      }
      case ARRIVE: {
        const t = targetOf[task] as number;
        arrivals.push(now);
        answered[task] = (answers[t] as DownstreamAnswer)(task, attempts[task] as number, now) ? 1 : 0;
        const back = now + (serviceTimes[t] as DownstreamServiceTime)(now) + delay();
        // The service gives up on the attempt at its timeout; the downstream, which cannot tell, still serves it.
        const timeoutAt = (sentAt[task] as number) + W7_ATTEMPT_TIMEOUT_MS;
        if (back > timeoutAt) {
          timedOut[task] = 1;
          answered[task] = 0;
        }
        queue.push(Math.min(back, Math.max(timeoutAt, now)), task * 4 + ANSWER);
        continue;
      }
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
  const timeMs = finished ? lastEndAt : stopAt;
  const capacity = spec.aim === W7Aim.GOODPUT && spec.downstream.kind === 'overload' ? spec.downstream.perSecond : spec.aim === W7Aim.GOODPUT_NO_TIMEOUTS ? W7_SLOW_CAPACITY_PER_SECOND : null;
  let goodLagP99Ms: number | null = null;
  if (targetCount > 1) {
    const lags: number[] = [];
    for (let task = 0; task < n; task++) if (targetOf[task] !== 0) lags.push(Math.min(successAt[task] as number, timeMs));
    goodLagP99Ms = p99(lags);
  }
  return {
    case: spec.id,
    design,
    tasks: n,
    finished,
    timeMs,
    succeeded,
    exhausted,
    pending: n - succeeded - exhausted,
    calls: arrivals.length,
    callsPerTask: arrivals.length / n,
    busiest100ms: busiest(arrivals, WINDOW_MS),
    refused,
    goodputPerSecond: capacity === null ? null : goodputPerSecond(successTimes, n, capacity),
    timeouts,
    goodLagP99Ms,
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
