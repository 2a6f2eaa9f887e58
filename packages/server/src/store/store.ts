import type { TaskStatus } from '@retryd/core';
import type { AttemptLog, Page, RetryTask, StoredPolicy } from '../domain/task.js';
import type { OldestPending } from './oldest-pending.js';
import type { SealedTaskStore } from './sealed-task-store.js';
import type { CallbackOutbox } from './callback-outbox.js';

export type { SealedParts, SealedTaskStore } from './sealed-task-store.js';
export type { OldestPending } from './oldest-pending.js';
export type { CallbackOutbox, OwedCallback } from './callback-outbox.js';

/**
 * The store port: durable state for tasks, attempts, policies and the gate of each target.
 *
 * The engine decides (next status, next due time, dead-letter reason, all computed in TypeScript from
 * `@retryd/core`); a store only applies atomic, fenced, **named transitions**, each guarded inside the store (the
 * SQL `WHERE`, the Lua check) by the statuses it may start from, so an illegal move is refused even by a caller that
 * skips the core state machine. No store computes a backoff, reads a clock or interprets a policy: "now" is always an
 * argument, so instances whose clocks differ slightly still agree on ownership through leases and fencing tokens.
 *
 * | transition       | from (core's lifecycle)        | to                         | guard                              |
 * | ---------------- | ------------------------------ | -------------------------- | ---------------------------------- |
 * | `insertTasks`    | —                              | PENDING, or IN_FLIGHT (hand-off) | idempotency key              |
 * | `claimDue`       | PENDING, due, target not held  | IN_FLIGHT, leased          | status, due time, target gate      |
 * | `completeAttempts` | IN_FLIGHT                    | the engine's outcome       | status and fencing token           |
 * | `extendLease`    | IN_FLIGHT                      | IN_FLIGHT                  | status and fencing token           |
 * | `releaseLeases`  | IN_FLIGHT                      | PENDING, due now           | status and fencing token           |
 * | `cancelTask`     | PENDING                        | CANCELLED                  | status                             |
 * | `requestCancel`  | IN_FLIGHT                      | IN_FLIGHT, cancel requested | status                            |
 * | `replayTask`     | FAILED, EXHAUSTED (dead letters) | PENDING, a fresh run     | status and version                 |
 * | `rescheduleTask` | PENDING                        | PENDING, due at another time | status and version               |
 * | `purgeExpired`   | finished, retention passed     | deleted (log and key too)  | `expiresAt` at or before now, no callback owed |
 * | `deleteFinishedTasks` | finished (by hand)        | deleted (log and key too)  | status and version                 |
 * | `holdTarget` / `releaseTarget` | a target         | held until a time / not held | —                                |
 * | `limitTarget`    | a target                       | rate and concurrency limits | —                                 |
 * | `sealing.resealTask` | any status                 | the same, secrets re-sealed | headers and body as expected      |
 *
 * **Targets and fair claims.** Every task carries its `targetKey` (the origin of its URL). The PENDING tasks of one
 * `(tenantId, targetKey)` form a *target queue*; a queue is *ready* when one of its tasks is due and the target is not
 * held. `claimDue` shares its slots among ready queues round robin (see {@link ClaimOptions}), so one target's backlog
 * cannot delay the others, and it finds ready queues through an index: a held target with any backlog costs a claim
 * nothing.
 *
 * Deliberately not in the port: HTTP concerns, validation, policy resolution, retry decisions, blob bodies
 * (see `BlobStore`), and any scan of all tasks — every read is by key, by index, or a bounded page. Reads that only
 * operators and metrics need are in the {@link AdminReads} sub-port, opaque per-target state in
 * {@link TargetStateStore}, and the walk over every task that re-seals stored secrets under a new key (an operator's
 * command, in bounded pages) in {@link SealedTaskStore}.
 *
 * Every implementation passes the one conformance suite (`test/store-conformance.ts`).
 */
