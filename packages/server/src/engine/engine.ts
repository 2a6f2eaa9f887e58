import { isTerminal, type RetryPolicy } from '@retryd/core';
import type { RetryTask } from '../domain/task.js';
import type { ClaimOptions, CompletionResult, LeaseRef, TargetRef } from '../store/store.js';
import type { HandOff, HandOffGrant } from '../tasks/hand-off.js';
import type { AttemptDispatcher } from './attempt-result.js';
import { AttemptRunner, type Held } from './attempt-runner.js';
import { lastQueueServed } from './claim-cursor.js';
import { CompletionBatcher, type QueuedCompletion } from './completion-batcher.js';
import { decideLeaseExpired } from './decide-outcome.js';
import { DueTimer } from './due-timer.js';
import { observeCompletion, timeStoreCalls, type TimedStore } from './engine-metrics.js';
import { AttemptTracing } from './attempt-tracing.js';
import { CompletionAbandonedError, FencedOutError, taskContext, type EngineErrorContext } from './engine-errors.js';
import { resolveEngineOptions, type EngineOptions, type EngineStore, type ResolvedEngineOptions, type StopOptions } from './engine-options.js';
import { HttpDispatcher } from './http-dispatcher.js';
import { RevealingDispatcher } from './revealing-dispatcher.js';
import { TaskSecrets } from '../secrets/task-secrets.js';
import { LeaseReaper } from './lease-reaper.js';
import { PolicyResolver } from './policy-resolver.js';
import { RetentionBook } from '../retention/retention-book.js';
import { ClaimPacing } from './claim-pacing.js';
import { fillsRoom, worthGrowing } from './slot-shares.js';
import { DEFAULT_RETENTION } from '../retention/retention-periods.js';
import { attemptLogged, taskAfterCompletion } from './applied-completion.js';
import { StoreBackoff } from './store-backoff.js';

/** Extra time after the grace period for writing the last results and handing back leases, in ms. */
const SETTLE_MS = 5_000;

/**
 * The scheduler and worker: claims due tasks in batches, makes their HTTP attempts (at most `concurrency` at once),
 * decides each outcome with `@retryd/core` and group-commits the results.
 *
 * It never scans: it claims while tasks are due and capacity allows, then sleeps on one timer aimed at the store's
 * `nextDueAt()` (and the lease reaper on `nextLeaseExpiryAt()`); {@link Engine.wake} starts a claim at once.
 * Store failures are survived with a back-off (jittered, see `StoreBackoff`); attempt results are kept and rewritten
 * while their lease holds. Claims are fair: each passes the last target queue the previous one served as the ring
 * cursor (`ClaimOptions.after`), so targets with due work take turns. The slots themselves are shared between tenants
 * and between targets (`SlotShares`, passed to each claim as its `rooms`): one tenant or target never holds them all,
 * so another's task is dispatched at once even while one target hangs. Every wait is on the injected clock.
 *
 * @example
 * ```ts
 * const engine = new Engine({ store, loadBody: (ref) => blobs.get(ref), onDeadLetter: (t) => log.warn(t) });
 * await engine.start();
 * // after an enqueue: engine.wake();
 * await engine.stop({ graceMs: 10_000 });
 * ```
 */
export class Engine implements AsyncDisposable, HandOff {
  /** This worker's name on leases and in attempt logs. */
  readonly workerId: string;
  private readonly store: EngineStore;
  /** The store's claim and commit calls, timed when there are metrics. */
  private readonly timedStore: TimedStore;
  private readonly opts: ResolvedEngineOptions;
  private readonly dispatcher: AttemptDispatcher;
  private readonly policies: PolicyResolver;
  /** How long each task is kept once it ends (`EngineOptions.retention`). */
  readonly retention: RetentionBook;
  private readonly batcher: CompletionBatcher;
  private readonly reaper: LeaseReaper;
  private readonly dueTimer: DueTimer;
  private readonly claimBackoff: StoreBackoff;
  private readonly runner: AttemptRunner;
  private state: 'new' | 'running' | 'stopping' | 'stopped' = 'new';
  private claiming: Promise<void> | undefined;
  /** Tasks may be due now: claim when capacity allows. When false, the due timer is armed. */
  private maybeDue = false;
  /** A wake-up arrived during the claim in progress. */
  private woken = false;
  private stopping: Promise<void> | undefined;
  /** Slots promised to enqueues in progress ({@link Engine.reserve}), not yet adopted or given back. */
  private reserved = 0;
  /**
   * The ring cursor of fair claims: the last target queue the previous claim served (see `ClaimOptions.after`), so
   * that with more ready queues than slots, successive claims go round all of them instead of serving the first ones.
   */
  private claimCursor: TargetRef | undefined;
  /** When to claim, with the slots shared between tenants and targets (`ClaimPacing`, `SlotShares`). */
  private readonly pacing: ClaimPacing;

