import { uuidv7 } from './uuid-v7.js';
import { canTransition, DEAD_LETTER_STATUSES, isLive, LIVE_STATUSES, systemClock, TaskEvent, TaskStatus, type Clock } from '@retryd/core';
import { DEFAULT_INLINE_BODY_LIMIT, type BlobStore } from '../blobs/blob-store.js';
import { RetrydError } from '../domain/errors.js';
import { DEFAULT_TENANT, type AttemptLog, type Page, type RetryTask, type StoredPolicy } from '../domain/task.js';
import { TargetGuard } from '../security/target-guard.js';
import { TaskSecrets } from '../secrets/task-secrets.js';
import { RetentionAdmin } from '../retention/retention-admin.js';
import { RetentionBook } from '../retention/retention-book.js';
import { DEFAULT_RETENTION } from '../retention/retention-periods.js';
import type { PageRequest, ReplayChange, Store, TaskQuery, TransitionResult } from '../store/store.js';
import { EnqueueBatcher } from './enqueue-batcher.js';
import { Enqueuer, type BatchEntryResult, type EnqueueContext, type EnqueueResult } from './enqueuer.js';
import type { HandOff } from './hand-off.js';
import { CeilingBook, NO_CEILINGS } from '../policies/policy-ceilings.js';
import { PolicyRegistry, type CreatePolicyResult } from '../policies/policy-registry.js';
import { callStore } from './store-failure.js';
import { decideReschedule, policyOfTask, type RescheduleResult, type RescheduleTime } from './reschedule.js';
import { FinishedTaskDeletion } from './finished-task-deletion.js';
import { actOnPage, type BulkEntry, type BulkPage, type LiveTaskFilter } from './bulk-actions.js';
import { decodeCursor } from '../store/cursor.js';

/**
 * The part of the store port the task service uses: the enqueue, the reads, the operator's named transitions and
 * deletions, policies and per-target state. Not claims, completions, leases or the purge: those are the engine's and
 * the purger's.
 */
export type TaskServiceStore = Pick<
  Store,
  | 'kind'
  | 'concurrentInserts'
  | 'insertTasks'
  | 'insertTasksVisible'
  | 'getTask'
  | 'listTasks'
  | 'listAttempts'
  | 'cancelTask'
  | 'requestCancel'
  | 'replayTask'
  | 'rescheduleTask'
  | 'deleteFinishedTasks'
  | 'getPolicy'
  | 'putPolicy'
  | 'listPolicies'
  | 'targetState'
  | 'admin'
>;

/** Options of {@link TaskService}. */
export interface TaskServiceOptions {
  store: TaskServiceStore;
  /** Where bodies larger than `inlineBodyLimit` go. */
  blobs: BlobStore;
  /** The SSRF check run on every new task's target. Default: a guard with an empty allow-list. */
  targetGuard?: TargetGuard;
  /**
   * Called after tasks became due or were enqueued (enqueue, replay): the engine's wake-up, with the earliest due time
   * of an enqueue's tasks (`dueAt`, epoch ms; absent: now). Default: nothing.
   */
  wake?: (dueAt?: number) => void;
  /**
   * The local engine: tasks due at once are inserted already leased to it and handed over when the insert commits,
   * a claim fewer on their way to dispatch. Default: none (every task waits for a claim).
   */
  handOff?: HandOff;
  /** Called after `PUT /retry-policies/{id}` changed a policy. Default: nothing. */
  onPolicyChanged?: (tenantId: string, policyId: string) => void;
  /** Told of each task a call of this service ended (a cancel of a PENDING task): long polls, the callback relay. */
  onTaskEnded?: (task: RetryTask) => void;
  /** Source of "now" (epoch ms; rounded down to whole ms). Default `systemClock`. */
  clock?: Pick<Clock, 'now'>;
  /**
   * How long finished tasks are kept: a task cancelled here is deleted when its tenant's (or policy's) retention of
   * cancelled tasks has passed. Default: the service's `DEFAULT_RETENTION` and the overrides in `store.targetState`
   * (the engine's own book when one runs in the process, so that both read an override once).
   */
  retention?: RetentionBook;
  /**
   * The most a tenant's policies may ask for (the service's, a tenant's own over them). Default: the service sets none,
   * a tenant's own (`retryd tenants ceilings`) still apply.
   */
  ceilings?: CeilingBook;
  /** Makes task ids and generated idempotency keys. Default {@link uuidv7} (time-ordered, so index writes stay local). */
  newId?: () => string;
  /** Bodies over this many bytes go to the blob store. Default `DEFAULT_INLINE_BODY_LIMIT` (64 KiB). */
  inlineBodyLimit?: number;
  /** Most tasks the enqueue batcher merges into one transaction. Default 5,000. */
  maxTasksPerFlush?: number;
  /**
   * Seals credential headers and sensitive bodies before the insert and checks `{{secret:NAME}}` references. Default:
   * no encryption key (a literal credential is refused with 400), references from `RETRYD_SECRET_<NAME>`. The engine
   * must be given the same keys to reveal them.
   */
  secrets?: TaskSecrets;
}

