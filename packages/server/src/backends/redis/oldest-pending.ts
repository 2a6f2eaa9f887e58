import type { PendingPage } from '../../store/oldest-pending.js';
import type { RedisClient } from './connection.js';
import { fanOut } from './fan-out.js';
import { createdAtOfSortKey, type PartitionKeys } from './keys.js';
import { queueScript } from './scripts.js';

/** What `read-oldest-pending.lua` replies: keys read, the last key read, then target, listing key pairs. */
type PageReply = [number, string | null, ...string[]];

/**
 * One page of a tenant's live tasks, oldest first (`read-oldest-pending.lua` in each of its partitions), for
 * `AdminReads.oldestPending`: `after` is the last listing key of the previous page (undefined for the first), `size`
 * the most listing keys read in each partition. The creation time of each PENDING task found is its listing key's.
 *
 * With several sub-partitions the page ends at the earliest last key among the partitions that read a full page
 * (what lies beyond it in the others is read again by the next page), so the merged walk stays oldest first.
 */
export async function readOldestPendingPage(
  client: RedisClient,
  parts: readonly PartitionKeys[],
  after: string | undefined,
  size: number,
): Promise<PendingPage<string>> {
  const from = after === undefined ? '-' : `(${after}`;
  const replies = (await fanOut(client, parts, (pipeline, k) => queueScript(pipeline, 'readOldestPending', [k.live, k.records], [from, size]))) as PageReply[];
  const full = replies.filter(([read]) => read >= size).map(([, last]) => last as string);
  const bound = full.length === 0 ? undefined : full.sort(bytewise)[0];
  const found: { targetKey: string; key: string }[] = [];
  let read = 0;
  let next: string | undefined;
  for (const [count, last, ...pairs] of replies) {
    read += count;
    if (last !== null && (next === undefined || bytewise(last, next) > 0)) next = last;
    for (let i = 0; i + 1 < pairs.length; i += 2) {
      const key = pairs[i + 1] as string;
      if (bound === undefined || bytewise(key, bound) <= 0) found.push({ targetKey: pairs[i] as string, key });
    }
  }
  if (parts.length > 1) found.sort((a, b) => bytewise(a.key, b.key));
  const pending = found.map(({ targetKey, key }) => ({ targetKey, createdAt: createdAtOfSortKey(key) }));
  return { pending, read, next: bound ?? next };
}

function bytewise(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