export interface Store extends AsyncDisposable {
  /** `sqlite`, `postgres` or `redis`: shown by `/readyz` and in logs. */
  readonly kind: string;
  /**
   * How many {@link insertTasks} calls the service keeps in flight at once (absent: 1). A store whose server works on
   * several writes side by side says more; concurrent inserts of one idempotency key must still insert it once.
   */
  readonly concurrentInserts?: number;
  /** Reads for operators and metrics (by idempotency key, counts). */
  readonly admin: AdminReads;
  /** Opaque per-target state shared by every instance (breaker snapshots, rate limits). */
  readonly targetState: TargetStateStore;
  /** Who may call the API: API keys (as hashes) and per-tenant limits, shared by every instance. */
  readonly access: AccessStore;
  /** Every tenant's tasks that hold sealed secrets, and their re-seal under a new key (`retryd keys rotate-encryption`). */
  readonly sealing: SealedTaskStore;
  /** The callbacks owed by ended tasks, which the callback relay makes into tasks of their own. */
  readonly callbacks: CallbackOutbox;

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
   *
   * A task is inserted either PENDING (with `nextAttemptAt`) or, for the **hand-off**, already IN_FLIGHT: leased to
   * the local engine (`leaseOwner`, `leaseExpiresAt`, `fencingToken` as a claim would have set them). Such a task is
   * never claimed; its holder completes it with its token, and if the lease lapses the reaper finds it like any other.
   * A task in any other status is refused, the whole call with it (a TypeError naming the field and the rule:
   * `store/new-tasks.ts`): a task ends only through the transitions below. The backends keep an insert of tasks in any
   * status beside this one (`insertStoredTasks`), off the port, for tests that need a task already ended.
   *
   * Every `taskId` is a UUID in canonical lower-case text (`domain/task-id.ts`), as the service makes them: the SQL
   * stores keep its 16 bytes. A task with an id of another form is refused (an Error naming the field), the whole call
   * with it; a read or a transition by such an id finds nothing (`undefined`, `not_found`, `false`, an empty page).
   */
  insertTasks(tasks: readonly RetryTask[]): Promise<InsertResult[]>;

  /**
   * {@link insertTasks}, answered in two steps: `results` once the tasks are visible to every reader of the store
   * (claims, reads, other instances), `durable` once they would survive a crash of the store's server. A store whose
   * commit waits for a flush of its own (PostgreSQL: the WAL's) implements it, so that a hand-off's attempt need not
   * wait for that flush; the enqueue acknowledges nothing before `durable`. A crash of the server in between loses the
   * tasks, acknowledged to no one, and the attempt already started carries the task's idempotency key, as a retry of
   * the caller's would. `durable` rejects when the flush failed (the tasks may or may not be durable). Absent: every
   * insert is durable when it answers.
   */
  insertTasksVisible?(tasks: readonly RetryTask[]): Promise<VisibleInsert>;

  getTask(tenantId: string, taskId: string): Promise<RetryTask | undefined>;

  /** Newest first (`createdAt`, then `taskId`, descending). Cursors are opaque strings made by the store. */
  listTasks(query: TaskQuery): Promise<Page<RetryTask>>;

  /**
   * PENDING → CANCELLED at once: no due time any more, `updatedAt = now`, `expiresAt` as given (when its retention
   * ends), version raised. `refused` (with the task as it is) in any other status: an IN_FLIGHT task takes
   * {@link Store.requestCancel} instead.
   */
  cancelTask(ref: TaskRef, now: number, expiresAt: number): Promise<TransitionResult>;

  /**
   * IN_FLIGHT: sets `cancelRequested` (the end of the attempt then applies the cancel; see `AttemptCompletion`),
   * `updatedAt = now`, version raised. `refused` in any other status.
   */
  requestCancel(ref: TaskRef, now: number): Promise<TransitionResult>;