/** What a task listing may filter by: the store's query, and an idempotency key. */
export interface TaskListQuery extends TaskQuery {
  idempotencyKey?: string;
}

/** Which dead letters a listing or a bulk replay takes: one of the two dead statuses (default both), one policy, one target. */
export interface DeadLetterFilter {
  status?: typeof TaskStatus.FAILED | typeof TaskStatus.EXHAUSTED;
  policyId?: string;
  targetKey?: string;
}

/** What became of one task of a bulk replay. */
export type BulkReplayEntry = BulkEntry<ReplayResult['kind']>;

/** One page of a bulk replay: a result per dead letter listed, in listing order, and where the next page starts. */
export type BulkReplayResult = BulkPage<ReplayResult['kind']>;

/** One page of a bulk cancel: a result per live task listed, in listing order, and where the next page starts. */
export type BulkCancelResult = BulkPage<CancelResult['kind']>;

/** Most tasks one batch request may hold. */
export const MAX_BATCH_TASKS = 1_000;

/** The answer to a cancel: done at once (PENDING → CANCELLED, 200), or when the running attempt ends (202). */
export type CancelResult = { kind: 'cancelled' | 'cancel_requested'; task: RetryTask };

/** The answer to a replay: re-driven now, or already running again (a repeated replay), both 200. */
export type ReplayResult = { kind: 'replayed' | 'already_live'; task: RetryTask };

/** How often a cancel or replay re-reads a task that changed under it before giving up. */
const MAX_RACES = 20;

/**
 * The application layer of the service: every use case of the HTTP API, independent of HTTP. Each call takes
 * the tenant (`DEFAULT_TENANT` until API keys arrive). Errors are `RetrydError`s with their code; a failing
 * store is 503 STORE_UNAVAILABLE, never a crash.
 *
 * Every state change is a named transition of the store (`cancelTask`, `requestCancel`, `replayTask`,
 * `rescheduleTask`), chosen with core's lifecycle table and guarded again by the store, so a cancel racing a worker's
 * completion is refused and decided again on the fresh task rather than overwriting it.
 *
 * @example
 * ```ts
 * const service = new TaskService({ store, blobs, targetGuard, wake: () => engine.wake() });
 * await service.ensureDefaultPolicy();
 * const { kind, task } = await service.enqueue(DEFAULT_TENANT, { targetUrl: 'https://api.example.com/x', method: 'POST' });
 * ```
 */
export class TaskService implements AsyncDisposable {
  readonly #store: TaskServiceStore;
  readonly #clock: Pick<Clock, 'now'>;
  readonly #wake: (dueAt?: number) => void;
  readonly #onTaskEnded: (task: RetryTask) => void;
  readonly #retention: RetentionBook;
  readonly #batcher: EnqueueBatcher;
  readonly #enqueuer: Enqueuer;
  /** Named policies: create, replace, read. */
  readonly policies: PolicyRegistry;
  /** How long finished tasks are kept: the tenant's, a policy's (read and set). */
  readonly retention: RetentionAdmin;
  /** Finished tasks deleted by hand, a page at a time (`DELETE /retry-tasks`). */
  readonly deletion: FinishedTaskDeletion;

