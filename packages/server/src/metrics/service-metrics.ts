import { CircuitState, systemClock, type Clock, type TaskStatus } from '@retryd/core';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { AttemptLogOutcome, type AttemptLog, type RetryTask } from '../domain/task.js';
import type { EngineMetrics, TimedStoreCall } from '../engine/engine-metrics.js';
import type { KnownTargetState } from '../protection/target-protection.js';
import type { TargetRef } from '../store/store.js';
import type { Store } from '../store/store.js';
import { BucketHistogram, type BucketSeries } from './bucket-histogram.js';
import { LabelCap, TenantLabelCap } from './label-cap.js';
import { ServiceHistory } from './history/service-history.js';
import { registerOldestPendingGauge } from './oldest-pending-gauge.js';
import { QueueDepth, QUEUE_DEPTH_CACHE_MS } from './queue-depth.js';

/** Most distinct `target` label values (origins) of each tenant; its later targets fold into `other`. */
export const MAX_TARGET_LABELS = 100;
/** Most distinct `policy` label values (policy names; `inline` for inline policies) of each tenant; its later ones fold into `other`. */
export const MAX_POLICY_LABELS = 50;
/** Most distinct dead-letter `reason` label values (`permanent_status:<code>` has one per status); later ones fold into `other`. */
export const MAX_REASON_LABELS = 50;
/** The `policy` label of a task with an inline policy. */
export const INLINE_POLICY_LABEL = 'inline';

/** Options of {@link ServiceMetrics}. Only `store` is required. */
export interface ServiceMetricsOptions {
  /**
   * Read at scrape time, each read at most once per `queueDepthCacheMs`: tasks by status (`admin.countByStatus()`) and
   * the oldest PENDING task of each target (`admin.oldestPending()`).
   */
  store: Pick<Store, 'admin'>;
  /** What this instance knows of its targets (`TargetProtection.knownTargets`), read at scrape time. Absent: the `retry_target_*` metrics have no series. */
  targets?: {
    knownTargets(now: number): Iterable<KnownTargetState>;
    /** The tasks due and waiting on one target (counted up to the store's cap), for `retry_target_held_tasks`: read for held and half-open targets. */
    dueTasks?(ref: TargetRef, now: number): Promise<number>;
    /**
     * The latest moment up to `now` at which the target was known held (breaker not closed, or a hold): a task due
     * before it waited for its target, so `retry_schedule_lag_seconds` counts from it and the wait before it goes to
     * `retry_target_held_wait_seconds`. Absent: the lag counts from the due time.
     */
    heldThrough?(ref: TargetRef, now: number): number;
  };
  /** Attempts in flight now (`Engine.load`), read at scrape time. Absent: `retry_in_flight` reads 0. */
  load?: () => { inFlight: number };
  /** Times the queue-depth cache. Default `systemClock`. */
  clock?: Clock;
  /** How long each store read at scrape time serves scrapes, in ms. Default {@link QUEUE_DEPTH_CACHE_MS} (5 s). */
  queueDepthCacheMs?: number;
  /** Most `target` label values of each tenant. Default {@link MAX_TARGET_LABELS}. */
  maxTargets?: number;
  /** Most `policy` label values of each tenant. Default {@link MAX_POLICY_LABELS}. */
  maxPolicies?: number;
  /** Node's process metrics (`process_*`, `nodejs_*`, from prom-client's `collectDefaultMetrics`). Default true. */
  processMetrics?: boolean;
  /**
   * Called with a failure a scrape survives (a store read failed): that scrape has no `retry_tasks` series (the count
   * failed) or no `retry_oldest_pending_age_seconds` series (the oldest pending tasks could not be read).
   */
  onError?: (error: unknown) => void;
}