  /**
   * A dead letter (FAILED or EXHAUSTED) → PENDING, due at `change.nextAttemptAt`, with the fresh run the caller
   * decided: its `runAttemptOffset` and `runStartedAt`, `lastDelayMs` 0, no dead-letter reason, no cancel request.
   * The idempotency key and the attempt log stay. Applied only at `change.expectedVersion` (the values were decided
   * on that version); `refused` with the task as it is otherwise. A replayed task is live again: no `expiresAt`.
   */
  replayTask(ref: TaskRef, change: ReplayChange): Promise<TransitionResult>;

  /**
   * A PENDING task due at another time (`POST /retry-tasks/{taskId}/run` and `/reschedule`): `nextAttemptAt` and
   * `updatedAt` as given, version raised; its attempt count, run, budget and lease fields stay as they are. Applied only
   * at `change.expectedVersion` (the time was decided on that version); `refused` with the task as it is otherwise, and
   * in any other status (an IN_FLIGHT task is running; a finished one will not run again). The task's place in its
   * target queue moves with it in the same write (earlier or later), and a store with {@link Store.onDue} tells the
   * other instances, so an engine whose timer aims past the new time wakes for it. The target's gate still applies: a
   * held or limited target keeps the task waiting however early it is due.
   */
  rescheduleTask(ref: TaskRef, change: RescheduleChange): Promise<TransitionResult>;

  // ---- retention ----------------------------------------------------------------------------------

  /**
   * Deletes at most `limit` finished tasks whose `expiresAt` is at or before `now` (earliest first; in Redis Cluster,
   * earliest first of each partition it reaches), each with its
   * attempt log and its idempotency key (the key is free for a new task from then on), in one transaction or script,
   * and returns what it deleted. Live tasks have no `expiresAt` and are never deleted. Found through an index of
   * `expiresAt`, never by walking tasks: a batch costs about what its deletes cost, whatever the store holds. Bodies
   * kept apart (`bodyRef`) are the caller's to delete (`Purger`).
   */
  purgeExpired(now: number, limit: number): Promise<PurgedTask[]>;

  /**
   * Deletes finished tasks of one tenant by hand (`DELETE /retry-tasks`), each only if it is still finished (SUCCEEDED,
   * FAILED, EXHAUSTED or CANCELLED) and still at the `version` the caller listed it at: a task replayed since (live
   * again, or finished again at a later version) stays, as do another tenant's tasks and ids of no task. Each goes as
   * {@link purgeExpired} deletes, with its attempt log and its idempotency key (free for a new task from then on), in
   * one transaction or script, whatever its `expiresAt` (none: kept for good). Returns what it deleted, in no particular
   * order; an id given twice is deleted once. At most {@link MAX_DELETE_BATCH} tasks a call (more is an Error). Bodies
   * kept apart (`bodyRef`) are the caller's to delete.
   */
  deleteFinishedTasks(tenantId: string, tasks: readonly ListedTask[]): Promise<PurgedTask[]>;

  // ---- scheduling ---------------------------------------------------------------------------------

  /**
   * Claims up to `limit` PENDING tasks with `nextAttemptAt <= now` from ready target queues, shared among them round
   * robin (see {@link ClaimOptions}) and returned in that dealt order, each queue's earliest due first. Each claimed
   * task becomes IN_FLIGHT with `leaseOwner = workerId`, `leaseExpiresAt = now + leaseMs`, a raised `fencingToken`
   * and `version`. Tasks of a target held past `now` are not claimed. Two concurrent claims never return the same
   * task. Ready queues are found through an index, never by walking tasks.
   */
  claimDue(now: number, options: ClaimOptions): Promise<RetryTask[]>;

  /**
   * When a claim may next find work: the earliest time at which some target queue is ready (its earliest due task,
   * or its hold's end if that is later), or null when no task is PENDING. It may be earlier than the truth (a claim
   * then finds nothing and the store corrects it), never later: the scheduler's single timer aims at it.
   */
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

