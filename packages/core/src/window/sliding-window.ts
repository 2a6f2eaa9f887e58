import { integerAtLeast, numberAbove } from '../validation/field-rules.js';
import { expectObject, type SnapshotFail } from '../validation/invalid-snapshot-error.js';

/** Slices per window: a counted event is forgotten between 90% and 100% of the window after it happened. */
export const WINDOW_BUCKETS = 10;

/** One slice of a {@link SlidingWindow}: its number (`floor(time / bucketMs)`) and its counters. */
export type WindowBucket<K extends string> = { index: number } & Record<K, number>;

/** A window as stored: its geometry and the buckets still inside it, oldest first. JSON-safe. */
export interface WindowSnapshot<K extends string> {
  windowMs: number;
  bucketCount: number;
  buckets: WindowBucket<K>[];
}

/**
 * Named counters over a sliding time window, kept in `bucketCount` fixed slices of `windowMs / bucketCount`
 * ms each (the shape of Finagle's WindowedAdder and resilience4j's time-based window). At time `t` the window
 * holds the current slice and the `bucketCount − 1` before it, so an event counts for at least
 * `windowMs − bucketMs` and less than `windowMs`. Memory and cost are bounded by `bucketCount`, not by traffic.
 * Times are `Clock.now()` values passed in by the owner; the window keeps no clock of its own.
 */
export class SlidingWindow<K extends string> {
  /** Width of one slice in ms. */
  readonly bucketMs: number;
  private buckets: WindowBucket<K>[] = [];

  /**
   * @param windowMs - length of the window in ms, `> 0`
   * @param keys - the counters each slice holds
   * @param bucketCount - slices per window (default {@link WINDOW_BUCKETS})
   */
  constructor(
    readonly windowMs: number,
    private readonly keys: readonly K[],
    readonly bucketCount: number = WINDOW_BUCKETS,
  ) {
    this.bucketMs = windowMs / bucketCount;
  }

  /** Adds to the counters of the slice that holds `now`. */
  add(now: number, counts: Readonly<Partial<Record<K, number>>>): void {
    const index = Math.floor(now / this.bucketMs);
    this.prune(index);
    let bucket = this.buckets[this.buckets.length - 1];
    // A time behind the newest slice (a restored snapshot written by a host whose clock ran ahead) is added
    // to the newest slice: keeping slices in order matters more than a few ms of attribution.
    if (bucket === undefined || bucket.index < index) {
      bucket = this.emptyBucket(index);
      this.buckets.push(bucket);
    }
    const counters = bucket as Record<K, number>;
    for (const key of this.keys) counters[key] += counts[key] ?? 0;
  }

  /** Sums of each counter over the window that ends at `now`. */
  totals(now: number): Record<K, number> {
    const sums = this.emptyBucket(0) as Record<K, number>;
    for (const bucket of this.live(now)) {
      for (const key of this.keys) sums[key] += bucket[key];
    }
    return sums;
  }

  /** Forgets everything. */
  clear(): void {
    this.buckets = [];
  }

  /** The window at `now` as plain data, without the slices that have slid out. Does not change the window. */
  snapshot(now: number): WindowSnapshot<K> {
    return {
      windowMs: this.windowMs,
      bucketCount: this.bucketCount,
      buckets: this.live(now).map((b) => ({ ...b })),
    };
  }

  /**
   * Replaces the contents with a snapshot's slices when the snapshot has the same geometry, and empties the
   * window otherwise (slices of another width cannot be mapped onto these without inventing counts; losing at
   * most one window of history after a configuration change is harmless). Returns whether it restored.
   */
  restore(snapshot: WindowSnapshot<K>): boolean {
    const same = snapshot.windowMs === this.windowMs && snapshot.bucketCount === this.bucketCount;
    this.buckets = same ? snapshot.buckets.map((b) => ({ ...b })) : [];
    return same;
  }

  private live(now: number): WindowBucket<K>[] {
    const oldest = Math.floor(now / this.bucketMs) - this.bucketCount + 1;
    return this.buckets.filter((b) => b.index >= oldest);
  }

  private prune(index: number): void {
    const oldest = index - this.bucketCount + 1;
    while (this.buckets.length > 0 && (this.buckets[0] as WindowBucket<K>).index < oldest) this.buckets.shift();
  }

  private emptyBucket(index: number): WindowBucket<K> {
    const bucket: Record<string, number> = { index };
    for (const key of this.keys) bucket[key] = 0;
    return bucket as WindowBucket<K>;
  }
}

/**
 * Checks an untrusted {@link WindowSnapshot}: geometry, integer slice numbers in strictly increasing order,
 * and counters that are integers `>= 0`. Relations between counters are the owner's to check.
 *
 * @param value - the candidate
 * @param field - its path in the enclosing snapshot, e.g. `window`
 * @param keys - the counters each slice must hold
 * @param fail - reports the first broken rule
 */
export function parseWindowSnapshot<K extends string>(
  value: unknown,
  field: string,
  keys: readonly K[],
  fail: SnapshotFail,
): WindowSnapshot<K> {
  const w = expectObject(value, field, fail);
  const positive = numberAbove(0);
  if (!positive.test(w.windowMs)) fail(`${field}.windowMs`, positive.rule, w.windowMs);
  const count = integerAtLeast(1);
  if (!count.test(w.bucketCount)) fail(`${field}.bucketCount`, count.rule, w.bucketCount);
  if (!Array.isArray(w.buckets)) return fail(`${field}.buckets`, 'an array', w.buckets);
  if (w.buckets.length > (w.bucketCount as number)) {
    fail(`${field}.buckets.length`, `<= bucketCount (${w.bucketCount as number})`, w.buckets.length);
  }
  const counter = integerAtLeast(0);
  let previous = -Infinity;
  const buckets = (w.buckets as unknown[]).map((item, i) => {
    const path = `${field}.buckets[${i}]`;
    const b = expectObject(item, path, fail);
    if (!Number.isSafeInteger(b.index) || (b.index as number) <= previous) {
      fail(`${path}.index`, i === 0 ? 'an integer' : `an integer > the previous slice's index (${previous})`, b.index);
    }
    previous = b.index as number;
    const bucket: Record<string, number> = { index: previous };
    for (const key of keys) {
      if (!counter.test(b[key])) fail(`${path}.${key}`, counter.rule, b[key]);
      bucket[key] = b[key] as number;
    }
    return bucket as WindowBucket<K>;
  });
  return { windowMs: w.windowMs as number, bucketCount: w.bucketCount as number, buckets };
}
