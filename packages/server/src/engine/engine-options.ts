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
import type { LoadBody } from './http-dispatcher.js';
import type { TaskSecrets } from '../secrets/task-secrets.js';

/** Options of {@link Engine}. Only `store` is required. */
export interface EngineOptions {
  /** Where tasks live; the engine claims and completes through it (the caller opens, inits and closes it). */
  store: Store;
  /**
   * How long each task is kept once it ends (the service's periods, its tenant's and its policy's own). Default: the
   * service's `DEFAULT_RETENTION` and the overrides in `store.targetState`.
   */
  retention?: RetentionBook;
  /** Reads `bodyRef` bodies from the blob store (`BlobStore.get`). */
  loadBody?: LoadBody;
  /** Makes the HTTP attempts. Default: an {@link HttpDispatcher} built from the timeouts below and `targetGuard`. */
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
    claimBatchSize: check('claimBatchSize', options.claimBatchSize, 1, 128),
    leaseMs,
    attemptTimeoutMs,
    connectTimeoutMs,
    connectionsPerOrigin: check('connectionsPerOrigin', options.connectionsPerOrigin, 1, concurrency),
    policyCacheMs: check('policyCacheMs', options.policyCacheMs, 0, 1_000),
    maxIdleMs: check('maxIdleMs', options.maxIdleMs, 1, 5_000),
  };
}