  // ---- the target gate ------------------------------------------------------------------------------

  /**
   * Holds a target: until `until`, claims skip its tasks (they stay PENDING, burn no attempt, and cost claims nothing)
   * and `nextDueAt` does not count them before `until`. Holds extend: the target is held until the latest `until` it
   * was given (a breaker opening for 5 s does not cut short a `Retry-After` of a minute). `now` is the time of the
   * change, for the record.
   */
  holdTarget(target: TargetRef, until: number, now: number): Promise<void>;

  /** Ends a target's hold at once: its due tasks are claimable again. A target not held is left as it is. */
  releaseTarget(target: TargetRef, now: number): Promise<void>;

  /**
   * Sets what claims may take from a target, across every instance sharing the store (`null`: no such limit):
   *
   * - `ratePerSecond` and `burst`: a token bucket of `burst` tokens (at least 1) refilled at `ratePerSecond`; each
   *   claimed task takes one. A claim offers the target at most the whole tokens it has; a target out of tokens is not
   *   ready until its next token (so `nextDueAt` and the ready index see it as held until then).
   * - `maxInFlight`: at most this many of the target's tasks IN_FLIGHT at once (hand-offs included). A target at its
   *   limit is not ready until one of its attempts ends.
   *
   * Setting limits keeps the bucket's tokens (capped at the new burst; a target that had no rate limit starts with a
   * full bucket). Limits take effect at the next claim.
   */
  limitTarget(target: TargetRef, limits: TargetLimits, now: number): Promise<void>;

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

  // ---- wake-ups ---------------------------------------------------------------------------------------

  /**
   * Optional: calls `listener` soon after another instance makes a task due now (PostgreSQL LISTEN/NOTIFY,
   * Redis pub/sub), so an idle engine wakes at once instead of at its next timer. Stores without it (SQLite, one
   * process) rely on the in-process wake-up from the API. `dueAt`, when given, is when the work is due (epoch ms): an
   * insert of tasks due later, which needs no claim before then. Returns an unsubscribe function.
   */
  onDue?(listener: (dueAt?: number) => void): () => void;
}

/** Reads for operators and metrics, apart from the engine's and the API's narrow port. */
export interface AdminReads {
  /** The task holding an idempotency key in a tenant, if any. */
  getTaskByIdempotencyKey(tenantId: string, idempotencyKey: string): Promise<RetryTask | undefined>;
  /** Task counts by status (readiness, metrics). May be approximate on very large stores but never scans rows in a hot path. */
  countByStatus(tenantId?: string): Promise<Record<TaskStatus, number>>;
  /**
   * Every target a tenant's tasks ever named (and every target held or limited), in `targetKey` order (byte order),
   * one page at a time, with its gate and counts as of `now`.
   */
  listTargets(tenantId: string, page: PageRequest, now: number): Promise<Page<TargetView>>;
  /** One target's gate and counts as of `now`; undefined for a target never named, held or limited. */
  getTarget(target: TargetRef, now: number): Promise<TargetView | undefined>;
  /**
   * The targets whose oldest PENDING task is oldest, every tenant's, oldest first: at most `limit` of them, each
   * `(tenantId, targetKey)` once with the `createdAt` of its oldest PENDING task (`retry_oldest_pending_age_seconds`).
   * A task waiting on a retry scheduled far ahead is PENDING and counts; IN_FLIGHT and finished tasks do not. Each
   * tenant's live tasks are walked oldest first along an index the store already keeps, and the walk stops at `limit`
   * targets, so the usual read costs about `limit` entries per tenant however long the backlog; it never reads more
   * than `OLDEST_PENDING_WALK` entries of a tenant, and a tenant whose oldest tasks are one target's backlog longer
   * than that answers the targets met within it (each with its true oldest task: a target left out is younger than
   * all of them).
   *
   * @throws RangeError when `limit` is not an integer of at least 1
   */
  oldestPending(limit: number): Promise<OldestPending[]>;
}

