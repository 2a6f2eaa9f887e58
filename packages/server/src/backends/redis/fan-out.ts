import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from './connection.js';
import { queueScript, runScript } from './scripts.js';
import type { ScriptName } from './scripts.js';
import { RedisUnavailableError, translateError } from './errors.js';

/** One script call: its keys and arguments. */
export interface ScriptCall {
  keys: readonly string[];
  args: readonly (string | number)[];
}

/**
 * Called with the error of each partition left out of a cross-partition read or claim because its master cannot be
 * reached (Redis Cluster only, see {@link fanOut}).
 */
export type SkipPartition = (error: unknown) => void;

/**
 * Runs one call of a script per partition: alone when there is one (the usual case, one tenant), else all in
 * one round trip ({@link fanOut}, and its `skip`). Each call is atomic in its partition; calls in different
 * partitions are not atomic together — on Redis Cluster they may run on different nodes. The first failure is
 * thrown after every call has run.
 */
export async function runEach(client: RedisClient, name: ScriptName, calls: readonly ScriptCall[], skip?: SkipPartition): Promise<unknown[]> {
  if (calls.length === 0) return [];
  if (calls.length === 1) {
    const [call] = calls as [ScriptCall];
    return [await runScript(client, name, call.keys, call.args)];
  }
  return fanOut(client, calls, (pipeline, call) => queueScript(pipeline, name, call.keys, call.args), skip);
}

/**
 * Sends one command per item, each on the keys of one partition, in one round trip, and returns their replies in
 * order, or the first error once every command has run. On one server they share a pipeline. On Redis Cluster a
 * pipeline may only hold keys served by one node, and partitions are spread over the masters, so each item gets a
 * pipeline of its own and all are sent at once: the client writes each to its slot's master, and the replies
 * come back in parallel (still one round trip of latency).
 *
 * With `skip`, on Redis Cluster, an item whose master cannot be reached (STORE_UNAVAILABLE: a master down or failing
 * over) replies `undefined` and its error goes to `skip`, so work on the other masters goes on; it still fails when
 * every item fails, or on any other error. On one server every partition shares one connection: nothing is skipped.
 */
export async function fanOut<T>(
  client: RedisClient,
  items: readonly T[],
  queue: (pipeline: ChainableCommander, item: T) => void,
  skip?: SkipPartition,
): Promise<unknown[]> {
  if (!client.isCluster) {
    const pipeline = client.pipeline();
    for (const item of items) queue(pipeline, item);
    return execAll(pipeline);
  }
  const settled = await Promise.allSettled(
    items.map(async (item) => {
      const pipeline = client.pipeline();
      queue(pipeline, item);
      return (await execAll(pipeline))[0];
    }),
  );
  const failures = settled.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as unknown] : []));
  const skippable = skip !== undefined && failures.length < items.length && failures.every((e) => translateError(e) instanceof RedisUnavailableError);
  if (failures.length > 0 && !skippable) throw failures[0];
  for (const error of failures) skip?.(translateError(error));
  return settled.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : undefined));
}

/** The replies of a pipeline or MULTI, or its first error. */
export async function execAll(pipeline: ChainableCommander): Promise<unknown[]> {
  const replies = (await pipeline.exec()) ?? [];
  const failed = replies.find(([error]) => error !== null);
  if (failed !== undefined) throw failed[0];
  return replies.map(([, reply]) => reply);
}

/** Indices of `items` grouped by partition, in first-seen order. */
export function groupByPartition<T>(items: readonly T[], partitionOf: (item: T, index: number) => string): Map<string, number[]> {
  const groups = new Map<string, number[]>();
  items.forEach((item, i) => {
    const partition = partitionOf(item, i);
    const group = groups.get(partition);
    if (group === undefined) groups.set(partition, [i]);
    else group.push(i);
  });
  return groups;
}

/**
 * Runs a batch script once per partition of `items` ({@link runEach}) and hands each item its own entry of its
 * partition's reply (scripts reply with one entry per item, in the order given), in input order.
 */
export async function runPerItem<T>(
  client: RedisClient,
  name: ScriptName,
  items: readonly T[],
  partitionOf: (item: T, index: number) => string,
  callOf: (partition: string, group: T[]) => ScriptCall,
): Promise<unknown[]> {
  const groups = [...groupByPartition(items, partitionOf).entries()];
  const replies = await runEach(client, name, groups.map(([partition, indices]) => callOf(partition, indices.map((i) => items[i] as T))));
  const perItem = new Array<unknown>(items.length);
  groups.forEach(([, indices], g) => indices.forEach((i, j) => (perItem[i] = (replies[g] as unknown[])[j])));
  return perItem;
}
