import { randomBytes } from 'node:crypto';
import { LIVE_STATUSES, TaskStatus, computeDelay, systemClock } from '@retryd/core';
import type { RetryPolicy } from '@retryd/core';
import type { RedisClient } from './connection.js';
import type { RetryTask } from '../../domain/task.js';
import { targetKeyOf } from '../../domain/target-key.js';
import { execAll } from './fan-out.js';
import { taskIdOfSortKey, type GlobalKeys, type PartitionKeys } from './keys.js';
import { runScript } from './scripts.js';
import { hashFieldOf } from './task-codec.js';

// The key layout's version, and the migration of older data in place.
//
// Layout 1 (before targets): one `due` sorted set per partition, no `target` in a task's state hash. Layout 2: a
// queue per target (`due:<target>`), the `ready`, `holds` and `targets` keys, and `target` in every task's hash.
// Layout 3: a gate hash per target (`gate:<target>`: its hold, limits, token bucket and in-flight count) in place
// of `holds` (see keys.ts). Layout 4: no listing set per policy and status (`ps:<status>:<policyId>`): a listing by
// policy filters the status sets. Layout 5: new tasks' data JSON is an array without the tenant, the id and
// `createdAt` (task-codec.ts DATA_ARRAY_FIELDS), and their hash's `sortKey` the listing key's time digits only;
// nothing is rewritten, since the store reads layout 4's objects and whole keys as they are, but the version says
// that data an older retryd could not read may be there. Layout 6: a task is a field in each of two hashes of its
// partition, `tasks` (its record: the state hash's values as a MessagePack array) and `data` (its data JSON), instead
// of a hash and a string of its own; the migration moves every task. Layout 7: one listing set, `live`, for the
// PENDING and IN_FLIGHT tasks instead of one per status (keys.ts `live`); the migration merges them. Retention
// (still layout 7, nothing rewritten) adds `expires` to records after `sortKey`, where a record written before reads
// it as absent, and the sorted set `expiring`; a retryd without retention reads both (it ignores them), but a
// finished task it cancels or ends gets no `expires` and is kept until deleted by hand. The version
// lives in `{prefix}:layout`; its absence means layout 1 (or no data yet).
//
// `init()` of every instance calls `ensureLayout`. The first one to take the lock (`SET NX PX`, renewed as it goes)
// migrates every partition; the others wait until the version is written, and take over if the migrating instance
// dies (its lock lapses; the migration is safe to run again from the start). Instances of an older retryd must be
// stopped first: they would go on writing layout 1.

/** The layout this version of the store reads and writes. */
export const LAYOUT_VERSION = 7;

/** How long the lock outlives its holder's last sign of life, in ms. */
const LOCK_MS = 30_000;
/** The field of a layout-5 state hash that names a task's target. */
const TARGET_FIELD = hashFieldOf('targetKey');
/** The field of a layout-5 state hash that names a task's policy. */
const POLICY_FIELD = hashFieldOf('policyId');
/** Tasks read and converted per script call. */
const CHUNK = 500;
/** How waiting instances poll for the end of a migration: exponential from 50 ms to 1 s, with jitter. */
const WAIT: RetryPolicy = {
  // Unused by the delay math: an instance waits as long as a live one migrates.
  maxAttempts: 1,
  backoffType: 'EXPONENTIAL',
  initialDelayMs: 50,
  multiplier: 2,
  maxDelayMs: 1_000,
  jitterType: 'EQUAL',
};

/**
 * Brings the data under a prefix to {@link LAYOUT_VERSION}, or waits while another instance does. Resolves at
 * once when it already is.
 *
 * @throws Error when the data is in a newer layout than this store knows (a newer retryd wrote it)
 */
export async function ensureLayout(
  client: RedisClient,
  globals: GlobalKeys,
  keysOf: (partition: string) => PartitionKeys,
  after?: LaterMove,
): Promise<void> {
  const done = async () => (await isCurrent(client, globals)) && (after === undefined || (await after.isDone()));
  for (let attempt = 1; ; attempt++) {
    if (await done()) return;
    const token = randomBytes(16).toString('hex');
    if ((await client.set(globals.migrationLock, token, 'PX', LOCK_MS, 'NX')) === 'OK') {
      try {
        // Another instance may have finished between the read above and the lock.
        if (!(await isCurrent(client, globals))) await migrate(client, globals, keysOf, token);
        if (after !== undefined && !(await after.isDone())) await after.move(renewer(client, globals, token));
      } finally {
        // A lock that cannot be freed lapses by itself.
        await runScript(client, 'migrationLock', [globals.migrationLock], [token, 0]).catch(() => undefined);
      }
      return;
    }
    await systemClock.sleep(computeDelay(WAIT, attempt, 0, Math.random));
  }
}

