import { TERMINAL_STATUSES, TaskStatus } from '@retryd/core';
import type { RedisClient } from './connection.js';
import type { AttemptLog, Page, RetryTask } from '../../domain/task.js';
import { TARGET_SCAN_BUDGET, type PageRequest, type TaskQuery } from '../../store/store.js';
import { decodeCursor, encodeCursor, pageOf } from '../../store/cursor.js';
import { createdAtOfSortKey, sortKeyOf, taskIdOfSortKey, tenantOfPartition } from './keys.js';
import type { PartitionKeys } from './keys.js';
import { decodeAttempt } from './task-codec.js';

const ALL_STATUSES = Object.values(TaskStatus);

/**
 * One page of tasks, newest first, through the listing sets (never a scan):
 *
 * 1. one `ZRANGE … BYLEX REV LIMIT 0 n` per listing set that holds a status asked for (every set when none), all in
 *    one MULTI so a task moving between two of them is seen in exactly one: `status:<status>` for an ended status,
 *    `live` for PENDING (it holds the IN_FLIGHT tasks too, which are then left out unless asked for). IN_FLIGHT
 *    asked for without PENDING is read from `leases` instead, which holds the IN_FLIGHT tasks alone (as many as
 *    the workers hold, where `live` may hold a backlog of millions): their listing keys come from their records;
 * 2. a merge of those ordered lists, newest first, cut to `n`;
 * 3. one script call that reads those tasks.
 *
 * When every task so found matches (no policy or target filter, and `live` walked for both its statuses or not at
 * all), `n` is `limit + 1` (the extra entry only tells that a next page exists) and one round makes the page.
 * Otherwise no set is kept per policy, per target or per live status (each would cost every task about 160 bytes of
 * memory and every transition two more writes; layout 4 dropped the per-policy sets, layout 7 merged PENDING's and
 * IN_FLIGHT's), so rounds go on down the listing keeping the matching tasks until the page is full, the listing
 * ends, or {@link TARGET_SCAN_BUDGET} tasks were examined: then the page may be short, even empty, and `nextCursor`
 * continues after the last task examined.
 *
 * A task that changed status between steps 1 and 3 so that it no longer matches the filter is left out of the
 * page (which is then shorter than `limit`; `nextCursor` still continues after it). The cursor is the last
 * listing key of the page, as `(createdAt, taskId)`, so it stays valid whatever happens to that task.
 */
