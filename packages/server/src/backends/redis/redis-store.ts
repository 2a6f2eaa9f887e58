import { checkNewTasks } from '../../store/new-tasks.js';
import { RedisCallbacksOwed } from './callbacks-owed.js';
import type { CallbackOutbox } from '../../store/callback-outbox.js';
import { randomBytes } from 'node:crypto';
import { systemClock } from '@retryd/core';
import type { TaskStatus } from '@retryd/core';
import type { AttemptLog, Page, RetryTask, StoredPolicy } from '../../domain/task.js';
import { completeAlongsideClaim } from '../../store/complete-and-claim.js';
import type {
  AdminReads,
  AttemptCompletion,
  ClaimOptions,
  CompleteAndClaimResult,
  CompletionResult,
  InsertResult,
  LeaseRef,
  ListedTask,
  PageRequest,
  PurgedTask,
  PutPolicyResult,
  ReplayChange,
  RescheduleChange,
  SealedTaskStore,
  Store,
  TargetLimits,
  TargetRef,
  TargetState,
  TargetStateStore,
  TargetView,
  TaskQuery,
  TaskRef,
  TransitionResult,
} from '../../store/store.js';
import { RedisAccessStore } from './access-store.js';
import { checkCompletion, checkInsertable } from './checks.js';
import { claimFairly } from './claims.js';
import { checkPrefix, createClient, parseRedisUrl, quit } from './connection.js';
import type { RedisClient, RedisConnectionOptions } from './connection.js';
import { earliestScore, expiredLeases, sumCounts } from './cross-partition.js';
import { DueChannel } from './due-channel.js';
import { describeDurability, durabilityMode, readPersistence } from './durability.js';
import type { RedisDurabilityMode, RedisPersistence } from './durability.js';
import { redisFailure, redisStoreError } from './errors.js';
import { groupByPartition, runEach, runPerItem } from './fan-out.js';
import type { ScriptCall } from './fan-out.js';
import { AccessKeys, DEFAULT_REDIS_PREFIX, globalKeys, partitionOfTenant, tenantOfPartition } from './keys.js';
import type { GlobalKeys, PartitionKeys } from './keys.js';
import { ensureLayout } from './layout-migration.js';
import { moveSubPartitions, storedSubPartitions } from './sub-partition-migration.js';
import { listAttempts, listTasks } from './list-tasks.js';
import { PartitionRegistry } from './partitions.js';
import { readOldestPendingPage } from './oldest-pending.js';
import { oldestPendingOf, type OldestPending } from '../../store/oldest-pending.js';
import { deleteFinished, purgeExpired } from './purge-expired.js';
import { getPolicy, getTargetState, listPolicies, putPolicy, putTargetState } from './policy-state.js';
import { defineScripts, runScript } from './scripts.js';
import { RedisSealedTasks } from './sealed-tasks.js';
import type { ScriptName } from './scripts.js';
import { TargetGates } from './target-gate.js';
import { DEFAULT_SUB_PARTITIONS, SubPartitions, checkSubPartitions } from './sub-partitions.js';
import { decodeCompletion, decodeTask, encodeCompletion, encodeTaskData, encodeTaskState, encodeValue } from './task-codec.js';
import type { CompletionReply, TaskReply } from './task-codec.js';
import { CANCEL_MOVES, REPLAY_MOVES, REQUEST_CANCEL_FROM, RESCHEDULE_MOVES } from './transition-guards.js';
import { translateFailures } from '../../store/failure-boundary.js';

