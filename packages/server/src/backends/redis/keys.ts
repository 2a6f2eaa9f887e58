import { TERMINAL_STATUSES } from '@retryd/core';
import type { TaskStatus } from '@retryd/core';
import { createRequire } from 'node:module';

/** Redis Cluster's slot of a key (CRC16 of its hash tag), from the library ioredis routes commands with. */
const calculateSlot = createRequire(import.meta.url)('cluster-key-slot') as (key: string) => number;

/** The key prefix used when `--store` names none (`redis://host:6379`). */
export const DEFAULT_REDIS_PREFIX = 'retryd';

/** A prefix is a plain name, so it can never open or close a hash tag or forge another prefix's keys. */
export const PREFIX_RULE = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Which partition a task lives in. Every key of one partition shares one hash tag, `{prefix:partition}`, so a
 * script that touches several of them runs in one slot on Redis Cluster.
 *
 * A partition is a tenant, or with `subPartitions` above 1 one of the tenant's sub-partitions, chosen by hashing
 * the task's idempotency key (its id when it has none): the same key always lands in the same partition, so its
 * `idem` entry, the task's record and its attempt log share one slot, and the idempotency rule holds per partition
 * (see `docs/stores.md`). Sub-partition 0 is the tenant's home, whose keys are the tenant's keys of one partition:
 * a store with 1 sub-partition is today's layout, and policies, target state and the target gates' settings live
 * there. This is the one place that decides; the scripts take every key from the caller.
 */
export function partitionOf(task: { readonly tenantId: string; readonly idempotencyKey?: string; readonly taskId?: string }, subPartitions = 1): string {
  if (subPartitions <= 1) return task.tenantId;
  return subPartitionOf(task.tenantId, subIndexOf(task.idempotencyKey ?? task.taskId ?? '', subPartitions), subPartitions);
}

/** The partition of a tenant's idempotency key (see {@link partitionOf}). */
export function partitionOfKey(tenantId: string, idempotencyKey: string, subPartitions: number): string {
  return partitionOf({ tenantId, idempotencyKey }, subPartitions);
}

/** The home partition of a tenant: its policies, target state, gate settings and blobs (see {@link partitionOf}). */
export function partitionOfTenant(tenantId: string): string {
  return tenantId;
}

/**
 * Separates a tenant id from a sub-partition number in a partition id (in the registry, never in a key): tenant ids
 * are visible characters (the API's rule), so no tenant id holds it.
 */
const SUB_SEPARATOR = '\u0000';

/**
 * The id of a tenant's sub-partition `index` of `count` (0: its home, whose id is the tenant id). The count is part
 * of the id: the same index under another count is another partition, with other keys (see {@link PartitionKeys}).
 */
export function subPartitionOf(tenantId: string, index: number, count: number): string {
  return index === 0 ? tenantId : `${tenantId}${SUB_SEPARATOR}${index}/${count}`;
}

/** Every partition of a tenant with `subPartitions` sub-partitions, its home first. */
export function partitionsOfTenant(tenantId: string, subPartitions: number): string[] {
  return Array.from({ length: Math.max(1, subPartitions) }, (_, i) => subPartitionOf(tenantId, i, subPartitions));
}

/** The sub-partition number of a partition id and the count it is one of (0 of 1 for a tenant's home). */
export function subIndexOfPartition(partition: string): { index: number; count: number } {
  const at = partition.indexOf(SUB_SEPARATOR);
  if (at < 0) return { index: 0, count: 1 };
  const [index, count] = partition.slice(at + 1).split('/');
  return { index: Number(index), count: Number(count) };
}

/** Slots of Redis Cluster. */
const SLOTS = 16_384;

/**
 * The hash tag of sub-partition `index` of `count` of the partition tagged `home`: `home:<index>.<count>.<salt>`,
 * with the first salt that puts it within a few slots of `index / count` of the way round the slot space from the
 * home's slot. A tenant's sub-partitions so sit evenly spaced over the slots, and a cluster whose masters serve
 * even ranges of slots (as `redis-cli --cluster create` makes them) gets an even share of them: with a count that
 * is a multiple of the masters, the same number on each (a plain hash would put 2 of 3 on one master a third of the
 * time). Costs about `2 × 32` CRC16s per sub-partition, once per process.
 */