/**
 * A move of the data that runs under the same lock once the layout is current (the number of sub-partitions:
 * `sub-partition-migration.ts`): `isDone` tells whether it is needed, `move` makes it, calling `renew` as it goes.
 */
export interface LaterMove {
  isDone(): Promise<boolean>;
  move(renew: () => Promise<void>): Promise<void>;
}

/** Keeps the lock `token` holds, or throws when another instance took it over. */
function renewer(client: RedisClient, globals: GlobalKeys, token: string): () => Promise<void> {
  return async () => {
    if ((await runScript(client, 'migrationLock', [globals.migrationLock], [token, LOCK_MS])) !== 1) {
      throw new Error('Lost the layout migration lock to another instance (this one was paused too long).');
    }
  };
}

async function isCurrent(client: RedisClient, globals: GlobalKeys): Promise<boolean> {
  return (await layoutOf(client, globals)) === LAYOUT_VERSION;
}

/** The layout the data is in (1 when no version is written). */
async function layoutOf(client: RedisClient, globals: GlobalKeys): Promise<number> {
  const version = await client.get(globals.layout);
  if (version === null) return 1;
  if (Number(version) > LAYOUT_VERSION) {
    throw new Error(`The Redis keys are in layout ${version}, newer than this retryd's ${LAYOUT_VERSION}: run a newer retryd.`);
  }
  return Number(version);
}

async function migrate(client: RedisClient, globals: GlobalKeys, keysOf: (partition: string) => PartitionKeys, token: string): Promise<void> {
  const renew = renewer(client, globals, token);
  const from = await layoutOf(client, globals);
  for (const partition of await client.smembers(globals.partitions)) {
    if (from < 2) await migratePartition(client, keysOf(partition), renew);
    if (from < 3) await migrateGates(client, keysOf(partition), renew);
    if (from < 4) await dropPolicyListings(client, keysOf(partition), renew);
    if (from < 6) await moveToRecords(client, keysOf(partition), renew);
    if (from < 7) await mergeLiveListings(client, keysOf(partition), renew);
  }
  await client.set(globals.layout, String(LAYOUT_VERSION));
}

/**
 * Gives every task of a partition its target, found through the listing sets (one per status, so every task is
 * in exactly one), `CHUNK` tasks per round trip: the target key is computed here from the task's URL, as the
 * enqueuer computes it for new tasks.
 */
async function migratePartition(client: RedisClient, k: PartitionKeys, renew: () => Promise<void>): Promise<void> {
  for (const status of Object.values(TaskStatus)) {
    let start = '-';
    for (;;) {
      const members = await client.zrange(k.status(status), start, '+', 'BYLEX', 'LIMIT', 0, CHUNK);
      const ids = members.map(taskIdOfSortKey);
      const pipeline = client.pipeline();
      for (const id of ids) pipeline.get(k.legacyData(id));
      const data = ids.length === 0 ? [] : ((await execAll(pipeline)) as (string | null)[]);
      const pairs = ids.flatMap((id, i) => {
        const json = data[i];
        if (json === null || json === undefined) return [];
        return [id, targetKeyOf((JSON.parse(json) as Pick<RetryTask, 'targetUrl'>).targetUrl)];
      });
      if (pairs.length > 0) {
        await runScript(client, 'migrateTasks', [k.legacyDue, k.counts, k.ready, k.targets], [k.base, ...pairs]);
      }
      await renew();
      const last = members[members.length - 1];
      if (members.length < CHUNK || last === undefined) break;
      start = `(${last}`;
    }
  }
  await client.del(k.legacyDue);
}

