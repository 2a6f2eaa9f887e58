import type { Clock } from '@retryd/core';
import type { ClaimRooms, TargetRef } from '../store/store.js';
import { SlotShares } from './slot-shares.js';

/**
 * How often, at most, an engine with a few slots free (fewer than it waits for to claim a batch) claims anyway while
 * tasks are due, in ms: a tenant or target holding all the slots it may (a hanging target) leaves the rest to others,
 * whose tasks are found this way within this time even when no enqueue or timer wakes the engine.
 */
export const PROBE_MS = 50;

/** Options of {@link ClaimPacing}. */
export interface ClaimPacingOptions {
  concurrency: number;
  /** Claim a batch once this many slots are free (the engine's `claimLowWater`). */
  lowWater: number;
  /** `EngineOptions.maxInFlightPerTenant` and `maxInFlightPerTarget`, resolved. */
  perTenant: number;
  perTarget: number;
  clock: Clock;
  /** A probe's time came: the engine pumps. */
  onProbe: () => void;
}

/**
 * When the engine claims, now that its slots are shared between tenants and targets ({@link SlotShares}): in batches
 * of `lowWater` free slots as before, or, while one tenant or target holds all it may, of `lowWater` more than it is
 * kept from (so that its claims stay batches); never again at once after a claim its rooms kept short (nothing
 * changed until a slot is freed); at once when a slot freed by another than the one held at its bound can go to its
 * next task; and, while tasks are due and a few slots are free, at least every {@link PROBE_MS}.
 *
 * The engine tells it of every attempt that ends (`ended`), every wake-up (`woken`) and every claim (`started`,
 * `finished`), and asks it before each (`claimNow`). O(1) but for `finished`, which looks over the claim's rooms.
 */
export class ClaimPacing {
  /** The slots each tenant and target holds, and the room each has left (`ClaimOptions.rooms`). */
  readonly shares: SlotShares;
  private readonly roomLowWater: number;
  /** The last claim had rooms: one tenant or target holds many slots, and the next claim waits for `roomLowWater`. */
  private roomBound = false;
  /** The last claim came back short because of its rooms while tasks were due, and no slot was freed since. */
  private shortOnRoom = false;
  /** The last claim's rooms, when they kept a tenant or target out (a room of 0); else undefined. */
  private capped: ClaimRooms | undefined;
  /** Attempts ended so far: a claim that came back short on room knows whether a slot was freed while it ran. */
  private attemptsEnded = 0;
  /** The next claim need not wait for a batch: a probe's time came, or a freed slot can go to another's task. */
  private due = false;
  private timer: AbortController | undefined;
  /** When the last claim started (engine clock): the probe waits `PROBE_MS` from it. */
  private lastClaimAt = -Infinity;

  constructor(private readonly options: ClaimPacingOptions) {
    this.shares = new SlotShares({ concurrency: options.concurrency, perTenant: options.perTenant, perTarget: options.perTarget });
    // A tenant or target that holds all it may has `reserve` fewer slots than the engine: it is claimed for in batches
    // of `lowWater` when the others leave it that much (unless the reserve is most of the slots).
    const withReserve = options.lowWater + this.shares.reserve;
    this.roomLowWater = withReserve <= options.concurrency ? withReserve : options.lowWater;
  }

  /** `task`'s attempt ended (or it ended without one): its slot is free. */
  ended(task: TargetRef): void {
    this.shares.release(task);
    this.attemptsEnded++;
    this.shortOnRoom = false;
    // While a tenant or target is held at its bound, the others run in the slots it may not take: a slot one of them
    // frees goes to their next task at once, not after the wait for a batch's worth (the bound one's still waits).
    const capped = this.capped;
    if (capped !== undefined && !isCapped(capped, task) && this.shares.admits(task)) this.due = true;
  }

  /** Work may be due that the last claim did not see (an enqueue, a timer). */
  woken(): void {
    this.shortOnRoom = false;
  }

  /**
   * Whether to claim now with `free` slots free and `busy` in flight or promised; when not, a probe is armed (at most
   * one at a time) to claim within `PROBE_MS` of the last claim.
   */
  claimNow(free: number, busy: number): boolean {
    if (this.due || busy === 0) return true;
    if (!this.shortOnRoom && free >= (this.roomBound ? this.roomLowWater : this.options.lowWater)) return true;
    this.armProbe();
    return false;
  }

  /** A claim starts; returns what `finished` is given back. */
  started(): number {
    this.due = false;
    this.lastClaimAt = this.options.clock.now();
    return this.attemptsEnded;
  }

  /**
   * A claim ended: `rooms` its last pass's, `claimed` of `limit`, `moreDue` whether tasks are still due, `woken` whether
   * a wake-up came while it ran, `startedWith` what `started` returned.
   */
  finished(rooms: ClaimRooms | undefined, claimed: number, limit: number, moreDue: boolean, woken: boolean, startedWith: number): void {
    this.roomBound = rooms !== undefined;
    this.capped = rooms !== undefined && keepsOut(rooms) ? rooms : undefined;
    // Due tasks the rooms kept out are not a reason to claim again at once: nothing changed until a slot is freed (one
    // freed while this claim ran has changed it).
    this.shortOnRoom = rooms !== undefined && !woken && moreDue && claimed < limit && this.attemptsEnded === startedWith;
  }

  /** Drops the probe's timer (the engine stops). */
  close(): void {
    this.timer?.abort();
  }

  private armProbe(): void {
    if (this.timer !== undefined) return;
    const timer = new AbortController();
    this.timer = timer;
    const { clock } = this.options;
    clock.sleep(Math.max(0, this.lastClaimAt + PROBE_MS - clock.now()), timer.signal).then(
      () => {
        this.timer = undefined;
        // A claim began meanwhile: the probe waits from that one.
        if (clock.now() - this.lastClaimAt < PROBE_MS) return this.armProbe();
        this.due = true;
        this.shortOnRoom = false;
        this.options.onProbe();
      },
      () => undefined,
    );
  }
}

/** Whether `rooms` keep some tenant or target out of a claim altogether (a room of 0). */
function keepsOut(rooms: ClaimRooms): boolean {
  for (const room of rooms.tenants.values()) if (room === 0) return true;
  for (const byKey of rooms.targets.values()) for (const room of byKey.values()) if (room === 0) return true;
  return false;
}

/** Whether `rooms` keep `ref`'s tenant or target out of a claim (a room of 0). */
function isCapped(rooms: ClaimRooms, ref: TargetRef): boolean {
  return rooms.tenants.get(ref.tenantId) === 0 || rooms.targets.get(ref.tenantId)?.get(ref.targetKey) === 0;
}
