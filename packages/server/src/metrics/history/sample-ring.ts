/** One column of a {@link SampleRing} read oldest first: a number per sample, null where it had none. */
export type SampleColumn = (number | null)[];

/** What {@link SampleRing.read} returns: the samples' times, oldest first, and each column beside them. */
export interface SampleRingView {
  at: number[];
  columns: Map<string, SampleColumn>;
}

/** Bytes of one 64-bit number: each sample costs this for its time and for each column. */
const BYTES_PER_VALUE = 8;

/**
 * The last `capacity` samples of a few named series (columns), in fixed memory: a sample's time and one number per
 * column, in `Float64Array`s allocated once per column, the oldest sample overwritten by the next. A column a sample
 * does not name reads null there (NaN inside). At most `maxColumns` columns: a sample's new names past that are left
 * out (so a flood of names cannot grow it), and a column with no value in any kept sample is dropped, freeing room.
 *
 * @example
 * ```ts
 * const ring = new SampleRing({ capacity: 360, maxColumns: 20 });
 * ring.push(Date.now(), { succeeded: 12.5, failed: 0 });
 * ring.read(); // { at: [t], columns: Map { 'succeeded' => [12.5], 'failed' => [0] } }
 * ```
 */
export class SampleRing {
  /** Most samples kept. */
  readonly capacity: number;
  /** Most columns kept. */
  readonly maxColumns: number;
  private readonly times: Float64Array;
  private readonly columns = new Map<string, { values: Float64Array; lastPush: number }>();
  /** Samples pushed since the ring was made; the next one goes to `pushes % capacity`. */
  private pushes = 0;

  constructor(options: { capacity: number; maxColumns: number }) {
    if (!Number.isInteger(options.capacity) || options.capacity < 1) {
      throw new RangeError(`capacity must be an integer >= 1, got ${options.capacity}`);
    }
    if (!Number.isInteger(options.maxColumns) || options.maxColumns < 0) {
      throw new RangeError(`maxColumns must be an integer >= 0, got ${options.maxColumns}`);
    }
    this.capacity = options.capacity;
    this.maxColumns = options.maxColumns;
    this.times = new Float64Array(options.capacity);
  }

  /** Samples held now (at most {@link capacity}). */
  get size(): number {
    return Math.min(this.pushes, this.capacity);
  }

  /** The memory its arrays hold now, in bytes: 8 per sample slot for the times and 8 more per column. */
  get bytes(): number {
    return this.capacity * BYTES_PER_VALUE * (1 + this.columns.size);
  }

  /** Adds a sample taken at `at` (epoch ms) with a value for each column it names; the others read null there. */
  push(at: number, values: Readonly<Record<string, number>>): void {
    const slot = this.pushes % this.capacity;
    this.pushes++;
    this.times[slot] = at;
    for (const [name, column] of this.columns) {
      const value = values[name];
      if (value === undefined) {
        column.values[slot] = NaN;
        // Nothing in any kept sample: the column goes, and its room with it.
        if (this.pushes - column.lastPush >= this.capacity) this.columns.delete(name);
      } else {
        column.values[slot] = value;
        column.lastPush = this.pushes;
      }
    }
    for (const [name, value] of Object.entries(values)) {
      if (this.columns.has(name) || this.columns.size >= this.maxColumns) continue;
      const column = { values: new Float64Array(this.capacity).fill(NaN), lastPush: this.pushes };
      column.values[slot] = value;
      this.columns.set(name, column);
    }
  }

  /** The samples held, oldest first; only the columns `names` keeps when it is given. */
  read(names?: (name: string) => boolean): SampleRingView {
    const size = this.size;
    const first = this.pushes - size;
    const at: number[] = [];
    for (let i = first; i < this.pushes; i++) at.push(this.times[i % this.capacity]!);
    const columns = new Map<string, SampleColumn>();
    for (const [name, column] of this.columns) {
      if (names !== undefined && !names(name)) continue;
      const values: SampleColumn = [];
      for (let i = first; i < this.pushes; i++) {
        const value = column.values[i % this.capacity]!;
        values.push(Number.isNaN(value) ? null : value);
      }
      columns.set(name, values);
    }
    return { at, columns };
  }
}
