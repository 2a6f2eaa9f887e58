import type { Clock, Random, RetryPolicy } from '@retryd/core';
import { resolveTimeouts, type AttemptTimeouts } from '../domain/attempt-timeouts.js';
import type { RetryTask } from '../domain/task.js';
import type { AttemptCompletion } from '../store/store.js';
import type { AttemptDispatcher, AttemptResult } from './attempt-result.js';
import type { AttemptProtection, AttemptVerdict } from './attempt-protection.js';
import { applyVerdict } from './apply-verdict.js';
import type { AttemptSpan, AttemptTracing } from './attempt-tracing.js';
import type { QueuedCompletion } from './completion-batcher.js';
import { FaultPoint, type FaultHook } from './fault-point.js';
import { decideAttemptOutcome, decideBeforeAttempt } from './decide-outcome.js';
import { describeError, type TimeoutSettings } from './describe-error.js';
import { FencedOutError, taskContext, type EngineErrorContext } from './engine-errors.js';
import type { PolicyResolver } from './policy-resolver.js';
import type { RetentionBook } from '../retention/retention-book.js';
import { StoreBackoff } from './store-backoff.js';

/** Longest a claimed task waits for its target's pacing before it is sent, in ms. */
const MAX_SEND_WAIT_MS = 1_000;

/** How long `entry` may wait to be sent: at most a second, and at most a quarter of what is left of its lease. */
function maxSendWaitMs(entry: Held, now: number): number {
  return Math.max(0, Math.min(MAX_SEND_WAIT_MS, (entry.leaseExpiresAt - now) / 4));
}

/** A task this engine claimed and has not yet settled (its completion is not yet written). */
export interface Held {
  task: RetryTask;
  leaseExpiresAt: number;
  /** Its attempt has not ended yet: at shutdown its lease must be handed back. */
  open: boolean;
  /** Handed back at shutdown: whatever its attempt returns is dropped. */
  released: boolean;
}

/** Options of {@link AttemptRunner}. */
export interface AttemptRunnerOptions {
  dispatcher: AttemptDispatcher;
  policies: PolicyResolver;
  /** How long each task is kept once it ends: read with its policy before its attempt, used when it ends. */
  retention: RetentionBook;
  clock: Clock;
  /** "Now" in whole epoch ms. */
  now: () => number;
  random: Random;
  workerId: string;
  leaseMs: number;
  /** The longest `Retry-After` honoured beyond a policy's own delays, in ms (`EngineOptions.maxRetryAfterMs`). */
  maxRetryAfterMs: number;
  /** The service's timeouts: those of every attempt whose task and target set none. */
  timeouts: TimeoutSettings;
  /** Moves the lease of a task this worker holds to `leaseExpiresAt` (`Store.extendLease`); false when it is no longer held. */
  extendLease: (task: RetryTask, leaseExpiresAt: number) => Promise<boolean>;
  /** Queues an attempt's completion for the group commit. */
  submit: (item: QueuedCompletion) => void;
  /** `task`'s attempt ended (or it ended without one): its slot is free again. */
  onAttemptEnded: (task: RetryTask) => void;
  /** Per-target protection, told of every attempt and of every claimed task that ends without one. Absent: none. */
  protection?: AttemptProtection | undefined;
  /** Makes a span of every attempt. Absent: none, and nothing is spent on tracing. */
  tracing?: AttemptTracing | undefined;
  report: (error: unknown, context: EngineErrorContext) => void;
  /** Test only: stops the process at a fault point (the chaos suite). Absent: none. */
  faultHook?: FaultHook | undefined;
}

/**
 * Runs the attempts of claimed tasks: resolves each task's policy (cached, so usually without a store read),
 * checks it may go ahead, makes the HTTP call, decides the outcome and hands the completion to the batcher. Keeps
 * account of what is held and in flight for the scheduler's capacity, the reaper and shutdown.
 */