/** What claims may take from a target (see `Store.limitTarget`); `null` is no limit. */
export interface TargetLimits {
  /** Most claims per second, over every instance. */
  ratePerSecond: number | null;
  /** Claims allowed at once after a quiet spell: the token bucket's size (>= 1; null with a rate means 1). Ignored without a rate. */
  burst: number | null;
  /** Most of the target's tasks IN_FLIGHT at once, over every instance. */
  maxInFlight: number | null;
}

/** A target as the store sees it, for operators (`AdminReads`). */
export interface TargetView extends TargetRef, TargetLimits {
  /** Until when claims skip it (epoch ms), or null when it is not held as of the read's `now`. */
  heldUntil: number | null;
  /** The earliest due time of its PENDING tasks as the store knows it (never later than the truth), or null. */
  nextDueAt: number | null;
  /** Its tasks IN_FLIGHT now. */
  inFlight: number;
  /**
   * Until when its rate limit keeps claims off it (waiting for its next token, epoch ms), or null when it does not as
   * of the read's `now`. A target at its concurrency limit shows `inFlight >= maxInFlight` instead (a store may also
   * give a time there, bounded by the target's earliest lease expiry).
   */
  throttledUntil: number | null;
  /**
   * Its PENDING tasks due by `now`, counted up to {@link DUE_COUNT_CAP} (a count at the cap means at least that
   * many): while it is held or throttled, the tasks waiting on it.
   */
  dueTasks: number;
}

/** Where `TargetView.dueTasks` stops counting: reading a target's state never walks more of its backlog. */
export const DUE_COUNT_CAP = 1_000;

/**
 * Per-target state shared by every instance (breaker snapshots, rate limits, retry budgets), as opaque JSON under a
 * key such as `breaker:https://api.example.com`. Versioned so concurrent writers cannot lose updates.
 */
export interface TargetStateStore {
  getTargetState(tenantId: string, key: string): Promise<TargetState | undefined>;
  /** Writes if the stored version is `expectedVersion` (0 = absent); false on a lost race. */
  putTargetState(tenantId: string, key: string, expectedVersion: number, value: string, now: number): Promise<boolean>;
}

/**
 * Who may call the API, shared by every instance: API keys, stored only as hashes of their secret part, and the
 * limits of each tenant. Reads by key id are the authentication's hot path (callers cache them briefly); nothing here
 * runs on the engine's path.
 */
export interface AccessStore {
  /** Inserts a new key; false (nothing written) when its `keyId` is taken. */
  createApiKey(key: ApiKeyRecord): Promise<boolean>;
  /** One key by id, revoked or not. */
  getApiKey(keyId: string): Promise<ApiKeyRecord | undefined>;
  /**
   * Keys in `keyId` order (byte order), revoked ones included, one page at a time: one tenant's, or every tenant's
   * when `tenantId` is absent (operators).
   */
  listApiKeys(query: ApiKeyQuery): Promise<Page<ApiKeyRecord>>;
  /**
   * Revokes a key at `now` (`revokedAt`), for good: the key as it is after, a key already revoked unchanged (its first
   * `revokedAt` stays), undefined for no such key. With `tenantId`, a key of another tenant counts as no such key.
   */
  revokeApiKey(keyId: string, now: number, tenantId?: string): Promise<ApiKeyRecord | undefined>;
  /** Whether any key is not revoked: with none, the service is open on loopback only. */
  hasActiveApiKey(): Promise<boolean>;
  /** A tenant's own limits, or undefined when it has none (the service-wide defaults apply). */
  getTenantLimits(tenantId: string): Promise<TenantLimits | undefined>;
  /** Sets (replaces) a tenant's own limits; `null` deletes them. */
  putTenantLimits(tenantId: string, limits: TenantLimits | null, now: number): Promise<void>;
}

