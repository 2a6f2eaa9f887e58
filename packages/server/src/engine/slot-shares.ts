import type { ClaimRooms, TargetRef } from '../store/store.js';

/** The bounds {@link SlotShares} shares an engine's dispatch slots by. */
export interface SlotLimits {
  /** The engine's dispatch slots (`EngineOptions.concurrency`). */
  concurrency: number;
  /** Most slots one tenant may hold (`EngineOptions.maxInFlightPerTenant`), 1 to `concurrency`. */
  perTenant: number;
  /** Most slots one target queue may hold (`EngineOptions.maxInFlightPerTarget`), 1 to `concurrency`. */
  perTarget: number;
}

/**
 * The default of `maxInFlightPerTenant`: all of `concurrency` but a thirty-second of it, rounded down (248 of 256; all
 * of fewer than 32). The slots left over are for other tenants while one holds all it may.
 */
export function defaultPerTenant(concurrency: number): number {
  return concurrency - Math.floor(concurrency / 32);
}

/**
 * The default of `maxInFlightPerTarget`: all of `concurrency` but a sixteenth of it, rounded down (240 of 256; all of
 * fewer than 16). Lower than a tenant's, so that a tenant's other targets have slots beside one of its targets that
 * holds all it may.
 */
export function defaultPerTarget(concurrency: number): number {
  return concurrency - Math.floor(concurrency / 16);
}

/**
 * Shares one engine's dispatch slots between tenants and between target queues, as claims share their slots between
 * ready queues: counts the slots each tenant and each `(tenant, target)` queue holds (claimed and handed-off tasks whose
 * attempt has not ended), and says how many more each may take now, its **room**. Each tenant (and each queue) has a
 * fair **share**, `ceil(concurrency / n)` for the `n` tenants (queues) holding slots, counting itself, and a bound,
 * `max` (`maxInFlightPerTenant`, `maxInFlightPerTarget`). A claim first offers each one its share:
 *
 * `room = min(max, share) − held`
 *
 * and, when that claim came back short (the others had no more due), offers it more, as long as `concurrency − max`
 * slots stay free:
 *
 * `room = min(max − held, max(share − held, max − total))`
 *
 * So one tenant or target never holds more than `max`, whatever the others do; it holds more than its share only when
 * no one below theirs had a task due; and one that holds nothing finds slots free at once, up to its share. A tenant
 * whose target hangs keeps the slots it already holds until its attempts time out (an attempt on the wire is never cut
 * short), but every slot freed meanwhile goes first to those below their share.
 *
 * O(1) per attempt (`take`, `release`); {@link SlotShares.rooms} costs a pass over the tenants and queues holding
 * slots, once per claim.
 *
 * @example
 * ```ts
 * const shares = new SlotShares({ concurrency: 256, perTenant: 248, perTarget: 240 });
 * shares.take({ tenantId: 'a', targetKey: 'https://x' });
 * const rooms = shares.rooms(128, false); // undefined: nothing binds a claim of 128
 * ```
 */
export class SlotShares {
  /** Slots held by every tenant and queue. */
  total = 0;
  private readonly byTenant = new Map<string, number>();
  private readonly byQueue = new Map<string, Map<string, number>>();
  /** Queues holding at least one slot (`byQueue`'s entries). */
  private queues = 0;

  constructor(private readonly limits: SlotLimits) {}

  /** Slots kept for the others while one tenant or target holds all it may: `concurrency` less the lower bound. */
  get reserve(): number {
    return this.limits.concurrency - Math.min(this.limits.perTenant, this.limits.perTarget);
  }

  /** One more slot held by a task of `ref`. */
  take(ref: TargetRef): void {
    this.total++;
    this.byTenant.set(ref.tenantId, (this.byTenant.get(ref.tenantId) ?? 0) + 1);
    let queues = this.byQueue.get(ref.tenantId);
    if (queues === undefined) {
      queues = new Map();
      this.byQueue.set(ref.tenantId, queues);
    }
    const held = queues.get(ref.targetKey) ?? 0;
    if (held === 0) this.queues++;
    queues.set(ref.targetKey, held + 1);
  }

