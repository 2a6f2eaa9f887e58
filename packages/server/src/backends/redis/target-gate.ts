import type { RedisClient } from './connection.js';
import type { Page } from '../../domain/task.js';
import { decodeCursor, encodeCursor } from '../../store/cursor.js';
import { DUE_COUNT_CAP } from '../../store/store.js';
import type { PageRequest, TargetLimits, TargetRef, TargetView } from '../../store/store.js';
import { partitionOfTenant } from './keys.js';
import type { PartitionKeys } from './keys.js';
import type { PartitionRegistry } from './partitions.js';
import { runScript } from './scripts.js';
import { encodeValue } from './task-codec.js';

// The gate of each target (its hold, its limits, its token bucket and its in-flight count), kept in one hash per
// target, `gate:<target>`, by the scripts (lua/includes/target-gate.lua): the writes operators make, and the reads
// they see it through.

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
    /** The wake-up arguments (channel, message) of a script run in a partition. */
    private readonly wakeOf: (keys: PartitionKeys) => readonly [channel: string, message: string],
  ) {}

  /** Holds a target until `until`, or its current hold's end if that is later. */
  async hold(target: TargetRef, until: number, now: number): Promise<void> {
    const k = await this.#changing(target);
    await runScript(this.client, 'holdTarget', [k.ready, k.targets], [k.base, target.targetKey, String(until), String(now)]);
  }

  /** Ends a target's hold; wakes other instances when its queue is claimable now. */
  async release(target: TargetRef, now: number): Promise<void> {
    const k = await this.#changing(target);
    await runScript(this.client, 'releaseTarget', [k.ready], [k.base, target.targetKey, String(now), ...this.wakeOf(k)]);
  }

  /** Sets a target's rate and in-flight limits (see `Store.limitTarget`). */
  async limit(target: TargetRef, limits: TargetLimits, now: number): Promise<void> {
    checkLimits(limits);
    const k = await this.#changing(target);
    const rate = limits.ratePerSecond;
    const values = [encodeValue(rate), encodeValue(rate === null ? null : limits.burst), encodeValue(limits.maxInFlight)];
    await runScript(this.client, 'limitTarget', [k.ready, k.targets], [k.base, target.targetKey, ...values, String(now), ...this.wakeOf(k)]);
  }

  /** One target's view as of `now`; undefined for a target never named, held or limited. */
  async get(target: TargetRef, now: number): Promise<TargetView | undefined> {
    const [entry] = await this.#read(target.tenantId, now, ['one', target.targetKey]);
    return entry === undefined ? undefined : viewOf(target.tenantId, entry, now);
  }

  /** A page of a tenant's targets in byte order of key, each as of `now`; the cursor is the last key shown. */
  async list(tenantId: string, page: PageRequest, now: number): Promise<Page<TargetView>> {
    const start = page.cursor === undefined ? '-' : `(${decodeCursor('targets', page.cursor, 's')[0] as string}`;
    const entries = await this.#read(tenantId, now, ['page', start, page.limit + 1]);
    const items = entries.slice(0, page.limit).map((entry) => viewOf(tenantId, entry, now));
    const last = items[items.length - 1];
    return entries.length > page.limit && last !== undefined ? { items, nextCursor: encodeCursor('targets', [last.targetKey]) } : { items };
  }

  async #changing(target: TargetRef): Promise<PartitionKeys> {
    const partition = partitionOfTenant(target.tenantId);
    await this.registry.register([partition]);
    return this.registry.keysOf(partition);
  }

  async #read(tenantId: string, now: number, selection: readonly (string | number)[]): Promise<TargetEntry[]> {
    const k = this.registry.keysOf(partitionOfTenant(tenantId));
    return (await runScript(this.client, 'readTargets', [k.targets], [k.base, String(now), DUE_COUNT_CAP, ...selection])) as TargetEntry[];
  }
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
