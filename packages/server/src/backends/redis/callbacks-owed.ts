import type { CallbackOutbox, OwedCallback } from '../../store/callback-outbox.js';
import type { RedisClient } from './connection.js';
import { fanOut, runEach, type ScriptCall, type SkipPartition } from './fan-out.js';
import { partitionOfTenant, tenantOfPartition } from './keys.js';
import type { PartitionKeys } from './keys.js';
import type { PartitionRegistry } from './partitions.js';
import type { SubPartitions } from './sub-partitions.js';
import { redisFailure } from './errors.js';
import { translateFailures } from '../../store/failure-boundary.js';

/**
 * The Redis store's {@link CallbackOutbox}: each partition's sorted set `callbacks` (keys.ts), added to by the scripts
 * that end a task with a callback (`owe_callback` in lua/includes/task-state.lua), read here by range (one ZRANGE per
 * partition, in one round trip) and taken from by `settle-callbacks.lua`, guarded by the score read.
 */
export class RedisCallbacksOwed implements CallbackOutbox {
  readonly #client: RedisClient;
  readonly #registry: PartitionRegistry;
  readonly #skip: SkipPartition | undefined;

  readonly #subs: SubPartitions;

  constructor(client: RedisClient, registry: PartitionRegistry, subs: SubPartitions, skip?: SkipPartition) {
    this.#subs = subs;
    this.#client = client;
    this.#registry = registry;
    this.#skip = skip;
  }

  async owed(limit: number): Promise<OwedCallback[]> {
    if (limit <= 0) return [];
    const partitions = await this.#registry.all();
    if (partitions.length === 0) return [];
    const replies = await fanOut(this.#client, partitions, (pipeline, k) => pipeline.zrange(k.callbacks, 0, limit - 1, 'WITHSCORES'), this.#skip);
    const owed: OwedCallback[] = [];
    replies.forEach((reply, i) => {
      const tenantId = tenantOfPartition((partitions[i] as PartitionKeys).partition);
      const flat = (reply ?? []) as string[];
      for (let at = 0; at + 1 < flat.length; at += 2) owed.push({ tenantId, taskId: flat[at] as string, owedAt: Number(flat[at + 1]) });
    });
    // Earliest first over the partitions, each of which answered its earliest `limit`.
    return owed.sort((a, b) => a.owedAt - b.owedAt).slice(0, limit);
  }

  async settle(callbacks: readonly OwedCallback[]): Promise<number> {
    if (callbacks.length === 0) return 0;
    const byPartition = new Map<string, (string | number)[]>();
    const partitions = await this.#subs.locate(callbacks);
    for (const [i, { tenantId, taskId, owedAt }] of callbacks.entries()) {
      // A task purged meanwhile owes nothing; with one sub-partition its tenant's is the one to ask.
      const partition = partitions[i] ?? partitionOfTenant(tenantId);
      let args = byPartition.get(partition);
      if (args === undefined) byPartition.set(partition, (args = []));
      args.push(taskId, String(owedAt));
    }
    const calls = [...byPartition].map(([partition, args]): ScriptCall => ({ keys: [this.#registry.keysOf(partition).callbacks], args }));
    const replies = await runEach(this.#client, 'settleCallbacks', calls, this.#skip);
    return replies.reduce<number>((sum, reply) => sum + Number(reply ?? 0), 0);
  }
}

translateFailures(RedisCallbacksOwed, redisFailure);