/**
 * What an API key may do: `read` answers reads, `write` also changes tasks and policies, `admin` also targets and keys.
 * `metrics` stands apart: it reads `GET /metrics` and nothing else (a scraper's credential, of the default tenant only).
 */
export type ApiKeyScope = 'admin' | 'write' | 'read' | 'metrics';

/** An API key as stored: never the key itself, only the SHA-256 of its secret part. */
export interface ApiKeyRecord {
  /** The public part of the key (`rtd_<keyId>_<secret>`), its id in lists and logs. */
  keyId: string;
  tenantId: string;
  scope: ApiKeyScope;
  /** What the key is for, as its creator wrote it (for people; not unique). */
  name: string;
  /** Lower-case hex SHA-256 of the key's secret part (of a `metrics` key, of the secret with a prefix: `storedHashOf`). */
  secretHash: string;
  createdAt: number;
  /** When it was revoked (epoch ms), or null while it is active. */
  revokedAt: number | null;
}

export interface ApiKeyQuery extends PageRequest {
  /** One tenant's keys; absent: every tenant's. */
  tenantId?: string | undefined;
}

/** A tenant's limits on the API (`null`: no limit of its own; the service-wide default, if any, applies). */
export interface TenantLimits {
  /** Most API requests per second, per instance, with a burst of as many. */
  requestsPerSecond: number | null;
  /** Most of its tasks PENDING or IN_FLIGHT at once: enqueues beyond answer 429. */
  maxPendingTasks: number | null;
}

/** One task. */
export interface TaskRef {
  tenantId: string;
  taskId: string;
}

/** One target queue: a tenant's tasks for one origin. */
export interface TargetRef {
  tenantId: string;
  targetKey: string;
}

/** What a named transition did: `applied` with the task after it, `refused` with the task as it is, or no such task. */
export type TransitionResult =
  | { kind: 'applied'; task: RetryTask }
  | { kind: 'refused'; task: RetryTask }
  | { kind: 'not_found' };

/** The fresh run a replay starts, decided by the caller on the task it read at `expectedVersion`. */
export interface ReplayChange {
  expectedVersion: number;
  /** The attempts made before this run (the task's `attemptNumber` when it was read). */
  runAttemptOffset: number;
  /**
   * Where the run's time budget counts from: the replay's time, so the new run's budget counts its waits too (null,
   * kept for tasks stored before budgets counted from creation: from its first attempt).
   */
  runStartedAt: number | null;
  nextAttemptAt: number;
  updatedAt: number;
}

/** A PENDING task's new due time, decided by the caller on the task it read at `expectedVersion`. */
export interface RescheduleChange {
  expectedVersion: number;
  /** When it is due (epoch ms): the time of the call for "run now". */
  nextAttemptAt: number;
  updatedAt: number;
}

export type InsertResult = { kind: 'inserted'; task: RetryTask } | { kind: 'duplicate'; task: RetryTask };

/** What {@link Store.insertTasksVisible} answers: the results once visible, and when they are durable. */
export interface VisibleInsert {
  results: InsertResult[];
  /** Resolves once every inserted task is durable; rejects when that could not be made sure of. */
  durable: Promise<void>;
}

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
  /** Only the tasks of this named policy. Redis lists them as it lists a target's (below): pages may be short. */
  policyId?: string;
  /**
   * Only the tasks of this target (`RetryTask.targetKey`). No store keeps an index for it (that would cost every
   * enqueue): SQL stores filter their status walks, and Redis examines at most {@link TARGET_SCAN_BUDGET} listed
   * tasks per page, so a page may come back shorter than `limit`, even empty, with a `nextCursor` to go on.
   */
  targetKey?: string;
}

/** How many listed tasks a store may examine for one page filtered by target (Redis: or policy) before it answers a short page. */
export const TARGET_SCAN_BUDGET = 2_000;