  /** A slot a task of `ref` held is free again. A ref holding none is ignored. */
  release(ref: TargetRef): void {
    const queues = this.byQueue.get(ref.tenantId);
    const held = queues?.get(ref.targetKey);
    if (queues === undefined || held === undefined) return;
    this.total--;
    if (held > 1) queues.set(ref.targetKey, held - 1);
    else {
      queues.delete(ref.targetKey);
      this.queues--;
      if (queues.size === 0) this.byQueue.delete(ref.tenantId);
    }
    const tenant = this.byTenant.get(ref.tenantId) ?? 1;
    if (tenant > 1) this.byTenant.set(ref.tenantId, tenant - 1);
    else this.byTenant.delete(ref.tenantId);
  }

  /** Whether a task of `ref` may take a slot now without a claim (a hand-off): its tenant and queue are below their share. */
  admits(ref: TargetRef): boolean {
    const tenant = this.byTenant.get(ref.tenantId);
    if (this.tenantRoom(tenant ?? 0, tenant !== undefined, false) < 1) return false;
    const queue = this.byQueue.get(ref.tenantId)?.get(ref.targetKey);
    return this.queueRoom(queue ?? 0, queue !== undefined, false) >= 1;
  }

  /**
   * Who a claim of `limit` may give more than its share, with the share it is offered first: every tenant and queue
   * (and, as `newTenant`/`newQueue`, any that holds nothing) whose room beyond its share is larger. Undefined when no
   * one's is: a claim then has one pass.
   */
  growth(limit: number): Growth | undefined {
    const grows = (room: (held: number, holding: boolean, grow: boolean) => number, held: number, holding: boolean): number | undefined => {
      const share = Math.min(limit, room(held, holding, false));
      return share < Math.min(limit, room(held, holding, true)) ? share : undefined;
    };
    const tenantRoom = this.tenantRoom.bind(this);
    const queueRoom = this.queueRoom.bind(this);
    const newTenant = grows(tenantRoom, 0, false);
    const newQueue = grows(queueRoom, 0, false);
    let growth: Growth | undefined;
    const tenants = new Map<string, number | null>();
    const queues = new Map<string, number | null>();
    for (const [tenantId, held] of this.byTenant) {
      const share = grows(tenantRoom, held, true);
      tenants.set(tenantId, share ?? null);
      if (share !== undefined) growth = { tenants, queues, newTenant, newQueue };
    }
    for (const [tenantId, byKey] of this.byQueue) {
      for (const [targetKey, held] of byKey) {
        const share = grows(queueRoom, held, true);
        queues.set(queueKey(tenantId, targetKey), share ?? null);
        if (share !== undefined) growth = { tenants, queues, newTenant, newQueue };
      }
    }
    if (growth === undefined && (newTenant !== undefined || newQueue !== undefined)) growth = { tenants, queues, newTenant, newQueue };
    return growth;
  }

  /**
   * The rooms of a claim of `limit` (`ClaimOptions.rooms`), each tenant's and queue's share of what is free, or with
   * `grow` also what it may take beyond it: every tenant and queue whose room is below `limit` and differs from that of
   * one holding nothing, with the rooms of those holding nothing as defaults. Undefined when no room is below `limit`:
   * such a claim is bounded by its limit alone, and the store takes its usual path.
   */
  rooms(limit: number, grow: boolean): ClaimRooms | undefined {
    const tenant = Math.min(limit, this.tenantRoom(0, false, grow));
    const target = Math.min(limit, this.queueRoom(0, false, grow));
    let tenants: Map<string, number> | undefined;
    let targets: Map<string, Map<string, number>> | undefined;
    for (const [tenantId, held] of this.byTenant) {
      const room = Math.min(limit, this.tenantRoom(held, true, grow));
      if (room !== tenant) (tenants ??= new Map()).set(tenantId, room);
    }
    for (const [tenantId, queues] of this.byQueue) {
      for (const [targetKey, held] of queues) {
        const room = Math.min(limit, this.queueRoom(held, true, grow));
        if (room === target) continue;
        targets ??= new Map();
        let byKey = targets.get(tenantId);
        if (byKey === undefined) {
          byKey = new Map();
          targets.set(tenantId, byKey);
        }
        byKey.set(targetKey, room);
      }
    }
    if (tenants === undefined && targets === undefined && tenant === limit && target === limit) return undefined;
    return { tenant, target, tenants: tenants ?? NONE, targets: targets ?? NONE };
  }

