import type { RedisClient } from './connection.js';
import type { Page } from '../../domain/task.js';
import { decodeCursor, encodeCursor } from '../../store/cursor.js';
import { DUE_COUNT_CAP } from '../../store/store.js';
import type { PageRequest, TargetLimits, TargetRef, TargetView } from '../../store/store.js';
import { fanOut, runEach } from './fan-out.js';
import type { PartitionKeys } from './keys.js';
import type { PartitionRegistry } from './partitions.js';
import { queueScript } from './scripts.js';
import type { SubPartitions } from './sub-partitions.js';
import { encodeValue } from './task-codec.js';

// The gate of each target (its hold, its limits, its token bucket and its in-flight count), kept in one hash per
// target, `gate:<target>`, by the scripts (lua/includes/target-gate.lua): the writes operators make, and the reads
// they see it through.
//
// A tenant with several sub-partitions has a target queue in each, and a script runs in one slot, so each
// sub-partition keeps a gate of the target's queue there: a hold is written to every one (exact: a held target is
// held everywhere); a limit is shared out (the rate and burst divided evenly, the in-flight limit split into whole
// shares that add up to it, each at least 1 so no part's tasks wait for ever: a limit below the number of
// sub-partitions admits one at a time in each). The limits as given stay one per target in the home partition's
// `gate-settings`, which is what operators see, with the counts summed over the parts.

/**
 * The fields of a gate hash, in the order `read-targets.lua` returns them. GATE_FIELDS of
 * `lua/includes/target-gate.lua` must be the same list (test/redis-lua-fields.test.ts checks it).
 */
export const GATE_FIELDS = ['held', 'rate', 'burst', 'maxInFlight', 'tokens', 'tokensAt', 'inFlight'] as const;

type GateField = (typeof GATE_FIELDS)[number];

/**
 * The gates of every partition's targets: the changes operators make (a change may be the first thing a partition
 * holds, so it registers the partition) and the views they read.
 */
export class TargetGates {
  constructor(
    private readonly client: RedisClient,
    private readonly registry: PartitionRegistry,
    private readonly subPartitions: SubPartitions,
    /** The wake-up arguments (channel, message) of a script run in a partition. */
    private readonly wakeOf: (keys: PartitionKeys) => readonly [channel: string, message: string],
  ) {}

  /** Holds a target until `until`, or its current hold's end if that is later. */
  async hold(target: TargetRef, until: number, now: number): Promise<void> {
    const parts = await this.#changing(target);
    const calls = parts.map((k) => ({ keys: [k.ready, k.targets], args: [k.base, target.targetKey, String(until), String(now)] }));
    await runEach(this.client, 'holdTarget', calls);
  }

  /** Ends a target's hold; wakes other instances when its queue is claimable now. */
  async release(target: TargetRef, now: number): Promise<void> {
    const parts = await this.#changing(target);
    const calls = parts.map((k) => ({ keys: [k.ready], args: [k.base, target.targetKey, String(now), ...this.wakeOf(k)] }));
    await runEach(this.client, 'releaseTarget', calls);
  }

  /** Sets a target's rate and in-flight limits (see `Store.limitTarget`), shared out over its sub-partitions. */
  async limit(target: TargetRef, limits: TargetLimits, now: number): Promise<void> {
    checkLimits(limits);
    const parts = await this.#changing(target);
    if (parts.length > 1) {
      const home = parts[0] as PartitionKeys;
      const { ratePerSecond, burst, maxInFlight } = limits;
      if (ratePerSecond === null && maxInFlight === null) await this.client.hdel(home.gateSettings, target.targetKey);
      else await this.client.hset(home.gateSettings, target.targetKey, JSON.stringify([ratePerSecond, ratePerSecond === null ? null : burst, maxInFlight]));
    }
    const calls = parts.map((k, i) => {
      const share = shareOf(limits, i, parts.length);
      const rate = share.ratePerSecond;
      const values = [encodeValue(rate), encodeValue(rate === null ? null : share.burst), encodeValue(share.maxInFlight)];
      return { keys: [k.ready, k.targets], args: [k.base, target.targetKey, ...values, String(now), ...this.wakeOf(k)] };
    });
    await runEach(this.client, 'limitTarget', calls);
  }

  /** One target's view as of `now`; undefined for a target never named, held or limited. */
  async get(target: TargetRef, now: number): Promise<TargetView | undefined> {
    const [view] = await this.#read(target.tenantId, now, ['one', target.targetKey], Infinity);
    return view;
  }

  /** A page of a tenant's targets in byte order of key, each as of `now`; the cursor is the last key shown. */
  async list(tenantId: string, page: PageRequest, now: number): Promise<Page<TargetView>> {
    const start = page.cursor === undefined ? '-' : `(${decodeCursor('targets', page.cursor, 's')[0] as string}`;
    const views = await this.#read(tenantId, now, ['page', start, page.limit + 1], page.limit + 1);
    const items = views.slice(0, page.limit);
    const last = items[items.length - 1];
    return views.length > page.limit && last !== undefined ? { items, nextCursor: encodeCursor('targets', [last.targetKey]) } : { items };
  }

