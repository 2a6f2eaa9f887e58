import { TERMINAL_STATUSES, TaskStatus } from '@retryd/core';
import type { RedisClient } from './connection.js';
import type { RetryTask } from '../../domain/task.js';
import type { TargetLimits } from '../../store/store.js';
import { execAll, fanOut } from './fan-out.js';
import { taskIdOfSortKey, tenantOfPartition } from './keys.js';
import type { GlobalKeys, PartitionKeys } from './keys.js';
import type { PartitionRegistry } from './partitions.js';
import { runScript } from './scripts.js';
import { SubPartitions } from './sub-partitions.js';
import { TargetGates } from './target-gate.js';
import { decodeTask } from './task-codec.js';
import type { TaskReply } from './task-codec.js';

// The move of a store's tasks from N sub-partitions per tenant to M, in place (`ensureSubPartitions`, called by
// `init()` under the layout migration's lock, after the layout is current).
//
// A script runs in one slot and a task's new partition is another slot, so a task moves in three steps: its pieces
// are read from the old partition (record and data as bytes, attempt log, idempotency entry, its place in the
// listing, due, lease, retention and callback indexes), written to the new one, then deleted from the old one. A
// crash between the steps leaves the task in both; the walk, run again, finds it in the old partition, writes it
// again (every write sets, none adds) and deletes it. What is counted or derived (status counts, each gate's
// in-flight count, the ready scores, the limits' shares) is set afresh for every partition once the tasks are in
// place. Every instance must be stopped while it runs, as for a layout migration: one still running with the old
// number would write tasks where no claim looks.

/** Tasks moved per round trip. */
const CHUNK = 200;

/** The number of sub-partitions the data is in: `{prefix}:sub-partitions`, absent for 1. */
export async function storedSubPartitions(client: RedisClient, globals: GlobalKeys): Promise<number> {
  const stored = await client.get(globals.subPartitions);
  return stored === null ? 1 : Number(stored);
}

/**
 * Moves every tenant's tasks from the number of sub-partitions the data is in to `subs.count`, and records it. The
 * caller holds the migration lock; `renew` keeps it.
 */
export async function moveSubPartitions(
  client: RedisClient,
  globals: GlobalKeys,
  registry: PartitionRegistry,
  subs: SubPartitions,
  renew: () => Promise<void>,
  now: number,
  wakeOf: (keys: PartitionKeys) => readonly [channel: string, message: string],
): Promise<void> {
  const from = await storedSubPartitions(client, globals);
  if (from === subs.count) return;
  const old = new SubPartitions(from, client, registry);
  const tenants = [...new Set((await client.smembers(globals.partitions)).map(tenantOfPartition))];
  for (const tenantId of tenants) {
    const before = old.keysOfTenant(tenantId);
    const after = subs.keysOfTenant(tenantId);
    const settings = await targetSettings(client, before, now);
    await registry.register(after.map((k) => k.partition));
    for (const k of before) await moveOut(client, k, subs, tenantId, renew);
    const kept = new Set(after.map((k) => k.partition));
    for (const k of before) if (!kept.has(k.partition)) await dropPartition(client, globals, registry, k);
    if (subs.count === 1) await client.del((after[0] as PartitionKeys).gateSettings);
    for (const k of after) await recount(client, k);
    // Limits shared out and holds copied over the new parts (which also rescores each target's `ready`).
    const gates = new TargetGates(client, registry, subs, wakeOf);
    for (const [targetKey, { limits, held }] of settings) {
      await gates.limit({ tenantId, targetKey }, limits, now);
      if (held > now) await gates.hold({ tenantId, targetKey }, held, now);
      await renew();
    }
  }
  if (subs.count === 1) await client.del(globals.subPartitions);
  else await client.set(globals.subPartitions, String(subs.count));
}

/** Each target of a tenant's old parts: its limits as given and its hold (the home part's). */
async function targetSettings(client: RedisClient, parts: readonly PartitionKeys[], now: number): Promise<Map<string, { limits: TargetLimits; held: number }>> {
  const home = parts[0] as PartitionKeys;
  const targets = new Set<string>();
  for (const k of parts) for (const target of await client.zrange(k.targets, 0, -1)) targets.add(target);
  const settings = new Map<string, { limits: TargetLimits; held: number }>();
  for (const targetKey of targets) {
    const [held, rate, burst, maxInFlight] = await client.hmget(home.gate(targetKey), 'held', 'rate', 'burst', 'maxInFlight');
    const given = parts.length > 1 ? await client.hget(home.gateSettings, targetKey) : null;
    const [ratePerSecond, burstGiven, maxGiven] =
      given === null ? [numberOf(rate), numberOf(burst), numberOf(maxInFlight)] : (JSON.parse(given) as [number | null, number | null, number | null]);
    const limits = { ratePerSecond, burst: ratePerSecond === null ? null : burstGiven, maxInFlight: maxGiven };
    settings.set(targetKey, { limits, held: numberOf(held) ?? now });
  }
  return settings;
}

/** A gate field as a number (stored as text, `=`-encoded or plain), null when absent. */
function numberOf(text: string | null | undefined): number | null {
  if (text === null || text === undefined || text === '') return null;
  return Number(text.startsWith('=') ? text.slice(1) : text);
}

