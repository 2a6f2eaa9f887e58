import type { TaskStatus } from '@retryd/core';
import type { AttemptLog, Page, RetryTask, StoredPolicy } from '../domain/task.js';

/**
 * The store port: durable state for tasks, attempts, policies and per-target state.
 *
 * The engine decides (next status, next due time, dead-letter reason, all computed in TypeScript from
 * `@retryd/core`); a store only applies atomic, fenced transitions. No store computes a backoff, reads a
 * clock or interprets a policy: "now" is always an argument, so instances whose clocks differ slightly
 * still agree on ownership through leases and fencing tokens.
 *
 * Deliberately not in the port: HTTP concerns, validation, policy resolution, retry decisions, blob bodies
 * (see `BlobStore`), and any scan of all tasks — every read is by key, by index, or a bounded page.
 *
 * Every implementation passes the one conformance suite (`test/store-conformance.ts`).
 */
export interface Store extends AsyncDisposable {
  /** `sqlite`, `postgres` or `redis`: shown by `/readyz` and in logs. */
  readonly kind: string;

  /** Creates or migrates the schema. Safe to call from several instances at once. */
  init(): Promise<void>;
  /** Cheap liveness check of the backing server (`/readyz`). Rejects when it is unreachable. */
  ping(): Promise<void>;
  /** Releases connections; pending writes are finished first. */
  close(): Promise<void>;

  // ---- tasks -------------------------------------------------------------------------------------

  /**
   * Inserts new tasks in one transaction (group commit: one durable write for the whole batch).
   * A task whose `(tenantId, idempotencyKey)` already exists is not inserted; its result is `duplicate`
   * with the stored task, and the caller compares `requestHash` to tell a replay from a conflict.
   * Concurrent inserts of the same key yield exactly one `inserted`. Results are in input order.
   * When the promise resolves, every `inserted` task is durable.
   */
  insertTasks(tasks: readonly RetryTask[]): Promise<InsertResult[]>;

  getTask(tenantId: string, taskId: string): Promise<RetryTask | undefined>;
  getTaskByIdempotencyKey(tenantId: string, idempotencyKey: string): Promise<RetryTask | undefined>;

  /** Newest first (`createdAt`, then `taskId`, descending). Cursors are opaque strings made by the store. */
  listTasks(query: TaskQuery): Promise<Page<RetryTask>>;

  /**
   * Optimistic change for moves the API makes (cancel, replay, cancel-requested): applies `patch` only if the
   * task's `version` is still `expectedVersion`, raising the version. `conflict` returns the current task so the
   * caller can decide again.
   */
  updateTask(
    tenantId: string,
    taskId: string,
    expectedVersion: number,
    patch: TaskPatch,
  ): Promise<UpdateResult>;

  // ---- scheduling ---------------------------------------------------------------------------------

  /**
   * Claims up to `limit` PENDING tasks with `nextAttemptAt <= now`, earliest due first, through the due-time
   * index (never a scan): each becomes IN_FLIGHT with `leaseOwner = workerId`, `leaseExpiresAt = now + leaseMs`,
   * a raised `fencingToken` and `version`. Two concurrent claims never return the same task.
   */
  claimDue(now: number, options: ClaimOptions): Promise<RetryTask[]>;

  /** The earliest `nextAttemptAt` of any PENDING task, or null: the scheduler's single timer aims at it. */
  nextDueAt(): Promise<number | null>;

  /** IN_FLIGHT tasks whose lease lapsed at or before `now`, earliest first, at most `limit`. Does not change them. */
  findExpiredLeases(now: number, limit: number): Promise<RetryTask[]>;

  /** The earliest `leaseExpiresAt` of any IN_FLIGHT task, or null: when the lease reaper must look next. */
  nextLeaseExpiryAt(): Promise<number | null>;

  /**
   * Applies the end of attempts (or of lapsed leases) in one transaction: for each, only if the task is still
   * IN_FLIGHT with the same `fencingToken` (and, for `requireLeaseExpiredBy`, a lease lapsed by then), writes the
   * attempt log entry (if any) and the new state; a task on which a cancel was requested takes `ifCancelRequested`
   * instead of `next` when that is given, and then logs `attemptIfCancelRequested` (when given) instead of `attempt`.
   * Anything else is `fenced_out` and changes nothing: a worker that was paused past its lease cannot overwrite the
   * task's new owner. Results are in input order.
   *
   * An applied result is a summary, not the task: the caller already holds the claimed task and the outcomes it
   * decided, and reading every column back on the hottest path costs more than the change itself.
   */
  completeAttempts(completions: readonly AttemptCompletion[], now: number): Promise<CompletionResult[]>;

  /**
   * `completeAttempts(completions, now)` and then `claimDue(now, claim)`, in one write where the store can (one
   * transaction, one statement or one round trip): the engine's hot path hands back finished attempts and takes new
   * work together, so a busy worker pays one commit per cycle instead of two. Results are those of the two calls
   * (whether the claim can take a task that this call's completions made due at once is up to the store).
   *
   * Rejects if either part fails, and then leaves the store as the two calls would have if their answers had been
   * lost: what was applied stays applied (completions are fenced, so writing them again is refused rather than
   * doubled; an unanswered claim's leases lapse and are reaped).
   */
  completeAndClaim(completions: readonly AttemptCompletion[], now: number, claim: ClaimOptions): Promise<CompleteAndClaimResult>;

  /** Pushes a held lease to `leaseExpiresAt` if the token still matches; false when it no longer does. */
  extendLease(tenantId: string, taskId: string, fencingToken: number, leaseExpiresAt: number): Promise<boolean>;