/** What {@link ServiceMetrics.stats} reads: totals since start (every tenant), and the tasks in each status now. */
export interface ConsoleStats {
  /** When read, epoch ms. */
  at: number;
  /** Attempts recorded, by outcome (`succeeded`, `retry_scheduled`, `failed`, ...), as `retry_attempts_total`. */
  attempts: Record<string, number>;
  /** Tasks in each status, as `retry_tasks`; empty when the store could not count. */
  tasks: Partial<Record<TaskStatus, number>>;
  /** Tasks that ended FAILED or EXHAUSTED since start, as `retry_dead_letters_total`. */
  deadLetters: number;
  /** `retry_schedule_lag_seconds`: attempts observed and their summed lag. */
  scheduleLag: { count: number; sumSeconds: number };
  /** Attempts this instance has in flight, as `retry_in_flight`. */
  inFlight: number;
}

/**
 * The attempts of one series of `retry_attempts_total` not yet added to the counter. prom-client's labelled child
 * hashes its labels again at every `inc` (the target's origin among them): the hot path adds to this instead, and the
 * counter's `collect` adds what is pending when it is read (a scrape, the console's sampling, the stats).
 */
interface PendingAttempts {
  readonly labels: { outcome: string; policy: string; target: string };
  n: number;
}

const BREAKER_STATES = [CircuitState.CLOSED, CircuitState.OPEN, CircuitState.HALF_OPEN] as const;
const STATUS_LABELS: readonly TaskStatus[] = ['PENDING', 'IN_FLIGHT', 'SUCCEEDED', 'FAILED', 'EXHAUSTED', 'CANCELLED'];

/**
 * The service's Prometheus metrics, in a registry of their own (not prom-client's global one: one process may run
 * several services, as the tests do). It is the engine's {@link EngineMetrics}: each recorded attempt, ended task and
 * timed store call costs a few map lookups and additions, no I/O. What is cheap to read on demand (tasks by status,
 * attempts in flight, the targets' breakers and limits) is read when scraped.
 *
 * Labels are bounded: `target` is the task's `targetKey` (an origin) and `policy` its policy's name (`inline` for an
 * inline policy), each capped per tenant ({@link MAX_TARGET_LABELS}, {@link MAX_POLICY_LABELS} for each) with a
 * tenant's later values folded into `other`, so one tenant's many targets never hide another's; tenants are no label
 * (a tenant's targets and policies merge with other tenants' of the same name).
 *
 * @example
 * ```ts
 * const metrics = new ServiceMetrics({ store, targets: protection, load: () => engine.load });
 * const engine = new Engine({ store, metrics });
 * reply.type(metrics.contentType).send(await metrics.scrape());
 * ```
 */
export class ServiceMetrics implements EngineMetrics {
  /** The registry every metric of this service is in. */
  readonly registry = new Registry();
  private readonly targetLabels: TenantLabelCap;
  private readonly policyLabels: TenantLabelCap;
  private readonly reasonLabels = new LabelCap(MAX_REASON_LABELS);
  private readonly attempts: Counter<'outcome' | 'policy' | 'target'>;
  private readonly attemptChildren = new Map<string, Map<string, Map<string, PendingAttempts>>>();
  private readonly pendingAttempts: PendingAttempts[] = [];
  private readonly attemptDuration: BucketHistogram;
  private readonly scheduleLag: BucketHistogram;
  private readonly heldWait: BucketHistogram;
  private readonly heldThrough: ((ref: TargetRef, now: number) => number) | undefined;
  private readonly taskAge: BucketHistogram<'status'>;
  private readonly taskAgeChildren = new Map<string, BucketSeries>();
  private readonly deadLetters: Counter<'reason'>;
  private readonly purged: Counter<'status'>;
  private readonly storeDuration: BucketHistogram<'operation'>;
  private readonly storeChildren: Record<TimedStoreCall, BucketSeries>;
  private readonly tasks: Gauge<'status'>;
  private readonly inFlight: Gauge;
  private readonly clock: Clock;
  /** The web console's last hour, read from these metrics: sampling once `history.start()` is called (`retryd serve` does). */
  readonly history: ServiceHistory;