  constructor(options: TaskServiceOptions) {
    this.#store = options.store;
    const clock = options.clock ?? systemClock;
    // Stored times are whole epoch milliseconds; systemClock's are fractional (monotonic, epoch-anchored).
    this.#clock = { now: () => Math.floor(clock.now()) };
    this.#wake = options.wake ?? (() => undefined);
    this.#onTaskEnded = options.onTaskEnded ?? (() => undefined);
    this.#retention = options.retention ?? new RetentionBook({ state: this.#store.targetState, defaults: DEFAULT_RETENTION, now: this.#clock.now });
    this.retention = new RetentionAdmin({
      state: this.#store.targetState,
      book: this.#retention,
      policyExists: async (tenantId, policyId) => (await this.#store.getPolicy(tenantId, policyId)) !== undefined,
      now: this.#clock.now,
    });
    this.deletion = new FinishedTaskDeletion({ store: this.#store, blobs: options.blobs });
    const ceilings = options.ceilings ?? new CeilingBook({ state: this.#store.targetState, service: NO_CEILINGS, now: this.#clock.now });
    const guard = options.targetGuard ?? new TargetGuard();
    this.policies = new PolicyRegistry({
      store: this.#store,
      clock: this.#clock,
      ceilings,
      guard,
      ...(options.onPolicyChanged === undefined ? {} : { onPolicyChanged: options.onPolicyChanged }),
    });
    this.#batcher = new EnqueueBatcher({
      insert: (tasks) => this.#store.insertTasks(tasks),
      insertVisible: this.#store.insertTasksVisible?.bind(this.#store),
      maxConcurrentWrites: options.store.concurrentInserts ?? 1,
      ...(options.maxTasksPerFlush === undefined ? {} : { maxTasksPerFlush: options.maxTasksPerFlush }),
    });
    this.#enqueuer = new Enqueuer({
      store: this.#store,
      blobs: options.blobs,
      guard,
      policies: this.policies,
      batcher: this.#batcher,
      clock: this.#clock,
      newId: options.newId ?? (() => uuidv7()),
      inlineBodyLimit: options.inlineBodyLimit ?? DEFAULT_INLINE_BODY_LIMIT,
      wake: this.#wake,
      handOff: options.handOff,
      secrets: options.secrets ?? new TaskSecrets(),
      ceilings,
    });
  }

  /** Registers the `default` policy for a tenant unless it exists. Run at start-up. */
  ensureDefaultPolicy(tenantId: string = DEFAULT_TENANT): Promise<StoredPolicy> {
    return this.policies.ensureDefault(tenantId);
  }

  /** Enqueues one task (`POST /retry-tasks`); throws the `RetrydError` it fails with. */
  async enqueue(tenantId: string, input: unknown, context?: EnqueueContext): Promise<EnqueueResult> {
    const [result] = await this.#enqueuer.enqueue(tenantId, [input], () => '', context);
    if (result === undefined) throw new Error('enqueue produced no result');
    if (result.kind === 'error') throw result.error;
    return result;
  }

  /**
   * Enqueues up to {@link MAX_BATCH_TASKS} tasks in one transaction (`POST /retry-tasks/batch`). Each entry
   * gets its own result, in order: an invalid entry gets its error and the others are still enqueued.
   */
  async enqueueBatch(tenantId: string, inputs: unknown, context?: EnqueueContext): Promise<BatchEntryResult[]> {
    if (!Array.isArray(inputs) || inputs.length > MAX_BATCH_TASKS) {
      const rule = `an array of at most ${MAX_BATCH_TASKS} tasks`;
      const got = Array.isArray(inputs) ? `, got ${inputs.length}` : '';
      throw RetrydError.validation([{ field: 'tasks', rule, message: `tasks must be ${rule}${got}` }]);
    }
    return this.#enqueuer.enqueue(tenantId, inputs, (i) => `tasks[${i}].`, context);
  }

  async getTask(tenantId: string, taskId: string): Promise<RetryTask> {
    const task = await callStore(this.#store.kind, 'read the task', () => this.#store.getTask(tenantId, taskId));
    if (task === undefined) throw taskNotFound(taskId);
    return task;
  }

  /**
   * A page of tasks, newest first, optionally of some statuses, one policy, one target, one idempotency key. A key
   * is unique in its tenant, so that filter is one indexed read: a page of at most one task, and no next page.
   * A target filter may answer short pages (see {@link TaskQuery.targetKey}).
   */
  listTasks(query: TaskListQuery): Promise<Page<RetryTask>> {
    const { idempotencyKey, ...rest } = query;
    if (idempotencyKey !== undefined) return this.#taskOfKey(rest, idempotencyKey);
    return callStore(this.#store.kind, 'list tasks', () => this.#store.listTasks(rest));
  }

  /** FAILED and EXHAUSTED tasks (or one of the two), newest first, maybe of one policy or target; each carries its `deadLetterReason`. */
  listDeadLetters(tenantId: string, page: PageRequest, filter: DeadLetterFilter = {}): Promise<Page<RetryTask>> {
    return this.listTasks({ ...page, ...filter, tenantId, status: filter.status ?? DEAD_LETTER_STATUSES });
  }

  /**
   * Replays one page of the dead letters that match a filter (`POST /dead-letters/replay`): each as
   * {@link TaskService.replay} would, one result per task, and the cursor of the next page while more may match.
   * `admit` is told how many tasks the page may put back first (a tenant's pending-task limit), and may throw.
   * Replayed tasks leave the dead letters, so a caller repeating with `nextCursor` until there is none replays every
   * task that matched when it started, and each at most once.
   */
  async replayDeadLetters(
    tenantId: string,
    page: PageRequest,
    filter: DeadLetterFilter = {},
    admit: (count: number) => Promise<void> = async () => {},
  ): Promise<BulkReplayResult> {
    const listed = await this.listDeadLetters(tenantId, page, filter);
    await admit(listed.items.length);
    // Decided on the task as listed: the store's version guard refuses it if it changed since, and then the decision
    // is made again on the task as it is, so the listing's read stands in for the replay's own.
    const replayed = await actOnPage(listed, async (task) => (await this.#replay(tenantId, task.taskId, task)).kind);
    if (replayed.results.some((entry) => entry.result === 'replayed')) this.#wake();
    return replayed;
  }

  /**
   * Cancels one page of the live tasks that match a filter (`POST /retry-tasks/cancel`): each as
   * {@link TaskService.cancel} would (PENDING at once, IN_FLIGHT when its attempt ends), decided on the task as listed
   * and again on the task as it is when the store refuses (it moved meanwhile), one result each: a task that ended
   * meanwhile gets its own 409 and the others go on. Cancelled tasks leave the PENDING listing and the cursor walks on
   * past the others, so a caller repeating with `nextCursor` until there is none takes every task that matched.
   */
  async cancelMatching(tenantId: string, page: PageRequest, filter: LiveTaskFilter = {}): Promise<BulkCancelResult> {
    const listed = await this.listTasks({ ...page, ...filter, tenantId, status: filter.status ?? LIVE_STATUSES });
    return actOnPage(listed, async (task) => (await this.#cancel(tenantId, task.taskId, task)).kind);
  }

  /** A task's attempt log, oldest first; 404 when the task does not exist. */
  async listAttempts(tenantId: string, taskId: string, page: PageRequest): Promise<Page<AttemptLog>> {
    const attempts = await callStore(this.#store.kind, 'list attempts', () =>
      this.#store.listAttempts(tenantId, taskId, page),
    );
    // An empty first page is either a task not tried yet or no task at all: only then is a read worth it.
    if (attempts.items.length === 0 && page.cursor === undefined) await this.getTask(tenantId, taskId);
    return attempts;
  }

  /**
   * Cancels a task: PENDING → CANCELLED at once (200); IN_FLIGHT → `cancelRequested`, applied when its attempt ends
   * (202; it is never retried after that); terminal → 409 TASK_NOT_CANCELLABLE.
   */
  cancel(tenantId: string, taskId: string): Promise<CancelResult> {
    return this.#cancel(tenantId, taskId);
  }

  /** {@link TaskService.cancel}, from the task as last read when the caller has it. */
  async #cancel(tenantId: string, taskId: string, known?: RetryTask): Promise<CancelResult> {
    const result = await this.#move(tenantId, taskId, 'cancel the task', known, (task, now) => {
      // The store guards each move by the status it may start from; core's table says which move applies.
      if (!canTransition(task.status, TaskEvent.CANCEL)) {
        throw new RetrydError(
          'TASK_NOT_CANCELLABLE',
          `task ${taskId} is ${task.status}: only PENDING and IN_FLIGHT tasks can be cancelled`,
        );
      }
      const ref = { tenantId, taskId };
      if (task.status === TaskStatus.IN_FLIGHT) {
        if (task.cancelRequested) return { unchanged: 'cancel_requested' as const };
        return { kind: 'cancel_requested' as const, apply: () => this.#store.requestCancel(ref, now) };
      }
      return {
        kind: 'cancelled' as const,
        apply: async () => {
          await this.#retention.resolve([task]);
          return this.#store.cancelTask(ref, now, now + this.#retention.periodsFor(task).cancelledMs);
        },
      };
    });
    if (result.kind === 'cancelled') this.#onTaskEnded(result.task);
    return result;
  }

  /**
   * Re-drives a FAILED or EXHAUSTED task with the same idempotency key and a fresh run (attempt budget and
   * time budget count from now: `runStartedAt` is the replay; the attempt history stays). A task already PENDING or
   * IN_FLIGHT (replayed before) is returned as is, so replaying twice never runs it twice; SUCCEEDED and CANCELLED → 409.
   */
  async replay(tenantId: string, taskId: string): Promise<ReplayResult> {
    const result = await this.#replay(tenantId, taskId);
    if (result.kind === 'replayed') this.#wake();
    return result;
  }

  /** {@link TaskService.replay} without the wake-up, from the task as last read when the caller has it. */
  #replay(tenantId: string, taskId: string, known?: RetryTask): Promise<ReplayResult> {
    return this.#move(tenantId, taskId, 'replay the task', known, (task, now) => {
      if (canTransition(task.status, TaskEvent.REPLAY)) {
        const change: ReplayChange = {
          expectedVersion: task.version,
          runAttemptOffset: task.attemptNumber,
          // The new run's budget counts from the replay, as a new task's from its creation.
          runStartedAt: now,
          nextAttemptAt: now,
          updatedAt: now,
        };
        return { kind: 'replayed' as const, apply: () => this.#store.replayTask({ tenantId, taskId }, change) };
      }
      if (isLive(task.status)) return { unchanged: 'already_live' as const };
      throw new RetrydError(
        'TASK_NOT_REPLAYABLE',
        `task ${taskId} is ${task.status}: only ${DEAD_LETTER_STATUSES.join(' and ')} tasks can be replayed`,
      );
    });
  }

  /**
   * Makes a PENDING task due at `at` (`'now'`, or a time: one already past is now), for `POST /retry-tasks/{taskId}/run`
   * and `/reschedule`. Its attempt count and its run's budget stay; a time in the future must fall within that budget
   * (`decideReschedule`). The engines wake for it, but its target's protections still apply: a held or limited target
   * keeps it waiting. IN_FLIGHT → 409 TASK_RUNNING; finished → 409 TASK_NOT_PENDING.
   */
  async reschedule(tenantId: string, taskId: string, at: RescheduleTime): Promise<RescheduleResult> {
    const task = await this.getTask(tenantId, taskId);
    // A task's policy never changes (its id, or its inline copy): one read serves every race below.
    const policy = at === 'now' || at <= this.#clock.now() ? undefined : await policyOfTask(this.#store, task);
    const result = await this.#move(tenantId, taskId, 'reschedule the task', task, (current, now) => {
      const decision = decideReschedule(current, at, now, policy);
      if ('unchanged' in decision) return decision;
      return { kind: decision.kind, apply: () => this.#store.rescheduleTask({ tenantId, taskId }, decision.change) };
    });
    if (result.kind === 'rescheduled') this.#wake();
    return result;
  }

  /** Registers a policy (`{ policyId, ...fields }`): `created` (201), or `existing` with the same definition (200). */
  createPolicy(tenantId: string, input: unknown): Promise<CreatePolicyResult> {
    return this.policies.create(tenantId, input);
  }

  /** Replaces a registered policy (404 if absent); tasks use it from their next scheduling decision. */
  replacePolicy(tenantId: string, policyId: string, input: unknown): Promise<StoredPolicy> {
    return this.policies.replace(tenantId, policyId, input);
  }

  getPolicy(tenantId: string, policyId: string): Promise<StoredPolicy> {
    return this.policies.get(tenantId, policyId);
  }

  listPolicies(tenantId: string, page: PageRequest): Promise<Page<StoredPolicy>> {
    return this.policies.list(tenantId, page);
  }

  /** Waits for enqueues in progress to be written. Does not close the store (its owner does). */
  async close(): Promise<void> {
    await this.#batcher.drain();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** The page of a listing filtered by an idempotency key: its task when it matches the rest of the query, and is past the cursor. */
  async #taskOfKey(query: TaskQuery, idempotencyKey: string): Promise<Page<RetryTask>> {
    return callStore(this.#store.kind, 'list tasks', async () => {
      const after = query.cursor === undefined ? undefined : decodeCursor('tasks', query.cursor, 'nu');
      const task = await this.#store.admin.getTaskByIdempotencyKey(query.tenantId, idempotencyKey);
      if (task === undefined) return { items: [] };
      const statuses = query.status === undefined ? undefined : typeof query.status === 'string' ? [query.status] : query.status;
      const matches =
        (statuses === undefined || statuses.length === 0 || statuses.includes(task.status)) &&
        (query.policyId === undefined || task.policyId === query.policyId) &&
        (query.targetKey === undefined || task.targetKey === query.targetKey) &&
        (after === undefined || isBefore(task, after[0] as number, after[1] as string));
      return { items: matches ? [task] : [] };
    });
  }

  /**
   * Reads a task (unless `known` is the caller's recent read of it), lets `decide` choose a named transition (or
   * none), and has the store apply it; when the store refuses it (the task moved on meanwhile: a worker finished the
   * attempt, another caller got there first), decides again on the task the store returned.
   */
  async #move<K extends string>(
    tenantId: string,
    taskId: string,
    what: string,
    known: RetryTask | undefined,
    decide: (task: RetryTask, now: number) => { kind: K; apply: () => Promise<TransitionResult> } | { unchanged: K },
  ): Promise<{ kind: K; task: RetryTask }> {
    let task = known ?? (await this.getTask(tenantId, taskId));
    for (let race = 0; race < MAX_RACES; race++) {
      const decision = decide(task, this.#clock.now());
      if ('unchanged' in decision) return { kind: decision.unchanged, task };
      const result = await callStore(this.#store.kind, what, decision.apply);
      if (result.kind === 'applied') return { kind: decision.kind, task: result.task };
      if (result.kind === 'not_found') throw taskNotFound(taskId);
      task = result.task;
    }
    throw new RetrydError('INTERNAL', `task ${taskId} kept changing while trying to ${what}; try again`);
  }
}

/** Whether a task comes after `(createdAt, taskId)` in a listing (newest first). */
function isBefore(task: RetryTask, createdAt: number, taskId: string): boolean {
  return task.createdAt < createdAt || (task.createdAt === createdAt && task.taskId < taskId);
}

function taskNotFound(taskId: string): RetrydError {
  return new RetrydError('NOT_FOUND', `no task ${taskId}`);
}