/** Options of {@link RedisStore}. */
export interface RedisStoreOptions extends RedisConnectionOptions {
  /**
   * Server URL, `redis://` or `rediss://`, or `redis+cluster://` with seed nodes for Redis Cluster. Default
   * `redis://127.0.0.1:6379`. A `?prefix=` in it wins over `prefix`.
   */
  url?: string;
  /** Key prefix: every key and the wake-up channel start with `{prefix`. Default `retryd`. */
  prefix?: string;
  /** Connection errors (refused, reset, ...) and failing `onDue` listeners; the store recovers by itself. */
  onError?: (error: unknown) => void;
  /**
   * Partitions per tenant, 1 to 256 (`--redis-sub-partitions`). Default 1: every task of a tenant in one hash tag,
   * so on one Redis server or a tenant of modest size nothing changes. Above 1 a tenant's tasks spread over that many
   * hash tags, chosen by idempotency key (keys.ts `partitionOf`), so one tenant's load spreads over a cluster's
   * masters. Every instance on a store must use the same number: `init()` moves the tasks of a store written with
   * another number in place (see `sub-partition-migration.ts`).
   *
   * @example
   * ```ts
   * new RedisStore({ url: 'redis+cluster://10.0.0.1:7000', subPartitions: 3 }); // one tenant over three masters
   * ```
   */
  subPartitions?: number;
}

/**
 * The Redis store (ioredis): tasks, attempt logs, policies and target state in Redis, every transition one Lua
 * script (`lua/*.lua`, each with its contract), so it is atomic and one round trip.
 *
 * Keys are partitioned by tenant under the hash tag `{prefix:tenant}`, or with `subPartitions` by tenant and
 * idempotency key (see `keys.ts`, `sub-partitions.ts` and `docs/stores.md`), so every script touches one slot and
 * the layout is valid on Redis Cluster. Within a partition, the PENDING tasks of each target form a queue
 * (`due:<target>`), each target's hold, limits and in-flight count form its gate (`gate:<target>`), and the `ready` sorted set scores each target by when its queue is next claimable (its
 * earliest due task, its hold's end or its next rate-limit token, whichever is latest; absent at its in-flight
 * limit): claims range `ready` and read only the queues they serve, so a held or throttled target costs them
 * nothing. Finished tasks that have an `expiresAt` are in the sorted set `expiring` by it, which the purge ranges.
 * Work that spans tenants (claims, due times, counts, the purge) visits the partitions of the registry; each visit
 * is atomic in its partition. Times come from the engine as arguments, never from Redis `TIME`.
 *
 * The class is also its own {@link AdminReads} and {@link TargetStateStore}.
 *
 * @example
 * ```ts
 * const store = new RedisStore({ url: 'redis://127.0.0.1:6379', prefix: 'retryd' });
 * await store.init();
 * ```
 */
export class RedisStore implements Store, AdminReads, TargetStateStore {
  readonly kind = 'redis';
  /**
   * Enqueue writes in flight at once: Redis runs one script while the service encodes the next. Scripts run one at a
   * time, so concurrent inserts of one key are settled by the first to run (insert-tasks.lua).
   */
  readonly concurrentInserts = 2;
  /** The key prefix in use. */
  readonly prefix: string;
  /** Tells this store's wake-ups from other instances'. */
  readonly instanceId = randomBytes(8).toString('hex');
  /** API keys and tenant limits, outside the partitions (see `AccessKeys` in keys.ts). */
  readonly access: RedisAccessStore;
  readonly #client: RedisClient;
  readonly #subscriber: RedisClient;
  readonly #globals: GlobalKeys;
  readonly #registry: PartitionRegistry;
  readonly #due: DueChannel;
  readonly #gates: TargetGates;
  readonly #subs: SubPartitions;
  /** Sealed secrets and their re-seal under a new key (see sealed-tasks.ts). */
  readonly sealing: SealedTaskStore;
  /** The callbacks owed by ended tasks (see callbacks-owed.ts). */
  readonly callbacks: CallbackOutbox;
  /**
   * Where the engine's reads and claims over every partition report a partition left out because its master cannot
   * be reached (Redis Cluster: see `fanOut`): to `onError`, so a master that stays away shows in the logs.
   */
  readonly #skipped: (error: unknown) => void;
  #persistence: RedisPersistence = {};
  #init: Promise<void> | undefined;

