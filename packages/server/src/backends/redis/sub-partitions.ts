import type { RedisClient } from './connection.js';
import type { RetryTask } from '../../domain/task.js';
import { fanOut, runEach, runPerItem } from './fan-out.js';
import type { ScriptCall } from './fan-out.js';
import { partitionOf, partitionOfKey, partitionOfTenant, partitionsOfTenant } from './keys.js';
import type { PartitionKeys } from './keys.js';
import type { PartitionRegistry } from './partitions.js';
import { decodeTask } from './task-codec.js';
import type { TaskReply } from './task-codec.js';

/** The sub-partitions per tenant when none is configured: one, the layout of every store before them. */
export const DEFAULT_SUB_PARTITIONS = 1;

/** Most sub-partitions per tenant: a claim reads every partition's `ready` set, so each costs every claim a read. */
export const MAX_SUB_PARTITIONS = 256;

/** Most task ids whose partition a store remembers (those it claimed or reaped); older ones are looked up again. */
const REMEMBERED = 100_000;

/** What locating a task needs: its tenant and id. */
export interface TaskLocation {
  readonly tenantId: string;
  readonly taskId: string;
}

/**
 * Checks a number of sub-partitions per tenant (`RedisStoreOptions.subPartitions`, `--redis-sub-partitions`).
 *
 * @throws RangeError naming the field and the rule
 */
export function checkSubPartitions(value: number): number {
  if (!Number.isSafeInteger(value) || value < 1 || value > MAX_SUB_PARTITIONS) {
    throw new RangeError(`Expected \`subPartitions\` to be a whole number from 1 to ${MAX_SUB_PARTITIONS}; got ${value}.`);
  }
  return value;
}

/**
 * Where a tenant's tasks are when it has several sub-partitions (keys.ts `partitionOf`). A task is placed by its
 * idempotency key, which operations by task id (a completion, a lease, a cancel) do not carry: the partition of each
 * task this store claimed or reaped is remembered until its attempt ends, and any other id is looked up in every
 * sub-partition of its tenant (one `HEXISTS` each, in one round trip). With one sub-partition nothing is looked up.
 */
export class SubPartitions {
  /** Task (`tenant\n id`) → the partition it was claimed from, oldest first. */
  readonly #remembered = new Map<string, string>();

  constructor(
    /** Sub-partitions per tenant. */
    readonly count: number,
    private readonly client: RedisClient,
    private readonly registry: PartitionRegistry,
  ) {}

  /** The partition of a task (see keys.ts `partitionOf`). */
  of(task: { readonly tenantId: string; readonly idempotencyKey?: string; readonly taskId?: string }): string {
    return partitionOf(task, this.count);
  }

  /** The partition an idempotency key of a tenant maps to. */
  ofKey(tenantId: string, idempotencyKey: string): string {
    return partitionOfKey(tenantId, idempotencyKey, this.count);
  }

  /** The keys of every partition of a tenant, its home first. */
  keysOfTenant(tenantId: string): PartitionKeys[] {
    return partitionsOfTenant(tenantId, this.count).map((partition) => this.registry.keysOf(partition));
  }

  /** Remembers where a task is while this store holds its lease. */
  remember(tenantId: string, taskId: string, partition: string): void {
    if (this.count === 1) return;
    const id = `${tenantId}\n${taskId}`;
    this.#remembered.delete(id);
    this.#remembered.set(id, partition);
    if (this.#remembered.size > REMEMBERED) this.#remembered.delete(this.#remembered.keys().next().value as string);
  }

  /** Forgets a task whose attempt ended (it may be found again by {@link locate}). */
  forget(tenantId: string, taskId: string): void {
    if (this.count > 1) this.#remembered.delete(`${tenantId}\n${taskId}`);
  }

  /**
   * The partition of each task, or undefined for a task in none of its tenant's sub-partitions (with one
   * sub-partition: the tenant's, unread).
   */
  async locate(refs: readonly TaskLocation[]): Promise<(string | undefined)[]> {
    if (this.count === 1) return refs.map((ref) => ref.tenantId);
    const found = this.#recalled(refs);
    const probes: { at: number; keys: PartitionKeys }[] = [];
    found.forEach((partition, at) => {
      if (partition === undefined) for (const keys of this.keysOfTenant((refs[at] as { tenantId: string }).tenantId)) probes.push({ at, keys });
    });
    if (probes.length === 0) return found;
    const replies = await fanOut(this.client, probes, (pipeline, { at, keys }) => pipeline.hexists(keys.records, (refs[at] as { taskId: string }).taskId));
    probes.forEach(({ at, keys }, i) => {
      if (replies[i] === 1) found[at] = keys.partition;
    });
    return found;
  }

  /**
   * What {@link locate} would answer, when it needs no read: with one sub-partition (each task's tenant), or when this
   * store remembers every task (it holds their leases, as for a batch of completions or releases). Undefined when some
   * task must be looked up. Synchronous, so the hot paths await nothing at N = 1:
   *
   * @example
   * ```ts
   * const partitions = subs.locateWithoutReading(completions) ?? (await subs.locate(completions));
   * ```
   */
  locateWithoutReading(refs: readonly TaskLocation[]): (string | undefined)[] | undefined {
    if (this.count === 1) return refs.map((ref) => ref.tenantId);
    const found = this.#recalled(refs);
    return found.includes(undefined) ? undefined : found;
  }

  /** The partition of one task (see {@link locate}). */
  async locateOne(tenantId: string, taskId: string): Promise<string | undefined> {
    return (await this.locate([{ tenantId, taskId }]))[0];
  }

  /** The remembered partition of each task, undefined where there is none. */
  #recalled(refs: readonly TaskLocation[]): (string | undefined)[] {
    return refs.map((ref) => this.#remembered.get(`${ref.tenantId}\n${ref.taskId}`));
  }

  /**
   * Tasks of a tenant by id or idempotency key, in order (undefined where there is none): a key is read in its own
   * partition; with sub-partitions, ids are read in every partition of the tenant (one `get-tasks` each, in one round
   * trip), since an id does not say where its task is.
   */
  async read(tenantId: string, by: 'id' | 'key', values: readonly string[]): Promise<(RetryTask | undefined)[]> {
    if (values.length === 0) return [];
    const call = (k: PartitionKeys, group: readonly string[]): ScriptCall => ({ keys: [k.idem], args: [k.base, by, ...group] });
    let replies: (TaskReply | null)[];
    if (this.count === 1 || by === 'key') {
      const partitionOfValue = (value: string) => (by === 'key' ? this.ofKey(tenantId, value) : partitionOfTenant(tenantId));
      const callOf = (partition: string, group: string[]) => call(this.registry.keysOf(partition), group);
      replies = (await runPerItem(this.client, 'getTasks', values, partitionOfValue, callOf)) as (TaskReply | null)[];
    } else {
      const each = (await runEach(this.client, 'getTasks', this.keysOfTenant(tenantId).map((k) => call(k, values)))) as (TaskReply | null)[][];
      replies = values.map((_, i) => each.map((reply) => reply[i]).find((r) => r !== null && r !== undefined) ?? null);
    }
    return replies.map((r) => (r === null ? undefined : decodeTask(r, tenantId)));
  }
}