  /**
   * Hands leases back at shutdown without counting an attempt: tasks still IN_FLIGHT with the given tokens become
   * PENDING, due at `now`. Returns how many were released.
   */
  releaseLeases(leases: readonly LeaseRef[], now: number): Promise<number>;

  // ---- attempts -----------------------------------------------------------------------------------

  /** A task's attempt log, oldest first. */
  listAttempts(tenantId: string, taskId: string, page: PageRequest): Promise<Page<AttemptLog>>;

  // ---- policies -----------------------------------------------------------------------------------

  /**
   * Registers a named policy. `create` inserts only if the id is free (else `exists` with the stored one);
   * `replace` overwrites an existing one (else `not_found`).
   */
  putPolicy(policy: StoredPolicy, mode: 'create' | 'replace'): Promise<PutPolicyResult>;
  getPolicy(tenantId: string, policyId: string): Promise<StoredPolicy | undefined>;
  listPolicies(tenantId: string, page: PageRequest): Promise<Page<StoredPolicy>>;

  // ---- per-target state -----------------------------------------------------------------------------

  /**
   * Per-target state shared by every instance (breaker snapshots, rate limits, retry budgets), as opaque JSON
   * under a key such as `breaker:https://api.example.com`. Versioned so concurrent writers cannot lose updates.
   */
  getTargetState(tenantId: string, key: string): Promise<TargetState | undefined>;
  /** Writes if the stored version is `expectedVersion` (0 = absent); false on a lost race. */
  putTargetState(tenantId: string, key: string, expectedVersion: number, value: string, now: number): Promise<boolean>;

  // ---- wake-ups ---------------------------------------------------------------------------------------

  /**
   * Optional: calls `listener` soon after another instance makes a task due now (PostgreSQL LISTEN/NOTIFY,
   * Redis pub/sub), so an idle engine wakes at once instead of at its next timer. Stores without it (SQLite, one
   * process) rely on the in-process wake-up from the API. Returns an unsubscribe function.
   */
  onDue?(listener: () => void): () => void;

  // ---- observability ------------------------------------------------------------------------------

  /** Task counts by status (readiness, metrics). May be approximate on very large stores but never scans rows in a hot path. */
  countByStatus(tenantId?: string): Promise<Record<TaskStatus, number>>;
}

export type InsertResult = { kind: 'inserted'; task: RetryTask } | { kind: 'duplicate'; task: RetryTask };

export interface PageRequest {
  /** Opaque cursor from the previous page's `nextCursor`. */
  cursor?: string;
  /** Page size, 1 to 1000. */
  limit: number;
}

export interface TaskQuery extends PageRequest {
  tenantId: string;
  /** One status or several (dead letters list FAILED and EXHAUSTED). */
  status?: TaskStatus | readonly TaskStatus[];
  policyId?: string;
}

/** Fields the API may change through `updateTask`. */
export type TaskPatch = Partial<
  Pick<
    RetryTask,
    | 'status'
    | 'nextAttemptAt'
    | 'cancelRequested'
    | 'runAttemptOffset'
    | 'runStartedAt'
    | 'lastDelayMs'
    | 'deadLetterReason'
    | 'lastError'
    | 'lastResponseStatus'
    | 'updatedAt'
  >
>;

export type UpdateResult =
  | { kind: 'updated'; task: RetryTask }
  | { kind: 'conflict'; task: RetryTask }
  | { kind: 'not_found' };

export interface ClaimOptions {
  limit: number;
  leaseMs: number;
  workerId: string;
}

export interface LeaseRef {
  tenantId: string;
  taskId: string;
  fencingToken: number;
}

/** The state a task moves to when an attempt ends: decided by the engine, applied by the store. */
export interface TaskOutcome {
  status: TaskStatus;
  attemptNumber: number;
  nextAttemptAt: number | null;
  runStartedAt: number | null;
  lastDelayMs: number;
  lastError: string | null;
  lastResponseStatus: number | null;
  deadLetterReason: string | null;
}

export interface AttemptCompletion extends LeaseRef {
  /** Apply only if the lease lapsed at or before this time (the lease reaper's guard). */
  requireLeaseExpiredBy?: number;
  /** The attempt to log with the change; absent for a change that made no attempt. */
  attempt?: AttemptLog;
  next: TaskOutcome;
  /** Applied instead of `next` when a cancel was requested during the attempt. */
  ifCancelRequested?: TaskOutcome;
  /**
   * Logged instead of `attempt` when `ifCancelRequested` is applied (so the log does not announce a retry that will
   * never happen). Absent: `attempt` is logged either way.
   */
  attemptIfCancelRequested?: AttemptLog;
}

/**
 * What `completeAttempts` did with one completion. `applied` sums up the stored task after the change: its
 * `status` and `nextAttemptAt` (those of `next`, or of `ifCancelRequested` when a cancel was requested), its new
 * `version`, and `cancelRequested` as stored (true exactly when `ifCancelRequested`, if given, was the one applied).
 * Every other field is the claimed task's, or the applied outcome's, with no lease and `updatedAt` = the call's `now`.
 */
export type CompletionResult =
  | {
      kind: 'applied';
      taskId: string;
      status: TaskStatus;
      nextAttemptAt: number | null;
      version: number;
      cancelRequested: boolean;
    }
  | { kind: 'fenced_out'; taskId: string };

/** What `completeAndClaim` did: one result per completion, in order, and the tasks claimed (earliest due first). */
export interface CompleteAndClaimResult {
  results: CompletionResult[];
  claimed: RetryTask[];
}

export type PutPolicyResult =
  | { kind: 'created'; policy: StoredPolicy }
  | { kind: 'replaced'; policy: StoredPolicy }
  | { kind: 'exists'; policy: StoredPolicy }
  | { kind: 'not_found' };

export interface TargetState {
  value: string;
  version: number;
  updatedAt: number;
}