  private tenantRoom(held: number, holding: boolean, grow: boolean): number {
    return this.room(held, this.limits.perTenant, this.byTenant.size + (holding ? 0 : 1), grow);
  }

  private queueRoom(held: number, holding: boolean, grow: boolean): number {
    return this.room(held, this.limits.perTarget, this.queues + (holding ? 0 : 1), grow);
  }

  private room(held: number, max: number, sharing: number, grow: boolean): number {
    const share = Math.ceil(this.limits.concurrency / sharing);
    const beyond = grow ? Math.max(share - held, max - this.total) : share - held;
    return Math.max(0, Math.min(max - held, beyond));
  }
}

/**
 * Who a claim may give more than its share (`SlotShares.growth`): the tenants and queues (`tenantId\ntargetKey`)
 * holding slots, each with the share it is offered first when it may have more (null when it may not), and the share
 * of one holding nothing when that one may have more.
 */
export interface Growth {
  tenants: Map<string, number | null>;
  queues: Map<string, number | null>;
  newTenant: number | undefined;
  newQueue: number | undefined;
}

/** How many of `claimed` each tenant and each queue (`queueKey`) got. */
function countClaimed(claimed: readonly TargetRef[]): { byTenant: Map<string, number>; byQueue: Map<string, number> } {
  const byTenant = new Map<string, number>();
  const byQueue = new Map<string, number>();
  for (const task of claimed) {
    byTenant.set(task.tenantId, (byTenant.get(task.tenantId) ?? 0) + 1);
    const key = queueKey(task.tenantId, task.targetKey);
    byQueue.set(key, (byQueue.get(key) ?? 0) + 1);
  }
  return { byTenant, byQueue };
}

/**
 * Whether a claim that took `claimed` with everyone's shares (and came back short) is worth a second pass with the
 * larger rooms: some tenant or queue that may have more either filled its share (it may have more due) or was kept out
 * by it (a share of 0). One that took less than its share had no more due.
 */
export function worthGrowing(growth: Growth, claimed: readonly TargetRef[]): boolean {
  for (const share of growth.tenants.values()) if (share === 0) return true;
  for (const share of growth.queues.values()) if (share === 0) return true;
  const { byTenant, byQueue } = countClaimed(claimed);
  for (const [tenantId, n] of byTenant) {
    const share = growth.tenants.has(tenantId) ? growth.tenants.get(tenantId) : growth.newTenant;
    if (share !== undefined && share !== null && n >= share) return true;
  }
  for (const [key, n] of byQueue) {
    const share = growth.queues.has(key) ? growth.queues.get(key) : growth.newQueue;
    if (share !== undefined && share !== null && n >= share) return true;
  }
  return false;
}

/**
 * Whether a claim with `rooms` that took `claimed` filled some tenant's or queue's room: that one may have more due,
 * which the rooms kept back (so the claim coming back short does not mean nothing more is due).
 */
export function fillsRoom(rooms: ClaimRooms, claimed: readonly TargetRef[]): boolean {
  const { byTenant, byQueue } = countClaimed(claimed);
  for (const [tenantId, n] of byTenant) if (n >= (rooms.tenants.get(tenantId) ?? rooms.tenant)) return true;
  for (const task of claimed) {
    const n = byQueue.get(queueKey(task.tenantId, task.targetKey)) ?? 0;
    if (n >= (rooms.targets.get(task.tenantId)?.get(task.targetKey) ?? rooms.target)) return true;
  }
  return false;
}

function queueKey(tenantId: string, targetKey: string): string {
  return `${tenantId}\n${targetKey}`;
}

const NONE: ReadonlyMap<string, never> = new Map<string, never>();
