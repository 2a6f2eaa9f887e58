import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { systemClock, type Clock, type Random, type TaskStatus } from '@retryd/core';
import type { AttemptLog, RetryTask } from '../domain/task.js';
import type { TargetGuard } from '../security/target-guard.js';
import type { Tracer } from '@opentelemetry/api';
import type { Store } from '../store/store.js';
import type { RetentionBook } from '../retention/retention-book.js';
import type { AttemptDispatcher } from './attempt-result.js';
import type { AttemptProtection } from './attempt-protection.js';
import type { EngineErrorContext } from './engine-errors.js';
import type { EngineMetrics } from './engine-metrics.js';
import type { FaultHook } from './fault-point.js';
import { defaultPerTarget, defaultPerTenant } from './slot-shares.js';
import type { LoadBody } from './http-dispatcher.js';
import type { TaskSecrets } from '../secrets/task-secrets.js';

/** The default of `EngineOptions.maxRetryAfterMs`: an hour. */
export const DEFAULT_MAX_RETRY_AFTER_MS = 3_600_000;

/**
 * The part of the store port the engine uses: claims and completions, leases and due times, the policies its tasks
 * name and per-target state (retention). Not the enqueue, the operator's transitions, listings or the purge.
 */
export type EngineStore = Pick<
  Store,
  | 'claimDue'
  | 'completeAttempts'
  | 'completeAndClaim'
  | 'extendLease'
  | 'releaseLeases'
  | 'nextDueAt'
  | 'findExpiredLeases'
  | 'nextLeaseExpiryAt'
  | 'getPolicy'
  | 'targetState'
>;