  /** Creates the connections (not yet open: `init()` opens them). */
  constructor(options: RedisStoreOptions = {}) {
    const location = parseRedisUrl(options.url ?? 'redis://127.0.0.1:6379');
    this.prefix = checkPrefix(location.prefix ?? options.prefix ?? DEFAULT_REDIS_PREFIX);
    const onError = options.onError ?? (() => undefined);
    this.#skipped = onError;
    this.#client = createClient(location, options, `retryd:${this.prefix}`);
    this.#subscriber = createClient(location, options, `retryd:${this.prefix}:due`);
    // Without a listener an 'error' would be logged by ioredis; with one, reconnection goes on quietly.
    this.#client.on('error', onError);
    this.#subscriber.on('error', onError);
    defineScripts(this.#client);
    this.#globals = globalKeys(this.prefix);
    this.#registry = new PartitionRegistry(this.#client, this.prefix, this.#globals.partitions);
    this.#due = new DueChannel(this.#subscriber, this.#globals.dueChannel, this.instanceId, (p) => this.#registry.learn(p), onError);
    this.#subs = new SubPartitions(checkSubPartitions(options.subPartitions ?? DEFAULT_SUB_PARTITIONS), this.#client, this.#registry);
    this.#gates = new TargetGates(this.#client, this.#registry, this.#subs, (k) => [this.#globals.dueChannel, this.#due.message(k.partition)]);
    this.access = new RedisAccessStore(this.#client, new AccessKeys(this.prefix));
    this.callbacks = new RedisCallbacksOwed(this.#client, this.#registry, this.#subs, this.#skipped);
    this.sealing = new RedisSealedTasks(this.#client, this.#registry, (tenantId, ids) => this.#read(tenantId, 'id', ids), this.#subs);
  }

  /** The command connection (a `Cluster` on Redis Cluster), for the blob store and diagnostics. */
  get redis(): RedisClient {
    return this.#client;
  }

  get admin(): AdminReads {
    return this;
  }

  get targetState(): TargetStateStore {
    return this;
  }

  /**
   * Connects, subscribes to wake-ups, reads the server's persistence settings, and brings older data to the current
   * key layout (one instance migrates, the others wait: see `layout-migration.ts`). Keys are otherwise created as
   * they are written. Rejects (and closes) if Redis cannot be reached.
   */
  init(): Promise<void> {
    this.#init ??= (async () => {
      try {
        await this.#client.connect();
        await this.#due.start();
        this.#persistence = await readPersistence(this.#client);
        await ensureLayout(this.#client, this.#globals, (partition) => this.#keysOf(partition), {
          isDone: async () => (await storedSubPartitions(this.#client, this.#globals)) === this.#subs.count,
          move: (renew) =>
            moveSubPartitions(this.#client, this.#globals, this.#registry, this.#subs, renew, systemClock.now(), (k) => [
              this.#globals.dueChannel,
              this.#due.message(k.partition),
            ]),
        });
        await this.#registry.list();
      } catch (error) {
        this.#client.disconnect();
        this.#subscriber.disconnect();
        throw redisStoreError(error);
      }
    })();
    return this.#init;
  }

  /** One line for the start-up log: the server's persistence and what a crash would lose (`docs/stores.md`). */
  durability(): string {
    return describeDurability(this.#persistence);
  }

  /** The server's persistence, classified (see {@link RedisDurabilityMode}). */
  get durabilityMode(): RedisDurabilityMode {
    return durabilityMode(this.#persistence);
  }

  async ping(): Promise<void> {
    await this.#run(() => this.#client.ping());
  }

  /** Sends QUIT after every pending command (so their replies arrive first); drops a connection that is down. */
  async close(): Promise<void> {
    await Promise.all([quit(this.#subscriber), quit(this.#client)]);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  onDue(listener: () => void): () => void {
    return this.#due.add(listener);
  }

  // ---- tasks ---------------------------------------------------------------------------------------

  async insertTasks(tasks: readonly RetryTask[]): Promise<InsertResult[]> {
    checkNewTasks(tasks);
    return this.insertStoredTasks(tasks);
  }

  /**
   * Inserts tasks as given, in any status ({@link insertTasks} takes only new ones): for tests that need a task that
   * has already ended, without driving it there through claims and completions (River keeps `JobInsertFull` apart from
   * `JobInsertFast` the same way). Not on the `Store` port, and nothing in the service calls it.
   */
  async insertStoredTasks(tasks: readonly RetryTask[]): Promise<InsertResult[]> {
    if (tasks.length === 0) return [];
    for (const task of tasks) checkInsertable(task);
    return this.#run(async () => {
      await this.#registry.register(tasks.map((task) => this.#subs.of(task)));
      const replies = await runPerItem(this.#client, 'insertTasks', tasks, (task) => this.#subs.of(task), (partition, group) => {
        const k = this.#keysOf(partition);
        // One argument for the whole batch's states and one data JSON a task (see encodeTaskState), in one array
        // built in place: no array per task, no spread of a long list.
        const args: string[] = this.#wakeArgs(k);
        const statesAt = args.push('') - 1;
        const states = new Array<string>(group.length);
        for (let i = 0; i < group.length; i++) {
          const task = group[i] as RetryTask;
          states[i] = encodeTaskState(task);
          args.push(encodeTaskData(task));
        }
        args[statesAt] = `[${states.join(',')}]`;
        return { keys: [k.idem, k.leases, k.counts, k.ready, k.targets], args };
      });
      // A task inserted IN_FLIGHT (a hand-off) is completed by this process: its partition is remembered, as a claim's.
      for (const task of tasks) if (task.status === 'IN_FLIGHT') this.#subs.remember(task.tenantId, task.taskId, this.#subs.of(task));
      return replies.map((r, i): InsertResult =>
        r === 1 ? { kind: 'inserted', task: tasks[i] as RetryTask } : { kind: 'duplicate', task: decodeTask(r as TaskReply, (tasks[i] as RetryTask).tenantId) },
      );
    });
  }

  async getTask(tenantId: string, taskId: string): Promise<RetryTask | undefined> {
    return (await this.#read(tenantId, 'id', [taskId]))[0];
  }

  async getTaskByIdempotencyKey(tenantId: string, idempotencyKey: string): Promise<RetryTask | undefined> {
    return (await this.#read(tenantId, 'key', [idempotencyKey]))[0];
  }

  async listTasks(query: TaskQuery): Promise<Page<RetryTask>> {
    const parts = this.#subs.keysOfTenant(query.tenantId);
    return this.#run(() => listTasks(this.#client, parts, query, (ids) => this.#read(query.tenantId, 'id', ids)));
  }

  async cancelTask(ref: TaskRef, now: number, expiresAt: number): Promise<TransitionResult> {
    const k = await this.#located(ref);
    if (k === undefined) return { kind: 'not_found' };
    const args = [k.base, ref.taskId, String(now), String(expiresAt), ...CANCEL_MOVES];
    return this.#transition(ref.tenantId, 'cancelTask', [k.leases, k.counts, k.ready], args);
  }

  async requestCancel(ref: TaskRef, now: number): Promise<TransitionResult> {
    const k = await this.#located(ref);
    if (k === undefined) return { kind: 'not_found' };
    return this.#transition(ref.tenantId, 'requestCancel', [k.records], [k.base, ref.taskId, String(now), ...REQUEST_CANCEL_FROM]);
  }

  async replayTask(ref: TaskRef, change: ReplayChange): Promise<TransitionResult> {
    const k = await this.#located(ref);
    if (k === undefined) return { kind: 'not_found' };
    const [base, ...wake] = this.#wakeArgs(k);
    const args = [
      base,
      ref.taskId,
      change.expectedVersion,
      String(change.nextAttemptAt),
      change.runAttemptOffset,
      encodeValue(change.runStartedAt),
      String(change.updatedAt),
      ...wake,
      ...REPLAY_MOVES,
    ];
    return this.#transition(ref.tenantId, 'replayTask', [k.leases, k.counts, k.ready], args);
  }

  async rescheduleTask(ref: TaskRef, change: RescheduleChange): Promise<TransitionResult> {
    const k = await this.#located(ref);
    if (k === undefined) return { kind: 'not_found' };
    const [base, ...wake] = this.#wakeArgs(k);
    const args = [base, ref.taskId, change.expectedVersion, String(change.nextAttemptAt), String(change.updatedAt), ...wake, ...RESCHEDULE_MOVES];
    return this.#transition(ref.tenantId, 'rescheduleTask', [k.leases, k.counts, k.ready], args);
  }

  // ---- retention ---------------------------------------------------------------------------------

  /**
   * Ranges each partition's `expiring` index up to now (`purge-expired.lua`; with several partitions, `limit` shared
   * among those with expired tasks: see purge-expired.ts). On Redis Cluster a partition whose master cannot be
   * reached is left for the next call.
   */
  async purgeExpired(now: number, limit: number): Promise<PurgedTask[]> {
    if (limit <= 0) return [];
    return this.#run(async () => purgeExpired(this.#client, await this.#registry.all(), now, limit, this.#skipped));
  }

  /** One `delete-finished.lua` call in each partition of the tenant that holds some of `tasks` (see purge-expired.ts). */
  async deleteFinishedTasks(tenantId: string, tasks: readonly ListedTask[]): Promise<PurgedTask[]> {
    return this.#run(async () => {
      const partitions = await this.#subs.locate(tasks.map((task) => ({ tenantId, taskId: task.taskId })));
      const groups = groupByPartition(tasks, (_, i) => partitions[i] ?? '');
      groups.delete('');
      const deleted = await Promise.all(
        [...groups].map(([partition, indices]) => deleteFinished(this.#client, this.#keysOf(partition), indices.map((i) => tasks[i] as ListedTask))),
      );
      return deleted.flat();
    });
  }

  // ---- scheduling ----------------------------------------------------------------------------------

  async claimDue(now: number, options: ClaimOptions): Promise<RetryTask[]> {
    if (options.limit <= 0) return [];
    const remember = (task: RetryTask, partition: string) => this.#subs.remember(task.tenantId, task.taskId, partition);
    return this.#run(async () => claimFairly(this.#client, await this.#registry.all(), now, options, this.#skipped, remember, this.#subs.count));
  }

  /** The lowest `ready` score over partitions: exact (every script keeps `ready` so), holds and limits included. */
  async nextDueAt(): Promise<number | null> {
    return this.#run(async () => earliestScore(this.#client, await this.#registry.all(), (k) => k.ready, this.#skipped));
  }

  async findExpiredLeases(now: number, limit: number): Promise<RetryTask[]> {
    return this.#run(async () => expiredLeases(this.#client, await this.#registry.all(), now, limit, this.#skipped));
  }

  async nextLeaseExpiryAt(): Promise<number | null> {
    return this.#run(async () => earliestScore(this.#client, await this.#registry.all(), (k) => k.leases, this.#skipped));
  }

  completeAndClaim(completions: readonly AttemptCompletion[], now: number, claim: ClaimOptions): Promise<CompleteAndClaimResult> {
    return completeAlongsideClaim(this, completions, now, claim);
  }

  async completeAttempts(completions: readonly AttemptCompletion[], now: number): Promise<CompletionResult[]> {
    if (completions.length === 0) return [];
    for (const completion of completions) checkCompletion(completion);
    const partitions = this.#subs.locateWithoutReading(completions) ?? (await this.#run(() => this.#subs.locate(completions)));
    // A task in no partition is fenced out, as a script would say of a task it does not hold.
    const held = completions.filter((_, i) => partitions[i] !== undefined);
    const partitionOfHeld = held.length === completions.length ? partitions : partitions.filter((p) => p !== undefined);
    const heldReplies = await this.#run(() =>
      runPerItem(this.#client, 'completeAttempts', held, (_, i) => partitionOfHeld[i] as string, (partition, group) => {
        const k = this.#keysOf(partition);
        const [base, channel, message] = this.#wakeArgs(k);
        // The completions' JSON goes in place of the '' once their log entries follow it (see encodeCompletion).
        const args = [base, String(now), channel, message, ''];
        const completions = new Array<string>(group.length);
        for (let i = 0; i < group.length; i++) completions[i] = encodeCompletion(group[i] as AttemptCompletion, args);
        args[4] = `[${completions.join(',')}]`;
        return { keys: [k.leases, k.counts, k.ready], args };
      }),
    );
    let next = 0;
    const replies = partitions.map((p) => (p === undefined ? null : heldReplies[next++]));
    return replies.map((r, i): CompletionResult => {
      const { tenantId, taskId } = completions[i] as AttemptCompletion;
      this.#subs.forget(tenantId, taskId);
      return r === null ? { kind: 'fenced_out', taskId } : decodeCompletion(taskId, r as CompletionReply);
    });
  }

  async extendLease(tenantId: string, taskId: string, fencingToken: number, leaseExpiresAt: number): Promise<boolean> {
    const k = await this.#located({ tenantId, taskId });
    if (k === undefined) return false;
    const args = [k.base, taskId, fencingToken, String(leaseExpiresAt)];
    return (await this.#run(() => runScript(this.#client, 'extendLease', [k.leases], args))) === 1;
  }

  async releaseLeases(leases: readonly LeaseRef[], now: number): Promise<number> {
    if (leases.length === 0) return 0;
    const partitions = this.#subs.locateWithoutReading(leases) ?? (await this.#run(() => this.#subs.locate(leases)));
    for (const lease of leases) this.#subs.forget(lease.tenantId, lease.taskId);
    const groups = groupByPartition(leases, (_, i) => partitions[i] ?? '');
    groups.delete('');
    const calls = [...groups].map(([partition, indices]): ScriptCall => {
      const k = this.#keysOf(partition);
      const [base, ...wake] = this.#wakeArgs(k);
      const held = indices.flatMap((i) => [(leases[i] as LeaseRef).taskId, (leases[i] as LeaseRef).fencingToken]);
      return { keys: [k.leases, k.counts, k.ready], args: [base, String(now), ...wake, ...held] };
    });
    const replies = await this.#run(() => runEach(this.#client, 'releaseLeases', calls));
    return replies.reduce<number>((sum, n) => sum + Number(n), 0);
  }

  // ---- the target gate -----------------------------------------------------------------------------

  async holdTarget(target: TargetRef, until: number, now: number): Promise<void> {
    await this.#run(() => this.#gates.hold(target, until, now));
  }

  async releaseTarget(target: TargetRef, now: number): Promise<void> {
    await this.#run(() => this.#gates.release(target, now));
  }

  async limitTarget(target: TargetRef, limits: TargetLimits, now: number): Promise<void> {
    await this.#run(() => this.#gates.limit(target, limits, now));
  }

  // ---- attempts ------------------------------------------------------------------------------------

  async listAttempts(tenantId: string, taskId: string, page: PageRequest): Promise<Page<AttemptLog>> {
    return this.#run(async () => listAttempts(this.#client, (await this.#located({ tenantId, taskId })) ?? this.#keysOf(partitionOfTenant(tenantId)), taskId, page));
  }

  // ---- policies ------------------------------------------------------------------------------------

  async putPolicy(policy: StoredPolicy, mode: 'create' | 'replace'): Promise<PutPolicyResult> {
    const partition = partitionOfTenant(policy.tenantId);
    return this.#run(async () => {
      await this.#registry.register([partition]);
      return putPolicy(this.#client, this.#keysOf(partition), policy, mode);
    });
  }

  async getPolicy(tenantId: string, policyId: string): Promise<StoredPolicy | undefined> {
    return this.#run(() => getPolicy(this.#client, this.#keysOf(partitionOfTenant(tenantId)), tenantId, policyId));
  }

  async listPolicies(tenantId: string, page: PageRequest): Promise<Page<StoredPolicy>> {
    return this.#run(() => listPolicies(this.#client, this.#keysOf(partitionOfTenant(tenantId)), tenantId, page));
  }

  // ---- per-target state (TargetStateStore) ---------------------------------------------------------

  async getTargetState(tenantId: string, key: string): Promise<TargetState | undefined> {
    return this.#run(() => getTargetState(this.#client, this.#keysOf(partitionOfTenant(tenantId)), key));
  }

  async putTargetState(tenantId: string, key: string, expectedVersion: number, value: string, now: number): Promise<boolean> {
    const partition = partitionOfTenant(tenantId);
    return this.#run(async () => {
      await this.#registry.register([partition]);
      return putTargetState(this.#client, this.#keysOf(partition), key, expectedVersion, value, now);
    });
  }

  // ---- observability (AdminReads) ------------------------------------------------------------------

  /** Sums the `counts` hash of each partition (kept by every script): no key is scanned. */
  async countByStatus(tenantId?: string): Promise<Record<TaskStatus, number>> {
    return this.#run(async () =>
      sumCounts(this.#client, tenantId === undefined ? await this.#registry.all() : this.#subs.keysOfTenant(tenantId)),
    );
  }

  async listTargets(tenantId: string, page: PageRequest, now: number): Promise<Page<TargetView>> {
    return this.#run(() => this.#gates.list(tenantId, page, now));
  }

  async getTarget(target: TargetRef, now: number): Promise<TargetView | undefined> {
    return this.#run(() => this.#gates.get(target, now));
  }

  /** Each partition's `live` listing, oldest first, a page a script (read-oldest-pending.lua). */
  async oldestPending(limit: number): Promise<OldestPending[]> {
    return this.#run(async () =>
      oldestPendingOf<string>(
        [...new Set((await this.#registry.list()).map(tenantOfPartition))],
        (tenantId, after, size) => readOldestPendingPage(this.#client, this.#subs.keysOfTenant(tenantId), after, size),
        limit,
      ),
    );
  }

  // ---- internals -----------------------------------------------------------------------------------

  #keysOf(partition: string): PartitionKeys {
    return this.#registry.keysOf(partition);
  }

  /**
   * Every round trip of the public methods goes through here, and its failure is named once (see failure-boundary.ts):
   * wrapping each method as well would cost a closure and a `.catch` a call for nothing.
   */
  async #run<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      throw redisStoreError(error);
    }
  }

  /** Runs a named transition's script; each replies `{ 'applied' | 'refused', task }` or `{ 'not_found' }`. */
  async #transition(tenantId: string, name: ScriptName, keys: readonly string[], args: readonly (string | number)[]): Promise<TransitionResult> {
    const reply = (await this.#run(() => runScript(this.#client, name, keys, args))) as ['not_found'] | ['applied' | 'refused', TaskReply];
    if (reply[0] === 'not_found') return { kind: 'not_found' };
    return { kind: reply[0], task: decodeTask(reply[1], tenantId) };
  }

  /** Tasks of a tenant by id or idempotency key, in order (see `SubPartitions.read`). */
  async #read(tenantId: string, by: 'id' | 'key', values: readonly string[]): Promise<(RetryTask | undefined)[]> {
    return this.#run(() => this.#subs.read(tenantId, by, values));
  }

  /** The keys of the partition that holds a task, or undefined when it is in none (see `SubPartitions.locate`). */
  async #located(ref: TaskRef): Promise<PartitionKeys | undefined> {
    const partition = this.#subs.locateWithoutReading([ref])?.[0] ?? (await this.#run(() => this.#subs.locateOne(ref.tenantId, ref.taskId)));
    return partition === undefined ? undefined : this.#keysOf(partition);
  }

  /** The first arguments of a script that may publish a wake-up: base, channel, message. */
  #wakeArgs(k: PartitionKeys): [string, string, string] {
    return [k.base, this.#globals.dueChannel, this.#due.message(k.partition)];
  }
}

// Only `close` reaches the driver without `#run` (init names its own failures; onDue, durability and completeAndClaim
// send nothing themselves).
translateFailures(RedisStore, redisFailure, ['close']);
