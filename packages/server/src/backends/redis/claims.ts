import type { RedisClient } from './connection.js';
import type { RetryTask } from '../../domain/task.js';
import { claimShares, dealRoundRobin, keepWithinRooms, ringOrder, roomOf } from '../../store/claim-shares.js';
import type { ClaimOptions, ClaimRooms, TargetRef } from '../../store/store.js';
import { fanOut, runEach } from './fan-out.js';
import type { ScriptCall, SkipPartition } from './fan-out.js';
import { tenantOfPartition } from './keys.js';
import type { PartitionKeys } from './keys.js';
import { queueScript, runScript } from './scripts.js';
import { decodeTask } from './task-codec.js';
import type { TaskReply } from './task-codec.js';

// Claims, shared fairly among target queues (the rule is the port's: see `ClaimOptions` in store.ts).
//
// One partition (one tenant, the usual case): one `claim-due.lua` call applies the whole rule, so a claim stays one
// round trip. Several partitions: a script runs in one slot, so the ring over `(tenantId, targetKey)` is built here
// from every partition's ready queues (one pipeline of `read-ready.lua`, which cuts each queue's due count to
// what its target's limits allow), with the shared functions of `store/claim-shares.ts`, and each partition is
// then told how many tasks to take from which of its queues (one pipeline of `claim-due.lua` with explicit counts,
// which re-checks each target's readiness and limits, since another claim may have taken from it meanwhile): two
// round trips.

/**
 * Claims up to `options.limit` due tasks over `partitions` (see the module comment); with `skip`, on Redis Cluster,
 * from the partitions that could be reached (see `fanOut`): a master failing over holds up only its own tenants.
 */
export async function claimFairly(
  client: RedisClient,
  partitions: readonly PartitionKeys[],
  now: number,
  options: ClaimOptions,
  skip?: SkipPartition,
): Promise<RetryTask[]> {
  if (options.limit <= 0 || partitions.length === 0) return [];
  const { rooms } = options;
  const leaseUntil = String(now + options.leaseMs);
  const callOf = (k: PartitionKeys, limit: number, rest: readonly (string | number)[]): ScriptCall => ({
    keys: [k.ready, k.leases, k.counts, k.claimOrder],
    args: [k.base, String(now), limit, options.workerId, leaseUntil, ...rest],
  });
  if (partitions.length === 1) {
    const k = partitions[0] as PartitionKeys;
    const tenantId = tenantOfPartition(k.partition);
    // One partition is one tenant: its room is the claim's limit.
    const limit = rooms === undefined ? options.limit : Math.min(options.limit, rooms.tenants.get(tenantId) ?? rooms.tenant);
    if (limit <= 0) return [];
    const after = options.after?.tenantId === tenantId ? options.after.targetKey : '';
    const { keys, args } = callOf(k, limit, ['share', after, ...targetRoomArgs(rooms, tenantId)]);
    return ((await runScript(client, 'claimDue', keys, args)) as TaskReply[]).map((reply) => decodeTask(reply, tenantId));
  }

  const queues = await readyQueues(client, partitions, now, options.limit, skip);
  const ring = ringOrder(rooms === undefined ? queues : queues.filter((queue) => roomOf(rooms, queue) > 0), options.after);
  const { considered, share } = claimShares(ring.length, options.limit);
  const served = ring.slice(0, considered);
  // How many each queue gives: the round-robin deal of `min(due, share, room)` tasks per queue, cut to the limit
  // (with rooms, once each tenant's tasks beyond its room are left out).
  const taken = new Map<Queue, number>();
  const slots = served.map((queue) => Array.from({ length: Math.min(queue.due, share, roomOf(rooms, queue)) }, () => queue));
  const dealt = rooms === undefined ? dealRoundRobin(slots, options.limit) : keepWithinRooms(dealRoundRobin(slots, Infinity), rooms, options.limit, (q) => q.tenantId);
  for (const queue of dealt) taken.set(queue, (taken.get(queue) ?? 0) + 1);

  const called = partitions.filter((k) => served.some((q) => q.keys === k && taken.has(q)));
  const calls = called.map((k) => {
    const pairs = served.filter((q) => q.keys === k && taken.has(q)).flatMap((q) => [q.targetKey, taken.get(q) as number]);
    return callOf(k, options.limit, ['counts', ...pairs]);
  });
  // A partition lost between the two round trips may have leased tasks whose reply never came: they are reaped when
  // their leases lapse, as after any lost reply.
  const claimed = (await runEach(client, 'claimDue', calls, skip)).flatMap((reply, i) => {
    const tenantId = tenantOfPartition((called[i] as PartitionKeys).partition);
    return ((reply ?? []) as TaskReply[]).map((task) => decodeTask(task, tenantId));
  });
  // Dealt again across partitions, in ring order: each queue's tasks came back earliest due first.
  const byQueue = new Map<string, RetryTask[]>(served.map((q) => [queueId(q), []]));
  for (const task of claimed) byQueue.get(queueId(task))?.push(task);
  return dealRoundRobin([...byQueue.values()], options.limit);
}

/** A ready queue of one partition, with how many of its tasks are due (at most the claim's limit). */
interface Queue extends TargetRef {
  keys: PartitionKeys;
  due: number;
}

/** `claim-due.lua`'s share-mode room arguments for one tenant's partition: the default room, then target, room pairs. */
function targetRoomArgs(rooms: ClaimRooms | undefined, tenantId: string): (string | number)[] {
  if (rooms === undefined) return [];
  const args: (string | number)[] = [rooms.target];
  for (const [targetKey, room] of rooms.targets.get(tenantId) ?? []) args.push(targetKey, room);
  return args;
}

function queueId(queue: TargetRef): string {
  return `${queue.tenantId}\n${queue.targetKey}`;
}

async function readyQueues(
  client: RedisClient,
  partitions: readonly PartitionKeys[],
  now: number,
  cap: number,
  skip: SkipPartition | undefined,
): Promise<Queue[]> {
  const replies = (await fanOut(
    client,
    partitions,
    (pipeline, k) => queueScript(pipeline, 'readReady', [k.ready], [k.base, String(now), cap]),
    skip,
  )) as ((string | number)[] | undefined)[];
  return replies.flatMap((flat = [], p) => {
    const keys = partitions[p] as PartitionKeys;
    const queues: Queue[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      queues.push({ tenantId: tenantOfPartition(keys.partition), targetKey: String(flat[i]), keys, due: Number(flat[i + 1]) });
    }
    return queues;
  });
}