  constructor(options: ServiceMetricsOptions) {
    const registers = [this.registry];
    this.clock = options.clock ?? systemClock;
    this.targetLabels = new TenantLabelCap(options.maxTargets ?? MAX_TARGET_LABELS);
    this.policyLabels = new TenantLabelCap(options.maxPolicies ?? MAX_POLICY_LABELS);
    const depth = new QueueDepth(options.store, () => this.clock.now(), options.queueDepthCacheMs ?? QUEUE_DEPTH_CACHE_MS);
    const report = (error: unknown) => {
      try {
        options.onError?.(error);
      } catch {
        // A failing hook must not fail the scrape.
      }
    };

    this.attempts = new Counter({
      name: 'retry_attempts_total',
      help: 'Attempts recorded, by outcome (as in the attempt log), policy name and target origin.',
      labelNames: ['outcome', 'policy', 'target'] as const,
      registers,
      collect: () => this.addPendingAttempts(),
    });
    this.attemptDuration = new BucketHistogram({
      name: 'retry_attempt_duration_seconds',
      help: 'Time from sending an attempt to its outcome (lost attempts, lease_expired, are not observed).',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.scheduleLag = new BucketHistogram({
      name: 'retry_schedule_lag_seconds',
      help: "Time from when a task could be dispatched (its due time, or its target's hold ending after it) to the start of its attempt.",
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    });
    this.heldWait = new BucketHistogram({
      name: 'retry_target_held_wait_seconds',
      help: "Time from a task's due time to the end of its target's hold (breaker open or half-open, Retry-After), for tasks whose target held them.",
      buckets: [0.01, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 1_800, 3_600],
      registers,
    });
    const targets = options.targets;
    this.heldThrough = targets?.heldThrough === undefined ? undefined : (ref, now) => targets.heldThrough!(ref, now);
    this.taskAge = new BucketHistogram({
      name: 'retry_task_age_seconds',
      help: 'Age of a task (now minus its creation) when it ends, by final status.',
      labelNames: ['status'] as const,
      buckets: [0.1, 1, 10, 60, 300, 1_800, 3_600, 14_400, 86_400, 604_800],
      registers,
    });
    this.deadLetters = new Counter({
      name: 'retry_dead_letters_total',
      help: 'Tasks that ended FAILED or EXHAUSTED, by dead-letter reason.',
      labelNames: ['reason'] as const,
      registers,
    });
    this.purged = new Counter({
      name: 'retry_tasks_purged_total',
      help: 'Finished tasks deleted by this instance once their retention passed (with their attempts and idempotency keys), by final status.',
      labelNames: ['status'] as const,
      registers,
    });
    this.storeDuration = new BucketHistogram({
      name: 'retry_store_duration_seconds',
      help: "Time of the engine's store calls: claim (claimDue) and commit (completeAttempts, completeAndClaim).",
      labelNames: ['operation'] as const,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    this.storeChildren = { claim: this.storeDuration.labels('claim'), commit: this.storeDuration.labels('commit') };

    const tasks: Gauge<'status'> = new Gauge({
      name: 'retry_tasks',
      help: `Tasks in each status, every tenant (counted at most once per ${(options.queueDepthCacheMs ?? QUEUE_DEPTH_CACHE_MS) / 1_000} s).`,
      labelNames: ['status'] as const,
      registers,
      collect: async () => {
        try {
          const counts = await depth.read();
          for (const status of STATUS_LABELS) tasks.set({ status }, counts[status] ?? 0);
        } catch (error) {
          tasks.reset();
          report(error);
        }
      },
    });
    const inFlight: Gauge = new Gauge({
      name: 'retry_in_flight',
      help: "Attempts this instance's engine has in flight.",
      registers,
      collect: () => inFlight.set(options.load?.().inFlight ?? 0),
    });
    this.tasks = tasks;
    this.inFlight = inFlight;
    registerOldestPendingGauge({
      store: options.store,
      targets: this.targetLabels,
      now: () => this.clock.now(),
      cacheMs: options.queueDepthCacheMs ?? QUEUE_DEPTH_CACHE_MS,
      registers,
      onError: report,
    });
    this.targetGauges(options.targets, registers);
    this.history = new ServiceHistory({
      attempts: () => this.attemptTotals(),
      ...(targets === undefined ? {} : { targets }),
      clock: this.clock,
      onError: report,
    });
    if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry });
  }

  /** The `Content-Type` of {@link ServiceMetrics.scrape}'s text (Prometheus text format 0.0.4). */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Every metric in the Prometheus text format. */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  /** The names of every metric this service exports (histograms by their base name). */
  metricNames(): string[] {
    return this.registry.getMetricsAsArray().map((metric) => metric.name);
  }

  /**
   * The numbers the web console shows (`GET /console/stats`), read from the same metrics as {@link scrape}: totals
   * since the service started, so a reader computes rates from two readings. Costs what a scrape of these few costs
   * (the task counts are cached as for a scrape).
   */
  async stats(): Promise<ConsoleStats> {
    const attempts = await this.attemptTotals();
    const tasks: Partial<Record<TaskStatus, number>> = {};
    for (const { labels, value } of (await this.tasks.get()).values) tasks[labels.status as TaskStatus] = value;
    let deadLetters = 0;
    for (const { value } of (await this.deadLetters.get()).values) deadLetters += value;
    const scheduleLag = { count: 0, sumSeconds: 0 };
    for (const { metricName, value } of (await this.scheduleLag.get()).values) {
      if (metricName === 'retry_schedule_lag_seconds_count') scheduleLag.count = value;
      else if (metricName === 'retry_schedule_lag_seconds_sum') scheduleLag.sumSeconds = value;
    }
    const inFlight = (await this.inFlight.get()).values[0]?.value ?? 0;
    return { at: this.clock.now(), attempts, tasks, deadLetters, scheduleLag, inFlight };
  }

  /** Attempts recorded since start by outcome, every policy and target summed (`retry_attempts_total`). */
  async attemptTotals(): Promise<Record<string, number>> {
    const attempts: Record<string, number> = {};
    for (const { labels, value } of (await this.attempts.get()).values) {
      const outcome = String(labels.outcome);
      attempts[outcome] = (attempts[outcome] ?? 0) + value;
    }
    return attempts;
  }

  attemptRecorded(task: RetryTask, attempt: AttemptLog): void {
    const policy = this.policyLabels.label(task.tenantId, task.policyId ?? INLINE_POLICY_LABEL);
    const target = this.targetLabels.label(task.tenantId, task.targetKey);
    // Nested by label rather than one joined key: the labels' hashes are already computed (LabelCap looked them up),
    // where a joined key would be a new string to flatten and hash on every attempt.
    let byPolicy = this.attemptChildren.get(target);
    if (byPolicy === undefined) {
      byPolicy = new Map();
      this.attemptChildren.set(target, byPolicy);
    }
    let byOutcome = byPolicy.get(policy);
    if (byOutcome === undefined) {
      byOutcome = new Map();
      byPolicy.set(policy, byOutcome);
    }
    let pending = byOutcome.get(attempt.outcome);
    if (pending === undefined) {
      pending = { labels: { outcome: attempt.outcome, policy, target }, n: 0 };
      byOutcome.set(attempt.outcome, pending);
      this.pendingAttempts.push(pending);
    }
    pending.n++;
    // A lost attempt's start and duration are not known: its worker went silent.
    if (attempt.outcome === AttemptLogOutcome.LEASE_EXPIRED) return;
    this.attemptDuration.observe(attempt.durationMs / 1_000);
    const due = task.nextAttemptAt;
    if (due === null) return;
    // Waiting on a held target is not the service being slow: counted apart, so one down target does not page.
    const heldEnd = this.heldThrough?.(task, attempt.startedAt) ?? -Infinity;
    if (heldEnd > due) this.heldWait.observe((heldEnd - due) / 1_000);
    this.scheduleLag.observe(Math.max(0, attempt.startedAt - Math.max(due, heldEnd)) / 1_000);
  }

  /** Adds the attempts recorded since the counter was last read to it (its `collect`). */
  private addPendingAttempts(): void {
    for (const pending of this.pendingAttempts) {
      if (pending.n === 0) continue;
      this.attempts.inc(pending.labels, pending.n);
      pending.n = 0;
    }
  }

  taskEnded(task: RetryTask, status: TaskStatus, deadLetterReason: string | null, now: number): void {
    let child = this.taskAgeChildren.get(status);
    if (child === undefined) {
      child = this.taskAge.labels(status);
      this.taskAgeChildren.set(status, child);
    }
    child.observe(Math.max(0, now - task.createdAt) / 1_000);
    if (status === 'FAILED' || status === 'EXHAUSTED') this.deadLetters.inc({ reason: this.reasonLabels.label(deadLetterReason ?? 'unknown') });
  }

  /** Finished tasks the purge deleted (`Purger`'s `onPurged`). */
  tasksPurged(tasks: readonly { status: TaskStatus }[]): void {
    const counts = new Map<TaskStatus, number>();
    for (const { status } of tasks) counts.set(status, (counts.get(status) ?? 0) + 1);
    for (const [status, n] of counts) this.purged.inc({ status }, n);
  }

  storeCallTimed(call: TimedStoreCall, seconds: number): void {
    this.storeChildren[call].observe(seconds);
  }

  /** Per-target gauges, summed over tenants (and over the targets folded into `other`) at scrape time. */
  private targetGauges(source: ServiceMetricsOptions['targets'], registers: Registry[]): void {
    const known = (): Iterable<KnownTargetState> => source?.knownTargets(this.clock.now()) ?? [];
    const breaker: Gauge<'target' | 'state'> = new Gauge({
      name: 'retry_target_breaker_state',
      help: "Circuit breakers of a target (one per tenant that uses it) in each state: 1 or 0 with one tenant.",
      labelNames: ['target', 'state'] as const,
      registers,
      collect: () => {
        breaker.reset();
        for (const { tenantId, targetKey, breaker: current } of known()) {
          const target = this.targetLabels.label(tenantId, targetKey);
          for (const state of BREAKER_STATES) breaker.inc({ target, state: state.toLowerCase() }, state === current ? 1 : 0);
        }
      },
    });
    const rate: Gauge<'target'> = new Gauge({
      name: 'retry_target_allowed_rate_per_second',
      help: 'Requests per second a target is allowed now (its adaptive limit, else its configured one); no series when unlimited.',
      labelNames: ['target'] as const,
      registers,
      collect: () => {
        rate.reset();
        for (const { tenantId, targetKey, allowedRatePerSecond } of known()) {
          if (allowedRatePerSecond !== null) rate.inc({ target: this.targetLabels.label(tenantId, targetKey) }, allowedRatePerSecond);
        }
      },
    });
    const held: Gauge<'target'> = new Gauge({
      name: 'retry_target_held',
      help: "Whether a target is held (by a Retry-After or its breaker's open period): tenants holding it, 1 or 0 with one tenant.",
      labelNames: ['target'] as const,
      registers,
      collect: () => {
        held.reset();
        for (const { tenantId, targetKey, held: isHeld } of known()) held.inc({ target: this.targetLabels.label(tenantId, targetKey) }, isHeld ? 1 : 0);
      },
    });
    const heldTasks: Gauge<'target'> = new Gauge({
      name: 'retry_target_held_tasks',
      help: 'Tasks due and waiting on a target held or whose breaker is half-open (counted up to 1000 per tenant), read from the store at scrape time; no series for a target neither.',
      labelNames: ['target'] as const,
      registers,
      collect: async () => {
        heldTasks.reset();
        const dueTasks = source?.dueTasks?.bind(source);
        if (dueTasks === undefined) return;
        const now = this.clock.now();
        // A half-open breaker lets only its probes through: the rest wait as on a held target. Counted so that an
        // alert tells a half-open target with work waiting (stuck) from an idle one left half-open (nothing to do).
        const heldBack = [...known()].filter((target) => target.held || target.breaker === CircuitState.HALF_OPEN);
        const counts = await Promise.all(
          // A store that cannot answer leaves the series out of this scrape rather than failing the whole scrape.
          heldBack.map(({ tenantId, targetKey }) => dueTasks({ tenantId, targetKey }, now).catch(() => undefined)),
        );
        heldBack.forEach(({ tenantId, targetKey }, i) => {
          const count = counts[i];
          if (count !== undefined) heldTasks.inc({ target: this.targetLabels.label(tenantId, targetKey) }, count);
        });
      },
    });
  }
}
