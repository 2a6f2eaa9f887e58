import type { ClaimRooms, TargetRef } from './store.js';

// The claim's sharing rule (see `ClaimOptions`) as pure functions, for the stores that apply it in TypeScript
// (SQLite, and Redis across tenants). PostgreSQL applies the same rule in `claim-due.sql`, and Redis within a
// tenant in `claim-due.lua`; the conformance suite holds all three to it. So are a claim's rooms (`ClaimRooms`).

/** Orders queues as the ring does: `(tenantId, targetKey)` ascending (both are ASCII, so byte order), wrapping. */
export function compareTargets(a: TargetRef, b: TargetRef): number {
  if (a.tenantId !== b.tenantId) return a.tenantId < b.tenantId ? -1 : 1;
  if (a.targetKey !== b.targetKey) return a.targetKey < b.targetKey ? -1 : 1;
  return 0;
}

/**
 * `queues` in ring order: ascending, starting with the first one after `after` and wrapping round (a queue equal
 * to `after` comes last). Returns a new array.
 */
export function ringOrder<T extends TargetRef>(queues: readonly T[], after?: TargetRef): T[] {
  const sorted = [...queues].sort(compareTargets);
  if (after === undefined) return sorted;
  const start = sorted.findIndex((q) => compareTargets(q, after) > 0);
  return start <= 0 ? sorted : [...sorted.slice(start), ...sorted.slice(0, start)];
}

/**
 * How many ready queues a claim of `limit` considers (the first ones in ring order), and how many slots each is
 * offered: `ceil(limit / considered)`.
 */
export function claimShares(readyQueues: number, limit: number): { considered: number; share: number } {
  const considered = Math.min(readyQueues, limit);
  return { considered, share: considered === 0 ? 0 : Math.ceil(limit / considered) };
}

/**
 * Deals up to `limit` items from each queue's list in round-robin order: every list's first item (lists in the order
 * given), then every list's second, and so on.
 */
export function dealRoundRobin<T>(perQueue: readonly (readonly T[])[], limit: number): T[] {
  const dealt: T[] = [];
  for (let round = 0; dealt.length < limit; round++) {
    let any = false;
    for (const items of perQueue) {
      if (round >= items.length) continue;
      any = true;
      dealt.push(items[round] as T);
      if (dealt.length === limit) break;
    }
    if (!any) break;
  }
  return dealt;
}

/** The most a claim with `rooms` may take of `queue`: the lower of its own room and its tenant's (Infinity: no rooms). */
export function roomOf(rooms: ClaimRooms | undefined, queue: TargetRef): number {
  if (rooms === undefined) return Infinity;
  const tenant = rooms.tenants.get(queue.tenantId) ?? rooms.tenant;
  const target = rooms.targets.get(queue.tenantId)?.get(queue.targetKey) ?? rooms.target;
  return Math.min(tenant, target);
}

/**
 * The first `limit` of `dealt` (in dealt order) once the items of each tenant beyond its room in `rooms` are left out:
 * a claim with rooms deals every queue's offer, then cuts. `dealt` itself when nothing is left out.
 */
export function keepWithinRooms<T>(dealt: T[], rooms: ClaimRooms, limit: number, tenantOf: (item: T) => string): T[] {
  const taken = new Map<string, number>();
  let kept = 0;
  const within = dealt.filter((item) => {
    if (kept === limit) return false;
    const tenantId = tenantOf(item);
    const n = (taken.get(tenantId) ?? 0) + 1;
    taken.set(tenantId, n);
    if (n > (rooms.tenants.get(tenantId) ?? rooms.tenant)) return false;
    kept++;
    return true;
  });
  return within.length === dealt.length ? dealt : within;
}