/** Options of {@link Engine}. Only `store` is required. */
export interface EngineOptions {
  /** Where tasks live; the engine claims and completes through it (the caller opens, inits and closes it). */
  store: EngineStore;
  /**
   * How long each task is kept once it ends (the service's periods, its tenant's and its policy's own). Default: the
   * service's `DEFAULT_RETENTION` and the overrides in `store.targetState`.
   */
  retention?: RetentionBook;
  /** Reads `bodyRef` bodies from the blob store (`BlobStore.get`). */
  loadBody?: LoadBody;
  /**
   * Makes the attempts. Default: an {@link HttpDispatcher} built from the timeouts below and `targetGuard` (HTTP
   * targets only; the service passes a `SchemeDispatcher` that sends gRPC targets to a `GrpcDispatcher`).
   */
  dispatcher?: AttemptDispatcher;
  /**
   * Reveals each task's secrets (sealed headers and bodies, `{{secret:NAME}}` references) right before its request is
   * built. Default: no encryption key, references from the environment (`RETRYD_SECRET_<NAME>`).
   */
  secrets?: TaskSecrets;
  /**
   * Checks the address of every connection the default dispatcher opens (the `--allow-targets` allowance in force
   * now, not the one a task was created under); a task whose target is refused ends FAILED (`target_blocked`).
   * Default: a guard with no allowance. Not used with a `dispatcher` of your own.
   */
  targetGuard?: TargetGuard;
  /** Every time the engine reads and every wait it makes (timers, back-offs, attempt timeouts). Default `systemClock`. */
  clock?: Clock;
  /** Draws the jitter of retry delays and of the engine's own store back-off. Default `Math.random`. */
  random?: Random;
  /** This worker's name on leases and in attempt logs. Default `<hostname>-<pid>-<6 hex>`. */
  workerId?: string;
  /** Most attempts in flight at once. Default 256. */
  concurrency?: number;
  /**
   * Most of the `concurrency` slots one tenant may hold, on this engine. Default all but a thirty-second of them, rounded
   * down (248 of 256; all of fewer than 32). Past its fair share of the slots (`concurrency` ÷ the tenants holding some) a tenant grows only while that
   * leaves `concurrency − maxInFlightPerTenant` of them free, so that another tenant's task is dispatched at once even
   * while one tenant's target hangs (see `SlotShares`). Set it to `concurrency` to let one tenant fill every slot.
   */
  maxInFlightPerTenant?: number;
  /**
   * Most of the `concurrency` slots one target (a tenant's origin) may hold, on this engine, whatever its protection
   * settings say. Default all but a sixteenth of them, rounded down (240 of 256; all of fewer than 16), and as a
   * tenant's past its fair share. A target's
   * own `maxInFlight` setting, shared by every instance, may bound it further.
   */
  maxInFlightPerTarget?: number;
  /**
   * The longest wait a downstream's `Retry-After` may ask for, in ms, unless the task's policy backs off longer itself
   * (its schedule's `maxDelayMs` for that failure): a task asked to wait longer is dead-lettered at once
   * (`retry_after_beyond_limit`) rather than parked for it. Default 3 600 000 (an hour). It caps a `Retry-After` hold of
   * a whole target too.
   */
  maxRetryAfterMs?: number;
  /** Most tasks claimed by one `claimDue`. Default 128. */
  claimBatchSize?: number;
  /**
   * Lease (visibility timeout) of a claimed task, in ms. Default `attemptTimeoutMs + 30 000`. An attempt whose own
   * timeout (its task's or its target's) is longer has its lease extended before it is sent, by as much more.
   */
  leaseMs?: number;
  /** Most time one attempt may take (connect, request, response headers, snippet), in ms. Default 30 000. */
  attemptTimeoutMs?: number;
  /**
   * TCP/TLS connect timeout, in ms. Default 5 000. One longer than `attemptTimeoutMs` is cut to it: the attempt's timer
   * bounds the connect too. A task's or its target's own timeouts win over these two (see domain/attempt-timeouts.ts).
   */
  connectTimeoutMs?: number;
  /** Keep-alive connections per origin. Default `concurrency`. */
  connectionsPerOrigin?: number;
  /** How long a named policy is cached, in ms (see also `invalidatePolicy`). Default 1 000. */
  policyCacheMs?: number;
  /**
   * Longest an idle engine sleeps before looking at the store again, in ms: picks up work it was not woken for
   * (tasks written by another instance, leases taken by one). Its lease reaper looks at least once per `leaseMs` too,
   * so that a lease another instance took is reaped as it lapses. Default 5 000.
   */
  maxIdleMs?: number;
  /**
   * Per-target protection (`TargetProtection`: breakers, limits, adaptive throttling, retry budgets), told of every
   * attempt and consulted before every retry and hand-off. Absent: none, every task retries on its own schedule.
   */
  protection?: AttemptProtection;
  /**
   * Told of every recorded attempt, every task that ends and the time of every claim and commit (the service's
   * Prometheus metrics, `ServiceMetrics`). Absent: nothing is measured, and the store calls are not wrapped.
   */
  metrics?: EngineMetrics;
  /**
   * Makes every attempt an OpenTelemetry CLIENT span, a child of the `traceparent` the task was enqueued with (see
   * `AttemptTracing`), and sends the span's context as the request's `traceparent`. Absent (the default): no span is
   * made and the stored `traceparent` is sent as it is.
   */
  tracer?: Tracer;
  /** Called with every task that ends FAILED or EXHAUSTED, after the change is durable. */
  onDeadLetter?: (task: RetryTask) => void;
  /**
   * Called with every task that reached a final status (SUCCEEDED, FAILED, EXHAUSTED, CANCELLED) through this
   * engine, after the change is durable: the task as it was claimed, and the status it ended in. Cheap: nothing is
   * rebuilt for it.
   */
  onTaskEnded?: (task: RetryTask, status: TaskStatus) => void;
  /** Called with every recorded attempt and the task as it stands after it, once durable. */
  onAttempt?: (task: RetryTask, attempt: AttemptLog) => void;
  /** Called with every failure the engine survives (store errors, fenced-out completions, a throwing hook). */
  onError?: (error: unknown, context: EngineErrorContext) => void;
  /** Test only (the chaos suite): called at each {@link FaultHook | fault point} of every attempt. Default: none. */
  faultHook?: FaultHook;
}