/**
 * A claim. How its `limit` slots are shared: the ready target queues are taken in *ring order* — `(tenantId,
 * targetKey)` in byte order, starting after `after` and wrapping round — and the first `min(E, limit)` of them
 * (E ready queues) are each offered `ceil(limit / min(E, limit))` slots, filled with that queue's earliest due tasks.
 * Of the tasks so found, the claim keeps `limit` in round-robin order (each queue's first, then each one's second,
 * …; queues in ring order). A queue with fewer due tasks than its share leaves its slots unused by this claim.
 *
 * So with E ≤ limit every ready queue gets an equal share of the claim; with more ready queues than slots, each
 * claim serves `limit` of them and the caller moves `after` to the last queue served, so every ready queue is served
 * within `ceil(E / limit)` claims. A tenant's backlog on one target counts as one queue however large it is.
 *
 * A target's limits (see {@link Store.limitTarget}) cap what it is offered: no more than its bucket's whole tokens
 * and its free in-flight slots. A target with no whole token or no free slot left is not ready, so it takes no share
 * at all.
 *
 * Readiness is exact as far as claims go: a queue whose due tasks a claim took all of (a store can tell by looking
 * one task past the queue's share) is not ready for the next claim until another of its tasks falls due. Only a
 * queue emptied otherwise (its last due task cancelled) may be counted once more by the next claim, which finds it
 * empty and corrects it; with several instances claiming at once, a queue may likewise be counted once too often.
 *
 * With `rooms` (the caller's own dispatch slots shared between tenants and targets, see {@link ClaimRooms}), a queue
 * whose room or whose tenant's room is 0 is not ready for this claim (it takes no share and no place among the
 * `min(E, limit)`); every other queue is offered at most its room, and of the tasks dealt, those of a tenant beyond
 * its tenant's room are left out (they stay PENDING, untouched).
 */
export interface ClaimOptions {
  limit: number;
  leaseMs: number;
  workerId: string;
  /** Where the ring starts: after this queue (the last one the caller's previous claim served). Default: the start. */
  after?: TargetRef | undefined;
  /** How many tasks this claim may take of each tenant and of each target queue. Absent: no bound but `limit`. */
  rooms?: ClaimRooms | undefined;
}

/**
 * How many tasks one claim may take of each tenant and of each target queue: what is left of the claimer's share of
 * its own dispatch slots for them (`SlotShares`), so that one tenant or target cannot fill every slot of an engine.
 * Rooms are the claimer's, not the store's: they bound this claim only, and are not shared between instances (a
 * target's own `maxInFlight`, see {@link Store.limitTarget}, is).
 */
export interface ClaimRooms {
  /** Room of every tenant not in `tenants` (>= 1). */
  tenant: number;
  /** Room of every target queue not in `targets` (>= 1). */
  target: number;
  /** Tenants with another room (>= 0), by tenant id. */
  tenants: ReadonlyMap<string, number>;
  /** Target queues with another room (>= 0), by tenant id and then target key. */
  targets: ReadonlyMap<string, ReadonlyMap<string, number>>;
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
  /** When a final outcome is deleted (its retention's end, epoch ms); null for a live one (a retry). */
  expiresAt: number | null;
}

/** A task as a caller listed it, for a transition guarded by its version ({@link Store.deleteFinishedTasks}). */
export interface ListedTask {
  taskId: string;
  /** The task's `version` when it was listed. */
  version: number;
}

/** Most tasks one {@link Store.deleteFinishedTasks} call takes: a page of a listing. */
export const MAX_DELETE_BATCH = 1_000;

/** A task {@link Store.purgeExpired} or {@link Store.deleteFinishedTasks} deleted. */
export interface PurgedTask {
  tenantId: string;
  taskId: string;
  status: TaskStatus;
  /** Its body kept apart, for the caller to delete, or null. */
  bodyRef: string | null;
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

/** What `completeAndClaim` did: one result per completion, in order, and the tasks claimed (in the order `claimDue` gives). */
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
