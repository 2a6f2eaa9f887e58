import { TaskStatus } from '@retryd/core';
import type { RedisClient } from './connection.js';
import type { AttemptLog, Page, RetryTask } from '../../domain/task.js';
import { TARGET_SCAN_BUDGET, type PageRequest, type TaskQuery } from '../../store/store.js';
import { decodeCursor, encodeCursor, pageOf } from '../../store/cursor.js';
import { createdAtOfSortKey, sortKeyOf, taskIdOfSortKey } from './keys.js';
import type { PartitionKeys } from './keys.js';
import { decodeAttempt } from './task-codec.js';

const ALL_STATUSES = Object.values(TaskStatus);

/**
 * One page of tasks, newest first, through the listing sets (never a scan):
 *
 * 1. one `ZRANGE … BYLEX REV LIMIT 0 n` per status asked for (every status when none), on the per-status sets, all
 *    in one MULTI so a task moving between two of them is seen in exactly one;
 * 2. a merge of those ordered lists, newest first, cut to `n`;
 * 3. one script call that reads those tasks.
 *
 * Without a policy or target filter `n` is `limit + 1` (the extra entry only tells that a next page exists) and one
 * round makes the page. With one, no set is kept per policy or per target (each would cost every task about 160
 * bytes of memory and every transition two more writes; layout 4 dropped the per-policy sets), so rounds go on down
 * the listing keeping the matching tasks until the page is full, the listing ends, or {@link TARGET_SCAN_BUDGET}
 * tasks were examined: then the page may be short, even empty, and `nextCursor` continues after the last task
 * examined.
 *
 * A task that changed status between steps 1 and 3 so that it no longer matches the filter is left out of the
 * page (which is then shorter than `limit`; `nextCursor` still continues after it). The cursor is the last
 * listing key of the page, as `(createdAt, taskId)`, so it stays valid whatever happens to that task.
 */
export async function listTasks(
  client: RedisClient,
  keys: PartitionKeys,
  query: TaskQuery,
  readTasks: (ids: readonly string[]) => Promise<(RetryTask | undefined)[]>,
): Promise<Page<RetryTask>> {
  let start = '+';
  if (query.cursor !== undefined) {
    const [createdAt, taskId] = decodeCursor('tasks', query.cursor, 'nu') as [number, string];
    start = `(${sortKeyOf(createdAt, taskId)}`;
  }
  const wanted = statusesOf(query.status);
  const statuses = wanted.length === 0 ? ALL_STATUSES : wanted;
  const allowed = new Set<string>(statuses);
  const matches = (task: RetryTask | undefined): task is RetryTask =>
    task !== undefined &&
    allowed.has(task.status) &&
    (query.policyId === undefined || task.policyId === query.policyId) &&
    (query.targetKey === undefined || task.targetKey === query.targetKey);
  const cursorAt = (member: string) => encodeCursor('tasks', [createdAtOfSortKey(member), taskIdOfSortKey(member)]);

  if (query.policyId === undefined && query.targetKey === undefined) {
    const listed = await walkListing(client, keys, statuses, start, query.limit + 1);
    const page = listed.slice(0, query.limit);
    const items = (await readTasks(page.map(taskIdOfSortKey))).filter(matches);
    const last = page[page.length - 1];
    if (listed.length <= query.limit || last === undefined) return { items };
    return { items, nextCursor: cursorAt(last) };
  }

  const found: { task: RetryTask; member: string }[] = [];
  let examined = 0;
  for (;;) {
    const round = Math.min(Math.max(query.limit + 1, 100), TARGET_SCAN_BUDGET - examined);
    const listed = await walkListing(client, keys, statuses, start, round);
    const tasks = await readTasks(listed.map(taskIdOfSortKey));
    for (const [i, member] of listed.entries()) {
      examined += 1;
      const task = tasks[i];
      if (matches(task)) found.push({ task, member });
      if (found.length > query.limit) {
        const page = found.slice(0, query.limit);
        return { items: page.map((f) => f.task), nextCursor: cursorAt(page[page.length - 1]!.member) };
      }
    }
    const last = listed[listed.length - 1];
    if (listed.length < round || last === undefined) return { items: found.map((f) => f.task) };
    if (examined >= TARGET_SCAN_BUDGET) return { items: found.map((f) => f.task), nextCursor: cursorAt(last) };
    start = `(${last}`;
  }
}

/** The first `count` listing members after `start` of the sets a query walks, newest first. */
async function walkListing(client: RedisClient, keys: PartitionKeys, statuses: readonly TaskStatus[], start: string, count: number): Promise<string[]> {
  const multi = client.multi();
  for (const status of statuses) multi.zrange(keys.status(status), start, '-', 'BYLEX', 'REV', 'LIMIT', 0, count);
  const replies = (await multi.exec()) ?? [];
  const members: string[] = [];
  for (const [error, reply] of replies) {
    if (error !== null) throw error;
    members.push(...(reply as string[]));
  }
  // Bytewise, as Redis orders members (JavaScript's < compares UTF-16 units, which differs beyond the BMP).
  return members
    .map((member) => ({ member, bytes: Buffer.from(member, 'utf8') }))
    .sort((a, b) => Buffer.compare(b.bytes, a.bytes))
    .slice(0, count)
    .map(({ member }) => member);
}

/** A task's attempt log, oldest first: the `attempts:<id>` set by score (attempt number) after the cursor's. */
export async function listAttempts(client: RedisClient, keys: PartitionKeys, taskId: string, page: PageRequest): Promise<Page<AttemptLog>> {
  const after = page.cursor === undefined ? 0 : (decodeCursor('attempts', page.cursor, 'n')[0] as number);
  const members = await client.zrangebyscore(keys.attempts(taskId), `(${after}`, '+inf', 'LIMIT', 0, page.limit + 1);
  return pageOf(members.map(decodeAttempt), page.limit, (a) => encodeCursor('attempts', [a.attemptNumber]));
}

/** The distinct statuses of a filter; none (absent or empty) means every status. */
function statusesOf(status: TaskQuery['status']): TaskStatus[] {
  if (status === undefined) return [];
  return [...new Set(typeof status === 'string' ? [status] : status)];
}