/** Moves the tasks of an old part whose new partition is another, `CHUNK` at a time through its listing sets. */
async function moveOut(client: RedisClient, k: PartitionKeys, subs: SubPartitions, tenantId: string, renew: () => Promise<void>): Promise<void> {
  for (const set of k.listings) {
    let start = '-';
    for (;;) {
      const members = await client.zrange(set, start, '+', 'BYLEX', 'LIMIT', 0, CHUNK);
      const last = members[members.length - 1];
      if (last === undefined) break;
      const ids = members.map(taskIdOfSortKey);
      const replies = (await runScript(client, 'getTasks', [k.idem], [k.base, 'id', ...ids])) as (TaskReply | null)[];
      const moving = replies.flatMap((reply, i) => {
        if (reply === null) return [];
        const task = decodeTask(reply, tenantId);
        const to = subs.of(task);
        return to === k.partition ? [] : [{ task, member: members[i] as string, set, to: subs.keysOfTenant(tenantId).find((p) => p.partition === to) as PartitionKeys }];
      });
      if (moving.length > 0) await moveTasks(client, k, moving);
      await renew();
      if (members.length < CHUNK) break;
      start = `(${last}`;
    }
  }
}

interface Moving {
  task: RetryTask;
  /** Its listing key, and the listing set it is in. */
  member: string;
  set: string;
  to: PartitionKeys;
}

/** Copies tasks of one part to their new parts, then deletes them from it (see the module comment). */
async function moveTasks(client: RedisClient, from: PartitionKeys, moving: readonly Moving[]): Promise<void> {
  const read = client.pipeline();
  for (const { task } of moving) {
    read.hgetBuffer(from.records, task.taskId);
    read.hgetBuffer(from.taskData, task.taskId);
    read.zrangeBuffer(from.attempts(task.taskId), 0, -1, 'WITHSCORES');
    read.zscore(from.expiring, task.taskId);
    read.zscore(from.callbacks, task.taskId);
  }
  const pieces = await execAll(read);
  await fanOut(client, moving, (write, { task, member, set, to }) => {
    const at = moving.findIndex((m) => m.task.taskId === task.taskId) * 5;
    const [record, data, attempts, expiring, callback] = pieces.slice(at, at + 5) as [Buffer, Buffer | null, Buffer[], string | null, string | null];
    write.hset(to.records, task.taskId, record);
    if (data !== null) write.hset(to.taskData, task.taskId, data);
    write.hset(to.idem, task.idempotencyKey, task.taskId);
    write.del(to.attempts(task.taskId));
    for (let i = 0; i + 1 < attempts.length; i += 2) write.zadd(to.attempts(task.taskId), String(attempts[i + 1]), attempts[i] as Buffer);
    write.zadd(set.replace(from.base, to.base), 0, member);
    if (task.status === TaskStatus.PENDING && task.nextAttemptAt !== null) write.zadd(to.queue(task.targetKey), task.nextAttemptAt, task.taskId);
    if (task.status === TaskStatus.IN_FLIGHT) write.zadd(to.leases, task.leaseExpiresAt ?? 0, task.taskId);
    if (expiring !== null) write.zadd(to.expiring, expiring, task.taskId);
    if (callback !== null) write.zadd(to.callbacks, callback, task.taskId);
    write.zadd(to.targets, 0, task.targetKey);
  });
  const drop = client.pipeline();
  for (const { task, member, set } of moving) {
    drop.hdel(from.records, task.taskId);
    drop.hdel(from.taskData, task.taskId);
    drop.hdel(from.idem, task.idempotencyKey);
    drop.del(from.attempts(task.taskId));
    drop.zrem(set, member);
    drop.zrem(from.queue(task.targetKey), task.taskId);
    drop.zrem(from.leases, task.taskId);
    drop.zrem(from.expiring, task.taskId);
    drop.zrem(from.callbacks, task.taskId);
  }
  await execAll(drop);
}

/** Sets a part's status counts from its listing sets, and each gate's in-flight count from its leases. */
async function recount(client: RedisClient, k: PartitionKeys): Promise<void> {
  const sizes = client.pipeline();
  sizes.zcard(k.live);
  sizes.zcard(k.leases);
  for (const status of TERMINAL_STATUSES) sizes.zcard(k.status(status));
  const [live, leased, ...ended] = (await execAll(sizes)) as number[];
  const counts: Record<string, number> = { [TaskStatus.PENDING]: (live ?? 0) - (leased ?? 0), [TaskStatus.IN_FLIGHT]: leased ?? 0 };
  TERMINAL_STATUSES.forEach((status, i) => (counts[status] = ended[i] ?? 0));
  await client.del(k.counts);
  await client.hset(k.counts, counts);
  const inFlight = new Map<string, number>();
  const ids = await client.zrange(k.leases, 0, -1);
  for (let i = 0; i < ids.length; i += CHUNK) {
    const replies = (await runScript(client, 'getTasks', [k.idem], [k.base, 'id', ...ids.slice(i, i + CHUNK)])) as (TaskReply | null)[];
    for (const reply of replies) {
      if (reply === null) continue;
      const { targetKey } = decodeTask(reply, tenantOfPartition(k.partition));
      inFlight.set(targetKey, (inFlight.get(targetKey) ?? 0) + 1);
    }
  }
  await runScript(client, 'migrateGates', [k.legacyHolds, k.targets], [k.base, ...[...inFlight].flat()]);
}

/** Deletes what is left of a part no longer used (its tasks moved out) and takes it off the registry. */
async function dropPartition(client: RedisClient, globals: GlobalKeys, registry: PartitionRegistry, k: PartitionKeys): Promise<void> {
  const targets = await client.zrange(k.targets, 0, -1);
  const keys = [k.records, k.taskData, k.idem, k.ready, k.targets, k.claimOrder, k.leases, k.expiring, k.callbacks, k.counts, k.gateSettings, ...k.listings];
  for (const target of targets) keys.push(k.gate(target), k.queue(target));
  // One DEL per key: single-key commands, which a pipeline may send on Redis Cluster as on one server.
  const pipeline = client.pipeline();
  for (const key of keys) pipeline.del(key);
  await execAll(pipeline);
  await client.srem(globals.partitions, k.partition);
  registry.forget(k.partition);
}

