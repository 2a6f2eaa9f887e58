import { TaskStatus } from '@retryd/core';
import type { RedisClient } from './connection.js';
import type { RetryTask } from '../../domain/task.js';
import { fanOut, runEach } from './fan-out.js';
import type { ScriptCall, SkipPartition } from './fan-out.js';
import { tenantOfPartition } from './keys.js';
import type { PartitionKeys } from './keys.js';
import { decodeTask } from './task-codec.js';
import type { TaskReply } from './task-codec.js';

// Reads that span partitions: a script runs in one slot, so these read the head of one index per partition in
// one round trip (`fanOut`) and merge in JavaScript. Only the first entries of each index are read: no scan.

/**
 * The lowest score of one index (ready times, lease expiries) over `partitions`, or null when all are empty; with
 * `skip`, over the partitions that could be reached (see `fanOut`).
 */
export async function earliestScore(
  client: RedisClient,
  partitions: readonly PartitionKeys[],
  index: (keys: PartitionKeys) => string,
  skip?: SkipPartition,
): Promise<number | null> {
  if (partitions.length === 0) return null;
  const replies = await fanOut(client, partitions, (pipeline, keys) => pipeline.zrange(index(keys), 0, 0, 'WITHSCORES'), skip);
  let earliest: number | null = null;
  for (const reply of replies as (string[] | undefined)[]) {
    const score = reply?.[1];
    if (score !== undefined && (earliest === null || Number(score) < earliest)) earliest = Number(score);
  }
  return earliest;
}

/** Task counts by status summed over `partitions`, from the `counts` hash each script keeps: no key is scanned. */
export async function sumCounts(client: RedisClient, partitions: readonly PartitionKeys[]): Promise<Record<TaskStatus, number>> {
  const counts = Object.fromEntries(Object.values(TaskStatus).map((s) => [s, 0])) as Record<TaskStatus, number>;
  const hashes = await fanOut(client, partitions, (pipeline, keys) => pipeline.hgetall(keys.counts));
  for (const hash of hashes as Record<string, string>[]) {
    for (const [status, n] of Object.entries(hash)) if (status in counts) counts[status as TaskStatus] += Number(n);
  }
  return counts;
}

/**
 * IN_FLIGHT tasks whose lease lapsed by `now` over `partitions` (one `read-leases` each), earliest first, at most
 * `limit`; with `skip`, over the partitions that could be reached (see `fanOut`).
 */
export async function expiredLeases(
  client: RedisClient,
  partitions: readonly PartitionKeys[],
  now: number,
  limit: number,
  skip?: SkipPartition,
): Promise<RetryTask[]> {
  const calls = partitions.map((k): ScriptCall => ({ keys: [k.leases], args: [k.base, String(now), limit] }));
  const tasks = (await runEach(client, 'readLeases', calls, skip)).flatMap((reply, i) => {
    const tenantId = tenantOfPartition((partitions[i] as PartitionKeys).partition);
    return ((reply ?? []) as TaskReply[]).map((task) => decodeTask(task, tenantId));
  });
  if (calls.length > 1) tasks.sort((a, b) => (a.leaseExpiresAt ?? 0) - (b.leaseExpiresAt ?? 0));
  return tasks.slice(0, limit);
}