/** Options of {@link Engine.stop}. */
export interface StopOptions {
  /**
   * How long attempts in flight may take to finish, in ms; afterwards they are aborted and their leases handed back.
   * Results are then written within 5 s more at most. Default 10 000.
   */
  graceMs?: number;
}

/** {@link EngineOptions} with defaults applied. */
export interface ResolvedEngineOptions {
  clock: Clock;
  random: Random;
  workerId: string;
  concurrency: number;
  maxInFlightPerTenant: number;
  maxInFlightPerTarget: number;
  maxRetryAfterMs: number;
  claimBatchSize: number;
  leaseMs: number;
  attemptTimeoutMs: number;
  connectTimeoutMs: number;
  connectionsPerOrigin: number;
  policyCacheMs: number;
  maxIdleMs: number;
}

function check(name: string, value: number | undefined, min: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min) {
    throw new RangeError(`Expected \`${name}\` to be an integer >= ${min}, got ${String(value)}.`);
  }
  return value;
}

/** The default worker id: `<hostname>-<pid>-<6 hex>`, unique across restarts of the same process id. */
export function defaultWorkerId(): string {
  return `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

/**
 * Applies defaults and validates (exact messages naming the option and the rule).
 * @throws RangeError e.g. ``Expected `concurrency` to be an integer >= 1, got 0.``
 */
export function resolveEngineOptions(options: EngineOptions): ResolvedEngineOptions {
  const concurrency = check('concurrency', options.concurrency, 1, 256);
  const attemptTimeoutMs = check('attemptTimeoutMs', options.attemptTimeoutMs, 1, 30_000);
  const leaseMs = check('leaseMs', options.leaseMs, 1, attemptTimeoutMs + 30_000);
  // A lease that can lapse while its attempt is still allowed to run would hand a live task to another worker.
  if (leaseMs <= attemptTimeoutMs) {
    throw new RangeError(`Expected \`leaseMs\` to be greater than \`attemptTimeoutMs\` (${attemptTimeoutMs}), got ${leaseMs}.`);
  }
  // A connect timeout longer than the attempt's could never fire, and would only make a pool of its own.
  const connectTimeoutMs = Math.min(check('connectTimeoutMs', options.connectTimeoutMs, 1, 5_000), attemptTimeoutMs);
  if (options.workerId !== undefined && options.workerId.trim() === '') {
    throw new RangeError('Expected `workerId` to be a non-empty string.');
  }
  return {
    clock: options.clock ?? systemClock,
    random: options.random ?? Math.random,
    workerId: options.workerId ?? defaultWorkerId(),
    concurrency,
    // More than the slots there are would bound nothing: taken as all of them.
    maxInFlightPerTenant: Math.min(concurrency, check('maxInFlightPerTenant', options.maxInFlightPerTenant, 1, defaultPerTenant(concurrency))),
    maxInFlightPerTarget: Math.min(concurrency, check('maxInFlightPerTarget', options.maxInFlightPerTarget, 1, defaultPerTarget(concurrency))),
    maxRetryAfterMs: check('maxRetryAfterMs', options.maxRetryAfterMs, 0, DEFAULT_MAX_RETRY_AFTER_MS),
    claimBatchSize: check('claimBatchSize', options.claimBatchSize, 1, 128),
    leaseMs,
    attemptTimeoutMs,
    connectTimeoutMs,
    connectionsPerOrigin: check('connectionsPerOrigin', options.connectionsPerOrigin, 1, concurrency),
    policyCacheMs: check('policyCacheMs', options.policyCacheMs, 0, 1_000),
    maxIdleMs: check('maxIdleMs', options.maxIdleMs, 1, 5_000),
  };
}