  constructor(private readonly options: EngineOptions) {
    this.opts = resolveEngineOptions(options);
    this.store = options.store;
    this.workerId = this.opts.workerId;
    this.timedStore = timeStoreCalls(this.store, this.opts.clock, options.metrics);
    this.pacing = new ClaimPacing({
      concurrency: this.opts.concurrency,
      // A busy engine claims in batches, not one by one.
      lowWater: Math.max(1, Math.min(this.opts.claimBatchSize, Math.ceil(this.opts.concurrency / 4))),
      perTenant: this.opts.maxInFlightPerTenant,
      perTarget: this.opts.maxInFlightPerTarget,
      clock: this.opts.clock,
      onProbe: () => this.pump(),
    });
    const dispatcher =
      options.dispatcher ??
      new HttpDispatcher({
        loadBody: options.loadBody,
        attemptTimeoutMs: this.opts.attemptTimeoutMs,
        connectTimeoutMs: this.opts.connectTimeoutMs,
        connectionsPerOrigin: this.opts.connectionsPerOrigin,
        targetGuard: options.targetGuard,
        clock: this.opts.clock,
      });
    // Secrets are revealed here, right before the request is built, whichever dispatcher builds it.
    this.dispatcher = new RevealingDispatcher(dispatcher, options.secrets ?? new TaskSecrets(), options.loadBody);
    this.policies = new PolicyResolver({
      store: this.store,
      now: () => this.now(),
      ttlMs: this.opts.policyCacheMs,
      onMissing: (error) => this.report(error, { operation: 'resolve_policy' }),
    });
    this.batcher = new CompletionBatcher({
      store: this.timedStore,
      clock: this.opts.clock,
      random: this.opts.random,
      now: () => this.now(),
      onResults: (items, results, now) => this.onResults(items, results, now),
      onWriteError: (error) => this.report(error, { operation: 'complete' }),
      onGiveUp: (item, reason) => this.onGiveUp(item, reason),
    });
    this.reaper = new LeaseReaper({
      store: this.store,
      clock: this.opts.clock,
      random: this.opts.random,
      now: () => this.now(),
      batchSize: this.opts.claimBatchSize,
      // At most a lease between looks: a lease another instance takes just after a look is seen before it lapses, and
      // reaped as it lapses, so a task whose worker died is due again a lease after its claim (as the visibility
      // timeout promises), not up to maxIdleMs later. Until it is reaped it keeps its slot in its target's gate: with
      // a half-open breaker's one probe slot, the whole target waits on it.
      maxIdleMs: Math.min(this.opts.maxIdleMs, this.opts.leaseMs),
      holds: (taskId) => this.runner.held.has(taskId),
      reap: (tasks) => this.reap(tasks),
      onError: (error) => this.report(error, { operation: 'reap' }),
    });
    this.retention =
      options.retention ??
      new RetentionBook({ state: this.store.targetState, defaults: DEFAULT_RETENTION, now: () => this.now(), onInvalid: (error) => this.report(error, { operation: 'resolve_retention' }) });
    this.runner = new AttemptRunner({
      dispatcher: this.dispatcher,
      policies: this.policies,
      retention: this.retention,
      clock: this.opts.clock,
      now: () => this.now(),
      random: this.opts.random,
      workerId: this.workerId,
      leaseMs: this.opts.leaseMs,
      maxRetryAfterMs: this.opts.maxRetryAfterMs,
      timeouts: { attemptTimeoutMs: this.opts.attemptTimeoutMs, connectTimeoutMs: this.opts.connectTimeoutMs },
      extendLease: (task, until) => this.store.extendLease(task.tenantId, task.taskId, task.fencingToken, until),
      submit: (item) => this.batcher.add(item),
      onAttemptEnded: (task) => {
        this.pacing.ended(task);
        this.pump();
      },
      protection: options.protection,
      tracing: options.tracer === undefined ? undefined : new AttemptTracing(options.tracer),
      report: (error, context) => this.report(error, context),
      faultHook: options.faultHook,
    });
    this.dueTimer = new DueTimer(this.opts.clock, () => this.wake());
    this.claimBackoff = new StoreBackoff(this.opts.clock, this.opts.random);
  }

