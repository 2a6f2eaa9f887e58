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
// round trips. A tenant with several sub-partitions has one queue per target in each: they are merged into one queue
// of the ring (its due count their sum), and the tasks dealt to it are taken from its parts in turn, so fairness
// between targets and tenants is the same however a tenant is split.

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
  onClaimed: (task: RetryTask, partition: string) => void = () => undefined,
  subPartitions = 1,
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
    return ((await runScript(client, 'claimDue', keys, args)) as TaskReply[]).map((reply) => {
      const task = decodeTask(reply, tenantId);
      onClaimed(task, k.partition);
      return task;
    });
  }

  // A round plans from due counts read a moment before: under concurrent claims its queues may give less than
  // planned while others still have due tasks, so without rooms to account for, a short round is followed by
  // another for what is left (a claim ends full, or when nothing is ready for it).
  const claimed: RetryTask[] = [];
  for (let round = 0; round < MAX_ROUNDS && claimed.length < options.limit; round++) {
    const { tasks, planned } = await claimRound(client, partitions, now, { ...options, limit: options.limit - claimed.length }, skip, onClaimed, callOf, subPartitions > 1);
    claimed.push(...tasks);
    if (rooms !== undefined || planned === 0 || tasks.length >= planned) break;
  }
  return claimed;
}

/** Claim rounds at most, when a round gets less than it planned (see claimFairly). */
const MAX_ROUNDS = 8;

/** One claim over several partitions: ready queues read, slots shared and dealt, then taken (two round trips). */
async function claimRound(
  client: RedisClient,
  partitions: readonly PartitionKeys[],
  now: number,
  options: ClaimOptions,
  skip: SkipPartition | undefined,
  onClaimed: (task: RetryTask, partition: string) => void,
  callOf: (k: PartitionKeys, limit: number, rest: readonly (string | number)[]) => ScriptCall,
  times: boolean,
): Promise<{ tasks: RetryTask[]; planned: number }> {
  const { rooms } = options;
  const queues = await readyQueues(client, partitions, now, options.limit, skip, times);
  const ring = ringOrder(rooms === undefined ? queues : queues.filter((queue) => roomOf(rooms, queue) > 0), options.after);
  const { considered, share } = claimShares(ring.length, options.limit);
  const served = ring.slice(0, considered);
  // How many each queue gives: the round-robin deal of `min(due, share, room)` tasks per queue, cut to the limit
  // (with rooms, once each tenant's tasks beyond its room are left out).
  const taken = new Map<Queue, number>();
  const slots = served.map((queue) => Array.from({ length: Math.min(queue.due, share, roomOf(rooms, queue)) }, () => queue));
  const dealt = rooms === undefined ? dealRoundRobin(slots, options.limit) : keepWithinRooms(dealRoundRobin(slots, Infinity), rooms, options.limit, (q) => q.tenantId);
  for (const queue of dealt) taken.set(queue, (taken.get(queue) ?? 0) + 1);
  if (dealt.length === 0) return { tasks: [], planned: 0 };

  const counts = new Map<PartitionKeys, (string | number)[]>();
  for (const queue of served) {
    for (const [keys, count] of splitOverParts(queue, taken.get(queue) ?? 0)) {
      let pairs = counts.get(keys);
      if (pairs === undefined) counts.set(keys, (pairs = []));
      pairs.push(queue.targetKey, count);
    }
  }
  const called = [...counts.keys()];
  const calls = called.map((k) => callOf(k, options.limit, ['counts', ...(counts.get(k) as (string | number)[])]));
  // A partition lost between the two round trips may have leased tasks whose reply never came: they are reaped when
  // their leases lapse, as after any lost reply.
  const claimed = (await runEach(client, 'claimDue', calls, skip)).flatMap((reply, i) => {
    const k = called[i] as PartitionKeys;
    const tenantId = tenantOfPartition(k.partition);
    return ((reply ?? []) as TaskReply[]).map((reply) => {
      const task = decodeTask(reply, tenantId);
      onClaimed(task, k.partition);
      return task;
    });
  });
  // Dealt again across partitions, in ring order: each queue's tasks earliest due first (a queue in several
  // sub-partitions came back in parts, each in that order).
  const byQueue = new Map<string, RetryTask[]>(served.map((q) => [queueId(q), []]));
  for (const task of claimed) byQueue.get(queueId(task))?.push(task);
  const split = served.filter((q) => q.parts.length > 1);
  for (const q of split) byQueue.get(queueId(q))?.sort((a, b) => (a.nextAttemptAt ?? 0) - (b.nextAttemptAt ?? 0));
  return { tasks: dealRoundRobin([...byQueue.values()], options.limit), planned: dealt.length };
}

/** How many of a queue's `count` tasks each of its parts gives: its earliest due tasks, whichever parts hold them. */
function splitOverParts(queue: Queue, count: number): Map<PartitionKeys, number> {
  const given = new Map<PartitionKeys, number>();
  if (queue.parts.length === 1) {
    if (count > 0) given.set((queue.parts[0] as Queue['parts'][number]).keys, count);
    return given;
  }
  const heads = queue.parts.flatMap((part) => part.times.map((time) => ({ time, keys: part.keys })));
  heads.sort((a, b) => a.time - b.time);
  for (const { keys } of heads.slice(0, count)) given.set(keys, (given.get(keys) ?? 0) + 1);
  return given;
}

/**
 * A ready queue of one tenant's target, with how many of its tasks are due (at most the claim's limit in each part),
 * in every partition of the tenant that has it ready.
 */
interface Queue extends TargetRef {
  parts: { keys: PartitionKeys; due: number; times: number[] }[];
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
  times: boolean,
): Promise<Queue[]> {
  const replies = (await fanOut(
    client,
    partitions,
    (pipeline, k) => queueScript(pipeline, 'readReady', [k.ready], [k.base, String(now), cap, ...(times ? ['times'] : [])]),
    skip,
  )) as ((string | number)[] | undefined)[];
  const queues = new Map<string, Queue>();
  replies.forEach((flat = [], p) => {
    const keys = partitions[p] as PartitionKeys;
    const tenantId = tenantOfPartition(keys.partition);
    for (let i = 0; i + 1 < flat.length; ) {
      const targetKey = String(flat[i]);
      const due = Number(flat[i + 1]);
      const dueTimes = times ? flat.slice(i + 2, i + 2 + due).map(Number) : [];
      i += times ? 2 + due : 2;
      const id = queueId({ tenantId, targetKey });
      const queue = queues.get(id);
      if (queue === undefined) queues.set(id, { tenantId, targetKey, parts: [{ keys, due, times: dueTimes }], due });
      else {
        queue.parts.push({ keys, due, times: dueTimes });
        queue.due += due;
      }
    }
  });
  return [...queues.values()];
}
