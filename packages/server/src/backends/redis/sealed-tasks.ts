import type { RedisClient } from './connection.js';
import type { Page, RetryTask } from '../../domain/task.js';
import { decodeCursor, encodeCursor, pageOf } from '../../store/cursor.js';
import { sameSealedParts, type SealedParts, type SealedTaskStore } from '../../store/sealed-task-store.js';
import type { PageRequest, TaskRef, TransitionResult } from '../../store/store.js';
import { translateError, redisFailure } from './errors.js';
import { sortKeyOf, taskIdOfSortKey, tenantOfPartition, type PartitionKeys } from './keys.js';
import type { PartitionRegistry } from './partitions.js';
import type { SubPartitions } from './sub-partitions.js';
import { runScript } from './scripts.js';
import { dataWithSealedParts, sealedPartsOfData } from './task-codec.js';
import { translateFailures } from '../../store/failure-boundary.js';

/** Reads tasks of one tenant by id, in order (undefined where there is none). */
export type ReadTasks = (tenantId: string, taskIds: readonly string[]) => Promise<(RetryTask | undefined)[]>;

/** Bytewise, as Redis orders members (JavaScript's `<` compares UTF-16 units, which differs beyond the BMP). */
const bytewise = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/**
 * The Redis store's {@link SealedTaskStore}.
 *
 * The walk visits the partitions in byte order and, in each, its tasks in listing-key order (`createdAt`, then id:
 * see `sortKeyOf`) through the per-status listing sets, every set read in one MULTI: a task is in exactly one of them
 * at that moment, and its listing key never changes, so a task that changes status during the walk is still met
 * exactly once. The data JSON is not parsed by any script, so the walk returns every task; the caller skips those
 * without secrets.
 *
 * A re-seal reads the task's data JSON, compares its headers and body with the expected ones (as values), builds the
 * new JSON from the one it read, and writes it with `reseal-task.lua` only if the stored text is still the one read:
 * the record and the indexes are not touched.
 */
export class RedisSealedTasks implements SealedTaskStore {
  constructor(
    private readonly client: RedisClient,
    private readonly registry: PartitionRegistry,
    private readonly readTasks: ReadTasks,
    private readonly subs: SubPartitions,
  ) {}

  async walkSealedTasks(page: PageRequest): Promise<Page<RetryTask>> {
    return translated(() => this.#walk(page));
  }

  async resealTask(ref: TaskRef, expected: SealedParts, next: SealedParts): Promise<TransitionResult> {
    return translated(() => this.#reseal(ref, expected, next));
  }

  async #walk(page: PageRequest): Promise<Page<RetryTask>> {
    const cursor = page.cursor === undefined ? undefined : (decodeCursor('sealed-tasks', page.cursor, 'ss') as [string, string]);
    const partitions = (await this.registry.list()).filter((p) => cursor === undefined || bytewise(p, cursor[0]) >= 0).sort(bytewise);
    const found: RetryTask[] = [];
    for (const partition of partitions) {
      const keys = this.registry.keysOf(partition);
      let start = cursor !== undefined && partition === cursor[0] ? `(${cursor[1]}` : '-';
      for (;;) {
        // One more than the page holds: it tells that a next page exists.
        const wanted = page.limit + 1 - found.length;
        const members = await this.#range(keys, start, wanted);
        const tasks = await this.readTasks(tenantOfPartition(partition), members.map(taskIdOfSortKey));
        for (const task of tasks) if (task !== undefined) found.push(task);
        if (found.length > page.limit) return pageOf(found, page.limit, (task) => cursorOf(this.subs.of(task), task));
        if (members.length < wanted) break;
        start = `(${members[members.length - 1] as string}`;
      }
    }
    return { items: found };
  }

  async #reseal(ref: TaskRef, expected: SealedParts, next: SealedParts): Promise<TransitionResult> {
    const partition = await this.subs.locateOne(ref.tenantId, ref.taskId);
    if (partition === undefined) return { kind: 'not_found' };
    const dataKey = this.registry.keysOf(partition).taskData;
    const read = await this.client.hget(dataKey, ref.taskId);
    if (read === null) return { kind: 'not_found' };
    const sealed = sealedPartsOfData(read);
    let written = 0;
    if (sameSealedParts({ headers: sealed.headers as SealedParts['headers'], body: sealed.body }, expected)) {
      // Every other field as it was, in the form it was written in (layout 5's array or layout 4's object).
      const json = dataWithSealedParts(read, next.headers, next.body);
      written = Number(await runScript(this.client, 'resealTask', [dataKey], [read, json, ref.taskId]));
    }
    const [task] = await this.readTasks(ref.tenantId, [ref.taskId]);
    if (task === undefined || written === -1) return { kind: 'not_found' };
    return { kind: written === 1 ? 'applied' : 'refused', task };
  }

  /**
   * Up to `count` listing keys of a partition after `start` (`-`, or `(` and a key), in byte order, from every listing
   * set at one instant.
   */
  async #range(keys: PartitionKeys, start: string, count: number): Promise<string[]> {
    const multi = this.client.multi();
    for (const set of keys.listings) multi.zrange(set, start, '+', 'BYLEX', 'LIMIT', 0, count);
    const members: string[] = [];
    for (const [error, reply] of (await multi.exec()) ?? []) {
      if (error !== null) throw error;
      members.push(...(reply as string[]));
    }
    return members.sort(bytewise).slice(0, count);
  }
}

/** Runs an operation with the driver's errors turned into the store's (an unreachable server: STORE_UNAVAILABLE). */
async function translated<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw translateError(error);
  }
}

/** The walk's cursor after a task: its partition and its listing key. */
function cursorOf(partition: string, task: RetryTask): string {
  return encodeCursor('sealed-tasks', [partition, sortKeyOf(task.createdAt, task.taskId)]);
}

translateFailures(RedisSealedTasks, redisFailure);
