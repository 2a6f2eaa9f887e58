import type { RedisClient } from './connection.js';
import { PartitionKeys } from './keys.js';

/** How long a read of the partition registry is trusted before it is read again, in ms. */
export const PARTITION_REFRESH_MS = 1_000;

/**
 * The registry of partitions (`{prefix}:partitions`, a set) and a cached copy of it.
 *
 * Claims, due times, lease expiries and overall counts span every partition, but a script runs in one slot,
 * so the store visits the partitions one by one. A partition is registered (SADD, once per process) before
 * its first task is written, so a task is never in a partition nobody will visit. The cached list is read
 * again when older than {@link PARTITION_REFRESH_MS}; a partition another instance creates meanwhile is
 * also learnt from its wake-up message, so a new tenant's first task waits at most that long.
 */
export class PartitionRegistry {
  readonly #known = new Set<string>();
  readonly #keys = new Map<string, PartitionKeys>();
  readonly #registered = new Set<string>();
  #readAt = -Infinity;
  #reading: Promise<void> | undefined;

  constructor(
    private readonly client: RedisClient,
    private readonly prefix: string,
    private readonly key: string,
  ) {}

  /** The keys of a partition (made once per partition). */
  keysOf(partition: string): PartitionKeys {
    let keys = this.#keys.get(partition);
    if (keys === undefined) {
      keys = new PartitionKeys(this.prefix, partition);
      this.#keys.set(partition, keys);
    }
    return keys;
  }

  /** The keys of every partition, from the cache when it is fresh. */
  async all(): Promise<PartitionKeys[]> {
    return (await this.list()).map((partition) => this.keysOf(partition));
  }

  /** Registers the partitions not yet registered by this process. */
  async register(partitions: Iterable<string>): Promise<void> {
    const fresh = [...new Set(partitions)].filter((p) => !this.#registered.has(p));
    if (fresh.length === 0) return;
    await this.client.sadd(this.key, ...fresh);
    for (const partition of fresh) {
      this.#registered.add(partition);
      this.#known.add(partition);
    }
  }

  /** A partition taken off the registry (its tasks moved to others: see sub-partition-migration.ts). */
  forget(partition: string): void {
    this.#known.delete(partition);
    this.#registered.delete(partition);
  }

  /** A partition named by another instance's wake-up. */
  learn(partition: string): void {
    this.#known.add(partition);
  }

  /** Every partition, from the cache when it is fresh. */
  async list(): Promise<string[]> {
    if (performance.now() - this.#readAt > PARTITION_REFRESH_MS) {
      // Concurrent callers share one read.
      this.#reading ??= this.#read().finally(() => (this.#reading = undefined));
      await this.#reading;
    }
    return [...this.#known];
  }

  async #read(): Promise<void> {
    const members = await this.client.smembers(this.key);
    for (const partition of members) {
      this.#known.add(partition);
      this.#registered.add(partition);
    }
    this.#readAt = performance.now();
  }
}
