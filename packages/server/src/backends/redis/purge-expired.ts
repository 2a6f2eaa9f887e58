import type { TaskStatus } from '@retryd/core';
import type { TaskFieldName } from '../../domain/task-fields.js';
import type { ListedTask, PurgedTask } from '../../store/store.js';
import { checkDeleteBatch } from '../../store/delete-batch.js';
import type { RedisClient } from './connection.js';
import { fanOut, runEach } from './fan-out.js';
import { runScript } from './scripts.js';
import type { ScriptCall, SkipPartition } from './fan-out.js';
import { tenantOfPartition } from './keys.js';
import type { PartitionKeys } from './keys.js';
import { DATA_ARRAY_FIELDS } from './task-codec.js';

// The purge of the tasks whose retention has passed (the port's `purgeExpired`): `purge-expired.lua` deletes the
// earliest entries of a partition's `expiring` index up to now, each task with its record, data, attempt log,
// idempotency key, listing key and count. A script runs in one slot, so with several partitions the store first
// reads how many expired tasks each holds (one ZCOUNT each, in one round trip) and shares `limit` among them, then
// purges each share (one script call each, in one round trip): never more than `limit` in all.

/** Where a data JSON array holds a field, as the script counts (from 1). */
function dataPosition(name: TaskFieldName): number {
  const at = DATA_ARRAY_FIELDS.indexOf(name);
  if (at === -1) throw new Error(`Task field ${name} is not in the data JSON, where the purge reads it.`);
  return at + 1;
}

/**
 * Where the data JSON holds the idempotency key and the body reference, in an array (layout 5 on) and in an object
 * (layout 4): arguments of both scripts (the include `task-deletion`'s `data_positions`).
 */
const DATA_ARGS: readonly (string | number)[] = Object.freeze([dataPosition('idempotencyKey'), dataPosition('bodyRef'), 'idempotencyKey', 'bodyRef']);

/** What `purge-expired.lua` and `delete-finished.lua` reply: each task deleted. */
type PurgeReply = [taskId: string, status: string, bodyRef: string | null][];

/**
 * Deletes at most `limit` tasks of `partitions` whose `expiresAt` is at or before `now` (see `Store.purgeExpired`),
 * earliest first within each partition. With one partition, one script call; with several, their shares of `limit`
 * ({@link shareOut}) from one ZCOUNT each, then one script call per partition with a share. With `skip` (Redis
 * Cluster), a partition whose master cannot be reached is left for a later call (see `fanOut`).
 */
export async function purgeExpired(
  client: RedisClient,
  partitions: readonly PartitionKeys[],
  now: number,
  limit: number,
  skip?: SkipPartition,
): Promise<PurgedTask[]> {
  if (limit <= 0 || partitions.length === 0) return [];
  let shares = [limit];
  if (partitions.length > 1) {
    const counts = await fanOut(client, partitions, (pipeline, k) => pipeline.zcount(k.expiring, '-inf', String(now)), skip);
    shares = shareOut(limit, counts.map((count) => Number(count ?? 0)));
  }
  const purging = partitions.filter((_, i) => (shares[i] ?? 0) > 0);
  const calls = partitions.flatMap((k, i): ScriptCall[] => {
    const share = shares[i] ?? 0;
    return share > 0 ? [{ keys: [k.expiring, k.idem, k.counts], args: [k.base, String(now), share, ...DATA_ARGS] }] : [];
  });
  const replies = await runEach(client, 'purgeExpired', calls, skip);
  return replies.flatMap((reply, i) => purgedOf((purging[i] as PartitionKeys).partition, reply));
}

/**
 * Deletes finished tasks of one partition by hand (see `Store.deleteFinishedTasks`): one `delete-finished.lua` call,
 * which deletes as the purge does each task still finished at the version listed.
 */
export async function deleteFinished(client: RedisClient, k: PartitionKeys, tasks: readonly ListedTask[]): Promise<PurgedTask[]> {
  checkDeleteBatch(tasks);
  if (tasks.length === 0) return [];
  const args: (string | number)[] = [k.base, ...DATA_ARGS];
  for (const { taskId, version } of tasks) args.push(taskId, version);
  return purgedOf(k.partition, await runScript(client, 'deleteFinished', [k.expiring, k.idem, k.counts], args));
}

function purgedOf(partition: string, reply: unknown): PurgedTask[] {
  const tenantId = tenantOfPartition(partition);
  return ((reply ?? []) as PurgeReply).map(([taskId, status, bodyRef]): PurgedTask => ({ tenantId, taskId, status: status as TaskStatus, bodyRef }));
}

/**
 * Shares `limit` among partitions that hold `counts[i]` expired tasks each, so that the shares add up to
 * min(limit, their sum): the partitions with the fewest first, each taking all it holds or an even part of what is
 * left, whichever is less (max-min fairness). A tenant with a backlog of millions then delays the others' purge by
 * nothing; when more partitions have expired tasks than `limit`, those with the fewest go first (and are emptied).
 *
 * @example
 * ```ts
 * shareOut(10, [1, 50, 0, 50]); // [1, 5, 0, 4]
 * ```
 */
export function shareOut(limit: number, counts: readonly number[]): number[] {
  const shares = counts.map(() => 0);
  const order = counts
    .map((count, i) => ({ count, i }))
    .filter(({ count }) => count > 0)
    .sort((a, b) => a.count - b.count);
  let left = limit;
  order.forEach(({ count, i }, rank) => {
    // Never above what is left: ceil(left / r) <= left for r >= 1.
    const share = Math.min(count, Math.ceil(left / (order.length - rank)));
    shares[i] = share;
    left -= share;
  });
  return shares;
}
