import type { Metric, Registry } from 'prom-client';

/** Options of {@link BucketHistogram}: prom-client's `Histogram` options that the service uses. */
export interface BucketHistogramOptions<L extends string> {
  name: string;
  help: string;
  /** Upper bounds, in increasing order; `+Inf` is implied. */
  buckets: readonly number[];
  /** At most one label, given by value to {@link BucketHistogram.labels}. */
  labelNames?: readonly [L];
  registers: Registry[];
}

/** One series: what a labelled child is, and what `observe` of an unlabelled histogram writes to. */
export interface BucketSeries {
  observe(value: number): void;
}

/** A value of prom-client's export, before `get()` merges `sharedLabels` into `labels`. */
interface ExportValue {
  labels: Record<string, string | number>;
  sharedLabels: Record<string, string>;
  value: number;
  metricName: string;
  exemplar: null | undefined;
}

class Series implements BucketSeries {
  /** Per bucket, the values at or below its bound and above the one before (not cumulative). */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    private readonly bounds: Float64Array,
    readonly labels: Record<string, string>,
  ) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    this.sum += value;
    this.count++;
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= (bounds[i] as number)) {
        (this.counts[i] as number)++;
        return;
      }
    }
  }
}

/**
 * A Prometheus histogram for the values the service observes on every attempt (an attempt's duration, its schedule
 * lag, a task's age, a store call's time): `observe` adds to a typed array, where prom-client's `Histogram` validates and
 * hashes the labels and builds a closure on every call (about 0.3 µs each measured alone, more on the service's hot
 * path: 2 µs a task in W4's profile). Its scrape text is prom-client's, byte for byte (`bucket-histogram.test.ts`
 * compares them): it is registered in a prom-client `Registry` and exported by it.
 *
 * A labelled histogram shows a series once it has been observed, as prom-client's does; an unlabelled one always.
 */
export class BucketHistogram<L extends string = never> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly name: string;
  readonly help: string;
  private readonly bounds: Float64Array;
  private readonly labelName: L | undefined;
  private readonly series = new Map<string, Series>();
  private readonly unlabelled: Series | undefined;

  constructor(options: BucketHistogramOptions<L>) {
    this.name = options.name;
    this.help = options.help;
    const sorted = options.buckets.every((b, i) => i === 0 || b > (options.buckets[i - 1] as number));
    if (!sorted) throw new Error(`${options.name}: buckets must be in increasing order, got ${options.buckets.join(', ')}`);
    this.bounds = Float64Array.from(options.buckets);
    this.labelName = options.labelNames?.[0];
    if (this.labelName === undefined) {
      this.unlabelled = new Series(this.bounds, {});
      this.series.set('', this.unlabelled);
    }
    // prom-client's registry takes any object that exports as its metrics do (`get`, `getForPromString`).
    for (const registry of options.registers) registry.registerMetric(this as unknown as Metric);
  }

  /** Observes `value` on the unlabelled histogram. */
  observe(value: number): void {
    if (this.unlabelled === undefined) throw new Error(`${this.name} has the label ${this.labelName}: observe through labels(value)`);
    this.unlabelled.observe(value);
  }

  /** The series whose label has `value` (kept: ask once and hold it). */
  labels(value: string): BucketSeries {
    if (this.labelName === undefined) throw new Error(`${this.name} has no label`);
    let series = this.series.get(value);
    if (series === undefined) {
      series = new Series(this.bounds, { [this.labelName]: value });
      this.series.set(value, series);
    }
    return series;
  }

  /** Forgets every observation, as prom-client's `reset`. */
  reset(): void {
    for (const series of this.series.values()) {
      series.counts.fill(0);
      series.sum = 0;
      series.count = 0;
    }
  }

  /** The export the registry formats (prom-client's `getForPromString`). */
  async getForPromString(): Promise<{ name: string; help: string; type: 'histogram'; values: ExportValue[]; aggregator: 'sum' }> {
    const values: ExportValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const series of this.series.values()) {
      if (series !== this.unlabelled && series.count === 0) continue;
      let cumulative = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        cumulative += series.counts[i] as number;
        values.push({ labels: { le: this.bounds[i] as number }, sharedLabels: series.labels, value: cumulative, metricName: bucket, exemplar: null });
      }
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: series.labels, value: series.count, metricName: bucket, exemplar: null },
        { labels: {}, sharedLabels: series.labels, value: series.sum, metricName: `${this.name}_sum`, exemplar: undefined },
        { labels: {}, sharedLabels: series.labels, value: series.count, metricName: `${this.name}_count`, exemplar: undefined },
      );
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** The metric as prom-client's `get` gives it: each value's labels with its series' labels. */
  async get(): Promise<{ name: string; help: string; type: 'histogram'; aggregator: 'sum'; values: { labels: Record<string, string | number>; value: number; metricName: string }[] }> {
    const data = await this.getForPromString();
    return {
      ...data,
      values: data.values.map(({ labels, sharedLabels, value, metricName }) => ({ labels: { ...labels, ...sharedLabels }, value, metricName })),
    };
  }
}