/**
 * Layout 2 to 3: moves the partition's holds into the targets' gates and counts each target's IN_FLIGHT tasks from
 * the `leases` index, `CHUNK` tasks per round trip (nothing else writes while the lock is held, so paging by rank
 * is stable). Counts are set, not added: running it again gives the same gates.
 */
async function migrateGates(client: RedisClient, k: PartitionKeys, renew: () => Promise<void>): Promise<void> {
  const inFlight = new Map<string, number>();
  for (let start = 0; ; start += CHUNK) {
    const ids = await client.zrange(k.leases, start, start + CHUNK - 1);
    if (ids.length > 0) {
      const pipeline = client.pipeline();
      for (const id of ids) pipeline.hget(k.legacyTask(id), TARGET_FIELD);
      for (const target of (await execAll(pipeline)) as (string | null)[]) {
        if (target !== null) inFlight.set(target, (inFlight.get(target) ?? 0) + 1);
      }
    }
    await renew();
    if (ids.length < CHUNK) break;
  }
  await runScript(client, 'migrateGates', [k.legacyHolds, k.targets], [k.base, ...[...inFlight].flat()]);
}

/**
 * Layout 3 to 4: deletes the partition's listing sets per policy and status. Their names come from the tasks
 * themselves (each task's `policyId`, read through the status sets, `CHUNK` tasks per round trip), so a set is found
 * even for a policy that was never stored; a task whose hash is gone has no set to find. Safe to run again.
 */
async function dropPolicyListings(client: RedisClient, k: PartitionKeys, renew: () => Promise<void>): Promise<void> {
  const sets = new Set<string>();
  for (const status of Object.values(TaskStatus)) {
    let start = '-';
    for (;;) {
      const members = await client.zrange(k.status(status), start, '+', 'BYLEX', 'LIMIT', 0, CHUNK);
      if (members.length > 0) {
        const pipeline = client.pipeline();
        for (const member of members) pipeline.hget(k.legacyTask(taskIdOfSortKey(member)), POLICY_FIELD);
        for (const policyId of (await execAll(pipeline)) as (string | null)[]) {
          if (policyId !== null) sets.add(k.legacyPolicyStatus(status, policyId));
        }
      }
      await renew();
      const last = members[members.length - 1];
      if (members.length < CHUNK || last === undefined) break;
      start = `(${last}`;
    }
  }
  // One DEL per key: single-key commands, which a pipeline may send on Redis Cluster as on one server.
  const pipeline = client.pipeline();
  for (const key of sets) pipeline.del(key);
  if (sets.size > 0) await execAll(pipeline);
}

/**
 * Layout 5 to 6: moves every task of a partition into the partition's `tasks` and `data` hashes
 * (`migrate-records.lua`), found through the status sets (every task is in exactly one), `CHUNK` tasks per round
 * trip. The sets are not changed by the move, so paging them by member is stable. Safe to run again.
 */
async function moveToRecords(client: RedisClient, k: PartitionKeys, renew: () => Promise<void>): Promise<void> {
  for (const status of Object.values(TaskStatus)) {
    let start = '-';
    for (;;) {
      const members = await client.zrange(k.status(status), start, '+', 'BYLEX', 'LIMIT', 0, CHUNK);
      if (members.length > 0) await runScript(client, 'migrateRecords', [k.records, k.taskData], [k.base, ...members.map(taskIdOfSortKey)]);
      await renew();
      const last = members[members.length - 1];
      if (members.length < CHUNK || last === undefined) break;
      start = `(${last}`;
    }
  }
}

/**
 * Layout 6 to 7: merges the partition's PENDING and IN_FLIGHT listing sets into `live`, `CHUNK` members per round
 * trip, each chunk added to `live` and removed from its set in one MULTI (every task stays in exactly one listing
 * set). Safe to run again: what is left of a set is merged.
 */
async function mergeLiveListings(client: RedisClient, k: PartitionKeys, renew: () => Promise<void>): Promise<void> {
  for (const status of LIVE_STATUSES) {
    for (;;) {
      const members = await client.zrange(k.status(status), 0, CHUNK - 1);
      if (members.length === 0) break;
      const multi = client.multi();
      multi.zadd(k.live, ...members.flatMap((member) => [0, member]));
      multi.zrem(k.status(status), ...members);
      await execAll(multi);
      await renew();
    }
  }
}