  async #changing(target: TargetRef): Promise<PartitionKeys[]> {
    const parts = this.subPartitions.keysOfTenant(target.tenantId);
    await this.registry.register(parts.map((k) => k.partition));
    return parts;
  }

  /** The views of the targets a selection names, in byte order of key, at most `limit`, merged over the parts. */
  async #read(tenantId: string, now: number, selection: readonly (string | number)[], limit: number): Promise<TargetView[]> {
    const parts = this.subPartitions.keysOfTenant(tenantId);
    const args = (k: PartitionKeys) => [k.base, String(now), DUE_COUNT_CAP, ...selection];
    const replies = (await fanOut(this.client, parts, (pipeline, k) => queueScript(pipeline, 'readTargets', [k.targets], args(k)))) as TargetEntry[][];
    if (parts.length === 1) return (replies[0] ?? []).map((entry) => viewOf(tenantId, entry, now));
    const merged = new Map<string, TargetView>();
    for (const entries of replies) {
      for (const entry of entries) {
        const view = viewOf(tenantId, entry, now);
        const seen = merged.get(view.targetKey);
        merged.set(view.targetKey, seen === undefined ? view : mergeViews(seen, view));
      }
    }
    const keys = [...merged.keys()].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))).slice(0, limit);
    const settings = keys.length === 0 ? [] : await this.client.hmget((parts[0] as PartitionKeys).gateSettings, ...keys);
    return keys.map((key, i) => {
      const view = merged.get(key) as TargetView;
      const [ratePerSecond, burst, maxInFlight] = JSON.parse(settings[i] ?? '[null,null,null]') as [number | null, number | null, number | null];
      return { ...view, ratePerSecond, burst: ratePerSecond === null ? null : (burst ?? 1), maxInFlight };
    });
  }
}

/** One target's view over two sub-partitions' parts: counts added, the earliest times kept. */
function mergeViews(a: TargetView, b: TargetView): TargetView {
  const earliest = (x: number | null, y: number | null) => (x === null ? y : y === null ? x : Math.min(x, y));
  return {
    ...a,
    heldUntil: a.heldUntil ?? b.heldUntil,
    nextDueAt: earliest(a.nextDueAt, b.nextDueAt),
    inFlight: a.inFlight + b.inFlight,
    throttledUntil: earliest(a.throttledUntil, b.throttledUntil),
    dueTasks: Math.min(DUE_COUNT_CAP, a.dueTasks + b.dueTasks),
  };
}

/** Sub-partition `index`'s share of a target's limits among `count` (see the module comment). */
export function shareOf(limits: TargetLimits, index: number, count: number): TargetLimits {
  if (count === 1) return limits;
  const { ratePerSecond, burst, maxInFlight } = limits;
  const whole = maxInFlight === null ? null : Math.floor(maxInFlight / count) + (index < maxInFlight % count ? 1 : 0);
  return {
    ratePerSecond: ratePerSecond === null ? null : ratePerSecond / count,
    burst: ratePerSecond === null ? null : Math.max(1, (burst ?? 1) / count),
    maxInFlight: whole === null ? null : maxInFlight === 0 ? 0 : Math.max(1, whole),
  };
}

/** What `read-targets.lua` replies per target: its key, its gate as stored, its queue's head, due count and next token. */
type TargetEntry = [target: string, gate: (string | null)[], head: string | null, due: number, throttledUntil: string | null];

function viewOf(tenantId: string, [targetKey, stored, head, due, throttledUntil]: TargetEntry, now: number): TargetView {
  const field = (name: GateField): number | null => {
    const text = stored[GATE_FIELDS.indexOf(name)];
    return text === null || text === undefined ? null : Number(text);
  };
  const held = field('held');
  const rate = field('rate');
  return {
    tenantId,
    targetKey,
    ratePerSecond: rate,
    burst: rate === null ? null : (field('burst') ?? 1),
    maxInFlight: field('maxInFlight'),
    // A hold whose end has passed may stay in the gate; it holds nothing.
    heldUntil: held !== null && held > now ? held : null,
    nextDueAt: head === null ? null : Number(head),
    inFlight: field('inFlight') ?? 0,
    throttledUntil: throttledUntil === null ? null : Number(throttledUntil),
    dueTasks: Number(due),
  };
}

/** The limits a gate can apply: the port says what they mean, the boundary validates them; these would break the bucket. */
function checkLimits(limits: TargetLimits): void {
  const { ratePerSecond, burst, maxInFlight } = limits;
  if (ratePerSecond !== null && !(Number.isFinite(ratePerSecond) && ratePerSecond > 0)) {
    throw new RangeError(`Expected \`ratePerSecond\` to be null or a finite number above 0; got ${ratePerSecond}.`);
  }
  if (burst !== null && !(Number.isFinite(burst) && burst >= 1)) {
    throw new RangeError(`Expected \`burst\` to be null or a finite number of at least 1; got ${burst}.`);
  }
  if (maxInFlight !== null && !(Number.isSafeInteger(maxInFlight) && maxInFlight >= 0)) {
    throw new RangeError(`Expected \`maxInFlight\` to be null or a whole number of at least 0; got ${maxInFlight}.`);
  }
}