export class AttemptRunner {
  /** Tasks claimed and not yet settled, by task id. */
  readonly held = new Map<string, Held>();
  /** Claimed tasks whose attempt has not ended (including those still waiting for their policy). */
  inFlight = 0;
  private launching = true;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly options: AttemptRunnerOptions) {}

  /** Takes over freshly claimed tasks; with `launch` false (stopping) they are only held, for shutdown to release. */
  run(tasks: readonly RetryTask[], launch: boolean): void {
    const entries: Held[] = [];
    for (const task of tasks) {
      const entry: Held = { task, leaseExpiresAt: task.leaseExpiresAt ?? this.options.now() + this.options.leaseMs, open: true, released: false };
      this.held.set(task.taskId, entry);
      entries.push(entry);
    }
    if (!launch) return;
    this.inFlight += entries.length;
    const policies: RetryPolicy[] = [];
    for (const { task } of entries) {
      const policy = this.options.policies.cached(task);
      if (policy === undefined || this.options.retention.cachedFor(task) === undefined) {
        void this.resolveThenLaunch(entries);
        return;
      }
      policies.push(policy);
    }
    this.launch(entries, policies);
  }

  /** Starts no more attempts whose policy is still being read (shutdown). */
  stopLaunching(): void {
    this.launching = false;
  }

  /** Resolves when no attempt is in flight, or at `deadline` (epoch ms), whichever is first. */
  async whenIdle(deadline: number): Promise<void> {
    if (this.inFlight === 0) return;
    const idle = new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    const timer = new AbortController();
    const over = this.options.clock.sleep(Math.max(0, deadline - this.options.now()), timer.signal).catch(() => undefined);
    await Promise.race([idle, over]);
    timer.abort();
  }

  /** Removes and returns the held tasks whose attempt has not ended, marked released (their results are dropped). */
  releaseOpen(): Held[] {
    const open = [...this.held.values()].filter((entry) => entry.open);
    for (const entry of open) {
      entry.released = true;
      this.held.delete(entry.task.taskId);
    }
    return open;
  }

  private async resolveThenLaunch(entries: Held[]): Promise<void> {
    const backoff = new StoreBackoff(this.options.clock, this.options.random);
    for (;;) {
      try {
        const tasks = entries.map((entry) => entry.task);
        const [policies] = await Promise.all([this.options.policies.resolve(tasks), this.options.retention.resolve(tasks)]);
        this.launch(entries, policies);
        return;
      } catch (error) {
        this.options.report(error, { operation: 'resolve_policy' });
        if (!this.launching) {
          // Never started: shutdown hands their leases back.
          for (const entry of entries) this.ended(entry.task);
          return;
        }
        await backoff.wait();
      }
    }
  }

  private launch(entries: Held[], policies: RetryPolicy[]): void {
    const now = this.options.now();
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i] as Held;
      const policy = policies[i] as RetryPolicy;
      let early: AttemptCompletion | null;
      try {
        early = decideBeforeAttempt(entry.task, policy, now, this.options.retention.periodsFor(entry.task));
      } catch (error) {
        // An illegal lifecycle move: the store handed over a task that is not IN_FLIGHT. Leave it to its lease.
        this.options.report(error, taskContext('decide', entry.task));
        entry.open = false;
        this.held.delete(entry.task.taskId);
        this.ended(entry.task);
        continue;
      }
      if (early === null) {
        // Read again for each: starting a few hundred attempts takes milliseconds, and an attempt sent at once starts at
        // the time its protection counted its send (the capacity probe matches answers to sends by it).
        const startingAt = this.options.now();
        const turn = this.options.protection?.attemptStarting(entry.task, startingAt, maxSendWaitMs(entry, startingAt));
        void this.attempt(entry, policy, turn, startingAt);
      } else {
        entry.open = false;
        const item = { task: entry.task, completion: early, leaseExpiresAt: entry.leaseExpiresAt };
        const protecting = this.options.protection?.endedWithoutAttempt(entry.task, early, now);
        if (protecting === undefined) {
          this.options.submit(item);
          this.ended(entry.task);
        } else {
          void this.submitAfter(protecting, item);
        }
      }
    }
  }

  private async attempt(entry: Held, policy: RetryPolicy, turn: Promise<void> | undefined, startingAt: number): Promise<void> {
    const { task } = entry;
    const { clock } = this.options;
    if (turn !== undefined) {
      // Its target's rate spreads this instance's sends (see `AttemptProtection.attemptStarting`).
      await turn;
      if (entry.released) {
        // Handed back at shutdown while it waited: never sent.
        entry.open = false;
        this.ended(task);
        return;
      }
    }
    const startedAt = turn === undefined ? startingAt : this.options.now();
    const started = clock.now();
    const traced: AttemptSpan | undefined = this.options.tracing?.start(task, task.attemptNumber + 1);
    // Sent with the span's own traceparent when there is a span; the decision reads the task as claimed.
    const sent = traced === undefined ? task : traced.sent;
    let result: AttemptResult;
    this.options.faultHook?.(FaultPoint.AFTER_CLAIM, task);
    try {
      // Undefined at once for a target that does not sign: no promise more on the hot path.
      let signing = this.options.protection?.signingSecrets(task, startedAt);
      if (signing instanceof Promise) signing = await signing;
      // After the signing secrets: a target's first attempt has its settings read by then.
      let timeouts: AttemptTimeouts | null | undefined = this.timeoutsOf(task);
      if (timeouts !== undefined && timeouts.attemptTimeoutMs > this.options.timeouts.attemptTimeoutMs) {
        timeouts = await this.leaseOutlasting(entry, timeouts);
        // Handed back at shutdown while the lease was being extended: never sent either.
        if (entry.released) timeouts = null;
      }
      if (timeouts === null) {
        // The lease is no longer this worker's (reaped, or handed back): nothing may be sent.
        entry.released = true;
        this.held.delete(task.taskId);
        const error = new FencedOutError(task.taskId, task.fencingToken);
        result = { kind: 'error', error, message: error.message };
      } else if (timeouts !== undefined) {
        result = await this.options.dispatcher.dispatch(sent, task.attemptNumber + 1, signing, timeouts);
      } else {
        result =
          signing === undefined
            ? await this.options.dispatcher.dispatch(sent, task.attemptNumber + 1)
            : await this.options.dispatcher.dispatch(sent, task.attemptNumber + 1, signing);
      }
    } catch (error) {
      // The built-in dispatcher never rejects; a substitute might.
      result = { kind: 'error', error, message: describeError(error, this.options.timeouts) };
    }
    this.options.faultHook?.(FaultPoint.AFTER_RESPONSE, task);
    entry.open = false;
    if (entry.released) {
      if (traced !== undefined) this.options.tracing?.end(traced, result, undefined, this.options.now());
    } else {
      let completion: AttemptCompletion | undefined;
      const now = this.options.now();
      try {
        const durationMs = clock.now() - started;
        const ctx = {
          policy,
          now,
          random: this.options.random,
          workerId: this.options.workerId,
          retention: this.options.retention.periodsFor(task),
          maxRetryAfterMs: this.options.maxRetryAfterMs,
        };
        completion = decideAttemptOutcome(task, { startedAt, durationMs, result }, ctx);
      } catch (error) {
        // Only an illegal lifecycle move gets here (a store handed over a task that is not IN_FLIGHT); its lease will lapse.
        this.options.report(error, taskContext('decide', task));
        this.held.delete(task.taskId);
      }
      if (traced !== undefined) this.options.tracing?.end(traced, result, completion, now);
      if (completion !== undefined) {
        const item = { task, completion, leaseExpiresAt: entry.leaseExpiresAt };
        const verdict = this.options.protection?.attemptEnded(task, result, completion, now);
        if (verdict instanceof Promise) return this.submitJudged(verdict, item);
        if (verdict !== undefined) {
          applyJudged(item, verdict);
          if (verdict.written !== undefined) return this.submitAfter(verdict.written, item);
        }
        this.options.submit(item);
      }
    }
    this.ended(task);
  }

  /**
   * The timeouts of `task`'s attempt, field by field its own, else its target's, else the service's; undefined when
   * neither the task nor its target sets any (the service's apply, and nothing is allocated).
   */
  private timeoutsOf(task: RetryTask): AttemptTimeouts | undefined {
    const target = this.options.protection?.timeoutsOf?.(task);
    if (target === undefined && task.attemptTimeoutMs === null && task.connectTimeoutMs === null) return undefined;
    return resolveTimeouts(task, target, this.options.timeouts);
  }

  /**
   * Makes the lease of an attempt longer than the service's outlast it by the service's margin (`leaseMs` less the
   * service's attempt timeout), through `extendLease`, before it is sent: a lease that lapsed mid-attempt would hand a
   * live task to another worker. Claims keep one lease for every task, so only these attempts pay the store write.
   * Null when the lease is no longer this worker's. When the store cannot extend it, the attempt runs under the
   * service's attempt timeout, which the lease it holds covers, rather than not at all (and the failure is reported).
   */
  private async leaseOutlasting(entry: Held, timeouts: AttemptTimeouts): Promise<AttemptTimeouts | null> {
    const service = this.options.timeouts;
    const until = this.options.now() + timeouts.attemptTimeoutMs + (this.options.leaseMs - service.attemptTimeoutMs);
    if (until <= entry.leaseExpiresAt) return timeouts;
    try {
      if (!(await this.options.extendLease(entry.task, until))) {
        this.options.report(new FencedOutError(entry.task.taskId, entry.task.fencingToken), taskContext('extend_lease', entry.task));
        return null;
      }
      entry.leaseExpiresAt = until;
      return timeouts;
    } catch (error) {
      this.options.report(error, taskContext('extend_lease', entry.task));
      return { attemptTimeoutMs: service.attemptTimeoutMs, connectTimeoutMs: Math.min(timeouts.connectTimeoutMs, service.attemptTimeoutMs) };
    }
  }

  /**
   * Submits a completion once the protection has put the state change it caused in the store, and only then frees
   * the slot: the gate must change (a breaker opened, a probe counted) before the completion frees a place in it.
   */
  private async submitAfter(protecting: Promise<void>, item: QueuedCompletion): Promise<void> {
    try {
      await protecting;
    } catch (error) {
      this.options.report(error, taskContext('protect', item.task));
    }
    this.options.submit(item);
    this.ended(item.task);
  }

  /** Submits a completion once protection has judged it (after a read of what it judges on), applying its verdict. */
  private async submitJudged(judging: Promise<AttemptVerdict | undefined>, item: QueuedCompletion): Promise<void> {
    let written: Promise<void> | undefined;
    try {
      const verdict = await judging;
      if (verdict !== undefined) {
        applyJudged(item, verdict);
        written = verdict.written;
      }
    } catch (error) {
      this.options.report(error, taskContext('protect', item.task));
    }
    if (written !== undefined) return this.submitAfter(written, item);
    this.options.submit(item);
    this.ended(item.task);
  }

  private ended(task: RetryTask): void {
    this.inFlight--;
    if (this.inFlight === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
    this.options.onAttemptEnded(task);
  }
}

/** Applies protection's verdict to a queued completion (`applyVerdict`), and has its write tell `onWritten` the version. */
function applyJudged(item: QueuedCompletion, verdict: AttemptVerdict): void {
  applyVerdict(item.completion, verdict);
  const { onWritten } = verdict;
  if (onWritten === undefined) return;
  item.onSettled = (result) => {
    if (result?.kind === 'applied') onWritten(result.version);
  };
}