  /** The most slots one tenant and one target may hold on this engine (`maxInFlightPerTenant`, `maxInFlightPerTarget`). */
  get slotBounds(): { maxInFlightPerTenant: number; maxInFlightPerTarget: number } {
    return { maxInFlightPerTenant: this.opts.maxInFlightPerTenant, maxInFlightPerTarget: this.opts.maxInFlightPerTarget };
  }

  /** Attempts in flight and results not yet written: for readiness checks and metrics. */
  get load(): { inFlight: number; held: number; unwrittenResults: number } {
    return { inFlight: this.runner.inFlight, held: this.runner.held.size, unwrittenResults: this.batcher.size };
  }

  /** Starts claiming due tasks and reaping lapsed leases. */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error(`Engine cannot start: it is ${this.state}.`);
    this.state = 'running';
    this.reaper.start();
    this.wake();
  }

  /**
   * Work may be due now (a task was enqueued, replayed or released): claim at once instead of waiting for the timer.
   * With `dueAt` (epoch ms), the work is due then: a time to come only aims the due timer at it, when it is earlier
   * than the timer's (a claim now would find nothing; an enqueue of delayed tasks made one each).
   */
  wake(dueAt?: number): void {
    if (this.state !== 'running') return;
    if (dueAt !== undefined && dueAt > this.now()) {
      this.aim(dueAt);
      return;
    }
    this.woken = true;
    this.maybeDue = true;
    this.pacing.woken();
    this.dueTimer.clear();
    this.pump();
  }

  /**
   * Hand-off from this process's API: reserves free slots for tasks due now that the enqueue inserts already leased to
   * this engine (see `HandOff`), in order while slots last, skipping targets the protection keeps behind the claim
   * gate and tenants and targets without room in the slots' shares. None while not running.
   */
  reserve(targets: readonly TargetRef[]): HandOffGrant {
    let free = this.state === 'running' ? this.opts.concurrency - this.runner.inFlight - this.reserved : 0;
    const indices: number[] = [];
    const protection = this.options.protection;
    const now = protection === undefined ? 0 : this.now();
    for (let i = 0; i < targets.length && free > 0; i++) {
      const target = targets[i] as TargetRef;
      if (!this.pacing.shares.admits(target)) continue;
      if (protection !== undefined && !protection.admitsHandOff(target, now)) continue;
      this.pacing.shares.take(target);
      indices.push(i);
      free--;
    }
    this.reserved += indices.length;
    return { indices, workerId: this.workerId, leaseMs: this.opts.leaseMs };
  }

  /** See `HandOff.prepare`: the protection's first read of each target it has not met. */
  prepare(targets: readonly TargetRef[]): Promise<void> | undefined {
    const protection = this.options.protection;
    if (protection?.prepare === undefined) return undefined;
    const now = this.now();
    let waits: Promise<void>[] | undefined;
    for (const target of targets) {
      const wait = protection.prepare(target, now);
      if (wait !== undefined) (waits ??= []).push(wait);
    }
    return waits === undefined ? undefined : Promise.all(waits).then(() => undefined);
  }

  /** Runs tasks inserted with a lease from {@link Engine.reserve}, as if this engine had claimed them. */
  adopt(tasks: readonly RetryTask[]): void {
    this.reserved = Math.max(0, this.reserved - tasks.length);
    if (tasks.length === 0) return;
    if (this.state === 'running') {
      try {
        this.runner.run(tasks, true);
      } catch (error) {
        // The enqueue has committed and must still answer; unstarted, these tasks' leases lapse and the reaper frees them.
        this.report(error, { operation: 'hand_off' });
      }
      return;
    }
    // Stopping: hand them back at once rather than let their leases lapse (the reaper would count a lost attempt).
    for (const task of tasks) this.pacing.shares.release(task);
    this.store.releaseLeases(tasks.map(leaseOf), this.now()).catch((error: unknown) => this.report(error, { operation: 'release' }));
  }

  /** Returns reserved slots that no task used. */
  giveBack(targets: readonly TargetRef[]): void {
    this.reserved = Math.max(0, this.reserved - targets.length);
    for (const target of targets) this.pacing.shares.release(target);
    this.pump();
  }

  /** Forgets a cached named policy so the next decision reads it afresh (after `PUT /retry-policies/{id}`). */
  invalidatePolicy(tenantId: string, policyId: string): void {
    this.policies.invalidate(tenantId, policyId);
  }

  /**
   * Stops claiming, lets attempts in flight finish within `graceMs`, aborts the rest and hands their leases back
   * (they become due at once, no attempt counted), writes every result it has, and resolves when idle.
   */
  stop(options: StopOptions = {}): Promise<void> {
    this.stopping ??= this.shutdown(options.graceMs ?? 10_000);
    return this.stopping;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }

  private now(): number {
    // Whole ms: every time the engine writes is an epoch-ms integer, whatever the clock's resolution.
    return Math.floor(this.opts.clock.now());
  }

  /** Arms the due timer for `at` unless stopping: a timer left armed after stop() would keep the process alive. */
  private aim(at: number): void {
    if (this.state === 'running') this.dueTimer.aimAt(at);
  }

  private pump(): void {
    if (this.state !== 'running' || this.claiming !== undefined || !this.maybeDue) return;
    // Back-pressure: while the store falls behind on results, do not take on more work.
    if (this.batcher.size >= 4 * this.opts.concurrency) return;
    const { inFlight } = this.runner;
    const free = this.opts.concurrency - inFlight - this.reserved;
    if (free <= 0 || !this.pacing.claimNow(free, inFlight + this.reserved)) return;
    this.claiming = this.claim(Math.min(this.opts.claimBatchSize, free)).finally(() => {
      this.claiming = undefined;
      this.pump();
    });
  }

  private async claim(limit: number): Promise<void> {
    this.woken = false;
    const started = this.pacing.started();
    try {
      // Each tenant and target is offered its share of the slots first; only if that leaves some unused (the others had
      // no more due) does a second claim offer them more (see `SlotShares`).
      const { shares } = this.pacing;
      let rooms = shares.rooms(limit, false);
      // No room below the limit: no one's share binds, so no one can be offered more (and nothing is built per claim).
      const growth = rooms === undefined ? undefined : shares.growth(limit);
      const options: ClaimOptions = { limit, leaseMs: this.opts.leaseMs, workerId: this.workerId, after: this.claimCursor, rooms };
      // With results about to be written, the claim goes in the same write: one commit per cycle, not two.
      const tasks = await (this.batcher.claimAlong(options) ?? this.timedStore.claimDue(this.now(), options));
      let claimed = this.adoptClaimed(tasks, options.after);
      let last = tasks;
      if (growth !== undefined && claimed < limit && this.state === 'running' && worthGrowing(growth, tasks)) {
        rooms = shares.rooms(limit - claimed, true);
        const more: ClaimOptions = { limit: limit - claimed, leaseMs: this.opts.leaseMs, workerId: this.workerId, after: this.claimCursor, rooms };
        last = await this.timedStore.claimDue(this.now(), more);
        claimed += this.adoptClaimed(last, more.after);
      }
      // A claim its rooms cut short leaves tasks due (no need to ask the store): those of whoever filled its room.
      let moreDue = claimed >= limit || (rooms !== undefined && fillsRoom(rooms, last));
      if (!moreDue) {
        const next = await this.store.nextDueAt();
        const now = this.now();
        moreDue = next !== null && next <= now;
        if (!moreDue) this.aim(Math.min(next ?? Infinity, now + this.opts.maxIdleMs));
      }
      this.pacing.finished(rooms, claimed, limit, moreDue, this.woken, started);
      this.maybeDue = moreDue || this.woken;
    } catch (error) {
      this.report(error, { operation: 'claim' });
      this.maybeDue = false;
      this.aim(this.now() + this.claimBackoff.nextDelayMs);
      this.claimBackoff.failed();
    }
  }

  /** Takes over the tasks of a claim that started the ring after `after`: counted in the shares and run. Returns how many. */
  private adoptClaimed(tasks: readonly RetryTask[], after: TargetRef | undefined): number {
    this.claimBackoff.reset();
    this.claimCursor = lastQueueServed(tasks, after);
    if (tasks.length === 0) return 0;
    const launch = this.state === 'running';
    if (launch) for (const task of tasks) this.pacing.shares.take(task);
    // Claimed while stopping: held but never started; shutdown hands them back.
    this.runner.run(tasks, launch);
    return tasks.length;
  }

  private async reap(tasks: RetryTask[]): Promise<void> {
    const [policies] = await Promise.all([this.policies.resolve(tasks), this.retention.resolve(tasks)]);
    const now = this.now();
    const written = tasks.map((task, i) => {
      const ctx = { policy: policies[i] as RetryPolicy, now, random: this.opts.random, workerId: this.workerId, retention: this.retention.periodsFor(task) };
      const completion = decideLeaseExpired(task, ctx);
      return new Promise<void>((resolve) =>
        this.batcher.add({ task, completion, leaseExpiresAt: now, fromReaper: true, onSettled: () => resolve() }),
      );
    });
    await Promise.all(written);
  }

  private onResults(items: readonly QueuedCompletion[], results: readonly CompletionResult[], now: number): void {
    const { onAttempt, onDeadLetter, onTaskEnded, protection, metrics } = this.options;
    let earliest = Infinity;
    // An attempt that ends frees a place in its target's gate, if the gate counts them: a claim may find more.
    let freed = false;
    for (let i = 0; i < items.length; i++) {
      const item = items[i] as QueuedCompletion;
      const result = results[i];
      const { completion } = item;
      if (!item.fromReaper) this.runner.held.delete(completion.taskId);
      if (result === undefined || result.kind === 'fenced_out') {
        // Another instance's reaper winning the race for the same lapsed lease is normal, not an error.
        if (!item.fromReaper) this.report(new FencedOutError(completion.taskId, completion.fencingToken), taskContext('complete', item.task));
        continue;
      }
      if (protection !== undefined && !freed) freed = protection.limitsInFlight(item.task);
      if (metrics !== undefined) this.hook(observeCompletion, metrics, item.task, completion, result, now);
      const { status, nextAttemptAt } = result;
      const dead = status === 'FAILED' || status === 'EXHAUSTED';
      // The whole task is rebuilt only for a hook that wants it: most attempts have none.
      const attempt = onAttempt === undefined ? undefined : attemptLogged(completion, result);
      if (attempt !== undefined || (dead && onDeadLetter !== undefined)) {
        const task = taskAfterCompletion(item.task, completion, result, now);
        if (attempt !== undefined && onAttempt !== undefined) this.hook(onAttempt, task, attempt);
        if (dead && onDeadLetter !== undefined) this.hook(onDeadLetter, task);
      }
      if (onTaskEnded !== undefined && isTerminal(status)) this.hook(onTaskEnded, item.task, status);
      if (status === 'PENDING' && nextAttemptAt !== null && nextAttemptAt < earliest) earliest = nextAttemptAt;
    }
    if (earliest !== Infinity) this.aim(earliest);
    if (freed) this.maybeDue = true;
    this.pump();
  }

  private onGiveUp(item: QueuedCompletion, reason: string): void {
    if (item.fromReaper) return;
    this.runner.held.delete(item.completion.taskId);
    this.reaper.nudge(item.leaseExpiresAt);
    this.report(new CompletionAbandonedError(item.completion.taskId, reason), taskContext('complete', item.task));
  }

  private hook<A extends unknown[]>(fn: (...args: A) => void, ...args: A): void {
    try {
      fn(...args);
    } catch (error) {
      this.report(error, { operation: 'hook' });
    }
  }

  private report(error: unknown, context: EngineErrorContext): void {
    try {
      this.options.onError?.(error, context);
    } catch {
      // A failing error hook must not take the engine down with it.
    }
  }

  private async shutdown(graceMs: number): Promise<void> {
    const deadline = this.now() + graceMs;
    const wasRunning = this.state === 'running';
    this.state = 'stopping';
    this.dueTimer.clear();
    this.pacing.close();
    this.claimBackoff.interrupt();
    this.runner.stopLaunching();
    const reaperStopped = this.reaper.stop();
    await this.claiming;
    if (wasRunning) await this.runner.whenIdle(deadline);
    const open = this.runner.releaseOpen();
    if (open.length > 0) {
      // Abort first, release second: no attempt of ours may still be on the wire when another worker takes the task.
      await this.dispatcher.destroy();
      await this.release(open, deadline + SETTLE_MS);
    } else {
      await this.dispatcher.close();
    }
    await this.batcher.drain(Math.max(deadline, this.now()) + SETTLE_MS);
    await reaperStopped;
    this.state = 'stopped';
  }

  private async release(entries: Held[], deadline: number): Promise<void> {
    const leases = entries.map(({ task }) => leaseOf(task));
    const backoff = new StoreBackoff(this.opts.clock, this.opts.random);
    for (;;) {
      try {
        await this.store.releaseLeases(leases, this.now());
        return;
      } catch (error) {
        this.report(error, { operation: 'release' });
        // Given up: the leases lapse and the reaper (this instance's next run, or another's) frees the tasks.
        if (this.now() + backoff.nextDelayMs > deadline) return;
        await backoff.wait();
      }
    }
  }
}

/** The lease a claimed task holds, as `releaseLeases` takes it. */
function leaseOf(task: RetryTask): LeaseRef {
  return { tenantId: task.tenantId, taskId: task.taskId, fencingToken: task.fencingToken };
}
