import type { Page } from '../../domain/task.js';
import { decodeCursor, encodeCursor } from '../../store/cursor.js';
import type { TargetView } from '../../store/store.js';

/** A row of `list-targets.sql` as pg returns it (bigint counts as numbers, see `connection.ts`). */
export interface TargetRow {
  tenant_id: string;
  target_key: string;
  rate_per_second: number | null;
  burst: number | null;
  max_in_flight: number | null;
  held_until: number | null;
  throttled_until: number | null;
  next_due_at: number | null;
  in_flight: number;
  due_tasks: number;
}

/** A `list-targets` row as the port's view of a target. */
export function targetFromRow(row: TargetRow): TargetView {
  return {
    tenantId: row.tenant_id,
    targetKey: row.target_key,
    ratePerSecond: row.rate_per_second,
    burst: row.burst,
    maxInFlight: row.max_in_flight,
    heldUntil: row.held_until,
    throttledUntil: row.throttled_until,
    nextDueAt: row.next_due_at,
    inFlight: row.in_flight,
    dueTasks: row.due_tasks,
  };
}

/** Where a `listTargets` page starts: the key its cursor names (the first target of that page), '' for the first. */
export function targetPageStart(cursor: string | undefined): string {
  return cursor === undefined ? '' : (decodeCursor('targets', cursor, 's')[0] as string);
}

/**
 * A page of at most `limit` targets from `targets`, read with one row more (list-targets.sql): the extra row's key,
 * the first of the next page, is the next cursor.
 */
export function targetPage(targets: TargetView[], limit: number): Page<TargetView> {
  const next = targets[limit];
  if (next === undefined) return { items: targets };
  return { items: targets.slice(0, limit), nextCursor: encodeCursor('targets', [next.targetKey]) };
}