export async function listTasks(
  client: RedisClient,
  parts: readonly PartitionKeys[],
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
  const sources = parts.map((keys) => ({ keys, source: sourceOf(keys, allowed) }));
  const exact = (sources[0] as { source: ListingSource }).source.exact;
  const matches = (task: RetryTask | undefined): task is RetryTask =>
    task !== undefined &&
    allowed.has(task.status) &&
    (query.policyId === undefined || task.policyId === query.policyId) &&
    (query.targetKey === undefined || task.targetKey === query.targetKey);
  const cursorAt = (member: string) => encodeCursor('tasks', [createdAtOfSortKey(member), taskIdOfSortKey(member)]);
  const walk = async (from: string, count: number) => {
    if (sources.length === 1) return walkListing(client, parts[0] as PartitionKeys, (sources[0] as { source: ListingSource }).source, from, count, readTasks);
    // A tenant's sub-partitions: each one's first `count`, merged (listing keys order tasks across partitions too).
    const walked = await Promise.all(sources.map(({ keys, source }) => walkListing(client, keys, source, from, count, readTasks)));
    return newestFirst(walked.flat()).slice(0, count);
  };

  if (query.policyId === undefined && query.targetKey === undefined && exact) {
    const listed = await walk(start, query.limit + 1);
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
    const listed = await walk(start, round);
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

/** Where a listing of some statuses finds its tasks (see {@link listTasks}). */
interface ListingSource {
  /** The listing sets to walk. */
  sets: string[];
  /** Whether the IN_FLIGHT tasks come from `leases` (IN_FLIGHT asked for, PENDING not). */
  leases: boolean;
  /** Whether every task found is in a status asked for. */
  exact: boolean;
}

function sourceOf(keys: PartitionKeys, allowed: ReadonlySet<string>): ListingSource {
  const sets = TERMINAL_STATUSES.filter((status) => allowed.has(status)).map((status) => keys.status(status));
  const pending = allowed.has(TaskStatus.PENDING);
  const inFlight = allowed.has(TaskStatus.IN_FLIGHT);
  if (pending) sets.push(keys.live);
  return { sets, leases: inFlight && !pending, exact: !pending || inFlight };
}

/** The first `count` listing members after `start` of a listing's source, newest first. */
async function walkListing(
  client: RedisClient,
  keys: PartitionKeys,
  source: ListingSource,
  start: string,
  count: number,
  readTasks: (ids: readonly string[]) => Promise<(RetryTask | undefined)[]>,
): Promise<string[]> {
  const multi = client.multi();
  for (const set of source.sets) multi.zrange(set, start, '-', 'BYLEX', 'REV', 'LIMIT', 0, count);
  if (source.leases) multi.zrange(keys.leases, 0, -1);
  const replies = (await multi.exec()) ?? [];
  const members: string[] = [];
  for (const [error, reply] of replies.slice(0, source.sets.length)) {
    if (error !== null) throw error;
    members.push(...(reply as string[]));
  }
  if (source.leases) {
    const [error, ids] = replies[source.sets.length] ?? [null, []];
    if (error !== null) throw error;
    members.push(...(await inFlightMembers(ids as string[], start, readTasks)));
  }
  return newestFirst(members).slice(0, count);
}

/** Listing keys newest first: bytewise, as Redis orders members (JavaScript's < compares UTF-16 units, which differs beyond the BMP). */
function newestFirst(members: readonly string[]): string[] {
  return members
    .map((member) => ({ member, bytes: Buffer.from(member, 'utf8') }))
    .sort((a, b) => Buffer.compare(b.bytes, a.bytes))
    .map(({ member }) => member);
}

/** The listing keys of the leased tasks `ids` that are still IN_FLIGHT and come before `start` (`+` or `(key`). */
async function inFlightMembers(
  ids: readonly string[],
  start: string,
  readTasks: (ids: readonly string[]) => Promise<(RetryTask | undefined)[]>,
): Promise<string[]> {
  const before = start === '+' ? undefined : Buffer.from(start.slice(1), 'utf8');
  const members: string[] = [];
  for (const task of ids.length === 0 ? [] : await readTasks(ids)) {
    if (task?.status !== TaskStatus.IN_FLIGHT) continue;
    const member = sortKeyOf(task.createdAt, task.taskId);
    if (before === undefined || Buffer.compare(Buffer.from(member, 'utf8'), before) < 0) members.push(member);
  }
  return members;
}

/** A task's attempt log, oldest first: the `attempts:<id>` set by score (attempt number) after the cursor's. */
export async function listAttempts(client: RedisClient, keys: PartitionKeys, taskId: string, page: PageRequest): Promise<Page<AttemptLog>> {
  const after = page.cursor === undefined ? 0 : (decodeCursor('attempts', page.cursor, 'n')[0] as number);
  const members = await client.zrangebyscore(keys.attempts(taskId), `(${after}`, '+inf', 'LIMIT', 0, page.limit + 1);
  const tenantId = tenantOfPartition(keys.partition);
  return pageOf(members.map((member) => decodeAttempt(member, tenantId, taskId)), page.limit, (a) => encodeCursor('attempts', [a.attemptNumber]));
}

/** The distinct statuses of a filter; none (absent or empty) means every status. */
function statusesOf(status: TaskQuery['status']): TaskStatus[] {
  if (status === undefined) return [];
  return [...new Set(typeof status === 'string' ? [status] : status)];
}
