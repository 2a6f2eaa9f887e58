import type { PendingPage } from '../../store/oldest-pending.js';
import type { RedisClient } from './connection.js';
import { createdAtOfSortKey, type PartitionKeys } from './keys.js';
import { runScript } from './scripts.js';

/**
 * One page of a partition's live tasks, oldest first (`read-oldest-pending.lua`), for `AdminReads.oldestPending`:
 * `after` is the last listing key of the previous page (undefined for the first), `size` the most listing keys read.
 * The creation time of each PENDING task found is its listing key's.
 */
export async function readOldestPendingPage(client: RedisClient, k: PartitionKeys, after: string | undefined, size: number): Promise<PendingPage<string>> {
  const from = after === undefined ? '-' : `(${after}`;
  const [read, last, ...found] = (await runScript(client, 'readOldestPending', [k.live, k.records], [from, size])) as [number, string | null, ...string[]];
  const pending: { targetKey: string; createdAt: number }[] = [];
  for (let i = 0; i + 1 < found.length; i += 2) pending.push({ targetKey: found[i] as string, createdAt: createdAtOfSortKey(found[i + 1] as string) });
  return { pending, read, next: last ?? undefined };
}