function spreadTag(home: string, index: number, count: number): string {
  const spacing = SLOTS / count;
  const window = Math.max(1, Math.min(32, Math.floor(spacing / 2)));
  const start = (calculateSlot(home) + Math.round(index * spacing)) % SLOTS;
  for (let salt = 0; ; salt++) {
    const tag = `${home}:${index}.${count}.${salt}`;
    if ((calculateSlot(tag) - start + SLOTS) % SLOTS < window) return tag;
  }
}

/**
 * The sub-partition of a key among `n`: FNV-1a over its UTF-16 units, stable across processes and versions (a
 * changed hash would move every task: only the layout migration may do that).
 */
export function subIndexOf(key: string, n: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % n;
}

/**
 * The tenant whose tasks a partition holds: claims order target queues by `(tenantId, targetKey)`, and a
 * partition's script orders its own queues, so a partition must hold one tenant's tasks (see {@link partitionOf}).
 */
export function tenantOfPartition(partition: string): string {
  const at = partition.indexOf(SUB_SEPARATOR);
  return at < 0 ? partition : partition.slice(0, at);
}

// `%`, `{`, `}` and `:` are escaped so that a tenant id can neither end the hash tag early nor make two
// partitions' keys collide (percent-encoding is injective).
function escapePart(part: string): string {
  return part.replace(/[%{}:]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** Keys that are not in any partition: the partition registry, the wake-up channel and the layout version. */
export interface GlobalKeys {
  /** Set of every partition id that ever held data: claims, due times and counts visit each. */
  partitions: string;
  /** Pub/sub channel (not a key) on which scripts announce that a task became due. */
  dueChannel: string;
  /** String: the version of the key layout the data is in (see `layout-migration.ts`); absent before version 2. */
  layout: string;
  /** String: held (SET NX PX) by the one instance that migrates the layout. */
  migrationLock: string;
  /** String: the sub-partitions per tenant the tasks are in (see `sub-partition-migration.ts`); absent for 1. */
  subPartitions: string;
}

export function globalKeys(prefix: string): GlobalKeys {
  return {
    partitions: `{${prefix}}:partitions`,
    dueChannel: `{${prefix}}:due`,
    layout: `{${prefix}}:layout`,
    migrationLock: `{${prefix}}:layout-lock`,
    subPartitions: `{${prefix}}:sub-partitions`,
  };
}

/**
 * The keys of the access sub-port (API keys, tenant limits). Not partitioned: a key is looked up by its id alone,
 * before its tenant is known, and `hasActiveApiKey` asks about every tenant at once. So they share the global hash tag
 * `{prefix}` (one slot on Redis Cluster, as the scripts that touch several of them need) under `access:`; each id
 * comes last, after a segment naming its kind, so no id can make two keys collide.
 */
export class AccessKeys {
  /** `{prefix}:access:`, the start of every key below. */
  readonly base: string;

  constructor(prefix: string) {
    this.base = `{${prefix}}:access:`;
  }

  /** Hash: one API key, its record's fields but `keyId` (see `API_KEY_FIELDS` in `access-store.ts`). */
  apiKey(keyId: string): string {
    return `${this.base}key:${keyId}`;
  }
  /** Sorted set (all scores 0, ordered by member): every key id, for listing every tenant's keys in id order. */
  get apiKeys(): string {
    return `${this.base}keys`;
  }
  /** As {@link apiKeys}, for one tenant's keys. */
  apiKeysOf(tenantId: string): string {
    return `${this.base}tenant-keys:${tenantId}`;
  }
  /** Set: the ids of the keys not revoked (absent when there is none: `hasActiveApiKey` is one `EXISTS`). */
  get activeApiKeys(): string {
    return `${this.base}active-keys`;
  }
  /** Hash: tenant id → its own limits as JSON (`requestsPerSecond`, `maxPendingTasks`, `updatedAt`). */
  get tenantLimits(): string {
    return `${this.base}tenant-limits`;
  }
}

/**
 * The keys of one partition. Scripts receive the fixed ones as KEYS and `base` as an argument, from which they
 * build the per-task keys (`attempts:<id>`), the records and data hashes (`tasks`, `data`), the per-target queues
 * (`due:<target>`), the listing sets (`live`, `status:<status>`) and the retention index (`expiring`, which the
 * purge takes as a key): all begin with the same hash tag, so they hash to the slot of KEYS[1].
 */
export class PartitionKeys {
  /** `{prefix:partition}:`, the start of every key below. */
  readonly base: string;

  constructor(
    prefix: string,
    readonly partition: string,
  ) {
    const { index, count } = subIndexOfPartition(partition);
    const home = `${prefix}:${escapePart(tenantOfPartition(partition))}`;
    // A sub-partition's tag adds `:` and more after the escaped tenant, where an escaped tenant holds no `:`.
    this.base = `{${index === 0 ? home : spreadTag(home, index, count)}}:`;
  }

  /**
   * Hash: task id → the task's record, its changing state (status, due time, lease, token, version, ...) as a
   * MessagePack array of the values of `STATE_FIELDS` (task-codec.ts), false where null (layout 6).
   */
  get records(): string {
    return `${this.base}tasks`;
  }
  /** Hash: task id → the task's fixed part as JSON (target, headers, body, policy, ...) (layout 6). */
  get taskData(): string {
    return `${this.base}data`;
  }
  /** Layout 5 and before: a task's state as a hash of its own, moved into {@link records} by the migration to 6. */
  legacyTask(taskId: string): string {
    return `${this.base}task:${taskId}`;
  }
  /** Layout 5 and before: a task's data JSON as a string of its own, moved into {@link taskData} by the migration to 6. */
  legacyData(taskId: string): string {
    return `${this.base}data:${taskId}`;
  }
  /** Sorted set: attempt log entries (JSON) scored by attempt number. */
  attempts(taskId: string): string {
    return `${this.base}attempts:${taskId}`;
  }
  /** Hash: idempotency key → task id. */
  get idem(): string {
    return `${this.base}idem`;
  }
  /** Sorted set: the queue of one target, its PENDING task ids scored by `nextAttemptAt`. */
  queue(targetKey: string): string {
    return `${this.base}due:${targetKey}`;
  }
  /**
   * Sorted set: one member per target with a due-able PENDING task, scored by when its queue is next claimable —
   * max(its earliest due time, its hold, its rate limit's next whole token); absent while the target is at its
   * in-flight limit. Claims range it up to now; kept exact by every script that changes a queue or a gate.
   */
  get ready(): string {
    return `${this.base}ready`;
  }
  /**
   * Hash: one target's gate — `held` (until, epoch ms), `rate`, `burst`, `maxInFlight`, the token bucket's
   * `tokens` as of `tokensAt`, and `inFlight` (its tasks IN_FLIGHT now). Fields: `GATE_FIELDS` in `target-gate.ts`.
   */
  gate(targetKey: string): string {
    return `${this.base}gate:${targetKey}`;
  }
  /**
   * Hash (home partition only, with several sub-partitions): target → its limits as given, JSON
   * `[ratePerSecond, burst, maxInFlight]`; each sub-partition's gate holds its share (see target-gate.ts).
   */
  get gateSettings(): string {
    return `${this.base}gate-settings`;
  }
  /** Layout 2's hash of holds (target → held until): read and deleted by the migration to layout 3. */
  get legacyHolds(): string {
    return `${this.base}holds`;
  }
  /** Sorted set (all scores 0, ordered by member): every target that ever had a task, a hold or a limit. */
  get targets(): string {
    return `${this.base}targets`;
  }
  /** Sorted set that `claim-due.lua` sorts ready targets in and deletes before it ends. */
  get claimOrder(): string {
    return `${this.base}claim-order`;
  }
  /** Layout 1's one sorted set of PENDING task ids (by `nextAttemptAt`): read and deleted by the migration. */
  get legacyDue(): string {
    return `${this.base}due`;
  }
  /** Sorted set: IN_FLIGHT task ids scored by `leaseExpiresAt`: the lease reaper's way in, and IN_FLIGHT listings'. */
  get leases(): string {
    return `${this.base}leases`;
  }
  /**
   * Sorted set: the finished tasks that have an `expiresAt` (ids), scored by it: added to by the script that ends a
   * task (or inserts it ended), taken from by a replay, and ranged up to now by the purge (`purge-expired.lua`). Live
   * tasks and tasks that ended before retention existed are not in it.
   */
  get expiring(): string {
    return `${this.base}expiring`;
  }
  /**
   * Sorted set: the ended tasks whose callback is owed (ids), scored by when they ended: added to by the script that
   * ends a task with a callback, read by the callback relay and taken from when it made the callback
   * (`settle-callbacks.lua`); the purge keeps a task while it is in it.
   */
  get callbacks(): string {
    return `${this.base}callbacks`;
  }
  /** Hash: status → number of tasks. */
  get counts(): string {
    return `${this.base}counts`;
  }
  /**
   * Sorted set (all scores 0, ordered by member): the listing keys of the live tasks, PENDING and IN_FLIGHT (layout
   * 7). One set for both, so that a claim and a retry, the moves of every attempt, write no listing set: only a task
   * that ends leaves it.
   */
  get live(): string {
    return `${this.base}live`;
  }
  /**
   * Sorted set (all scores 0, ordered by member): the listing keys of the tasks in one ended status. Layout 6 and
   * before kept one for PENDING and one for IN_FLIGHT too, which the migration to 7 merges into {@link live}.
   */
  status(status: TaskStatus): string {
    return `${this.base}status:${status}`;
  }
  /** Every listing set: each task is in exactly one. */
  get listings(): string[] {
    return [this.live, ...TERMINAL_STATUSES.map((status) => this.status(status))];
  }
  /**
   * Layout 3 and before: as {@link status}, for the tasks of one named policy. Layout 4 keeps none (a listing by
   * policy filters the status sets); the layout migration deletes them.
   */
  legacyPolicyStatus(status: TaskStatus, policyId: string): string {
    return `${this.base}ps:${status}:${policyId}`;
  }
  /** Hash: one named policy (`policy` JSON, `created`, `updated`, `version`). */
  policy(policyId: string): string {
    return `${this.base}policy:${policyId}`;
  }
  /** Sorted set (all scores 0): policy ids, for listing in id order. */
  get policies(): string {
    return `${this.base}policies`;
  }
  /** Hash: one per-target state (`value`, `version`, `updated`). */
  target(key: string): string {
    return `${this.base}target:${key}`;
  }
  /** String: one large body. */
  blob(key: string): string {
    return `${this.base}blob:${key}`;
  }
}

/**
 * The listing key of a task: its `createdAt` as 16 hex digits that sort like the number, then its id. Members of
 * a sorted set whose scores are all equal sort bytewise, so `ZRANGE … BYLEX REV` walks tasks newest first with
 * ties broken by `taskId` descending — the port's listing order — and a cursor is just the last member.
 */
export function sortKeyOf(createdAt: number, taskId: string): string {
  return sortTimeOf(createdAt) + taskId;
}

/**
 * The 16 hex digits that begin a task's listing key (see {@link sortKeyOf}): what a record keeps in `sortKey`
 * (since layout 5), the id naming the record.
 */
export function sortTimeOf(createdAt: number): string {
  const bytes = Buffer.allocUnsafe(8);
  bytes.writeDoubleBE(createdAt);
  // IEEE 754 order trick: flip the sign bit of a positive number, every bit of a negative one.
  if ((bytes[0] ?? 0) & 0x80) for (let i = 0; i < 8; i++) bytes[i] = ~(bytes[i] ?? 0) & 0xff;
  else bytes[0] = (bytes[0] ?? 0) ^ 0x80;
  return bytes.toString('hex');
}

/** The task id a listing key (see {@link sortKeyOf}) was made from: what follows its 16 hex digits. */
export function taskIdOfSortKey(sortKey: string): string {
  return sortKey.slice(16);
}

/** Scratch for {@link createdAtOfSortKey}: the eight bytes of one double. */
const DOUBLE = new DataView(new ArrayBuffer(8));

/**
 * The `createdAt` a listing key (see {@link sortKeyOf}) was made from. Read as two 32-bit halves into a reused
 * buffer: every task the Redis store reads (each claim's) takes its `createdAt` from here, so no Buffer is made.
 */
export function createdAtOfSortKey(sortKey: string): number {
  let high = Number.parseInt(sortKey.slice(0, 8), 16);
  let low = Number.parseInt(sortKey.slice(8, 16), 16);
  // The order trick of sortTimeOf undone: a set top bit was a positive number's flipped sign bit, else every bit
  // was flipped.
  if (high >= 0x80000000) high -= 0x80000000;
  else {
    high = ~high >>> 0;
    low = ~low >>> 0;
  }
  DOUBLE.setUint32(0, high);
  DOUBLE.setUint32(4, low);
  return DOUBLE.getFloat64(0);
}
