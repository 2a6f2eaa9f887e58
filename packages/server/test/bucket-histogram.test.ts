import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { BucketHistogram } from '../src/metrics/bucket-histogram.js';

const BUCKETS = [0.005, 0.01, 0.025, 0.1, 1, 30];
/** Below the first bound, on a bound (a bucket's bound is inclusive), between bounds, above the last, zero. */
const VALUES = [0.001, 0.005, 0.007, 0.01, 0.3, 1, 29.9, 30, 31, 1e6, 0];

/** The same histogram twice, each alone in a registry: prom-client's, and ours. */
function pair(labelled: boolean) {
  const theirs = new Registry();
  const ours = new Registry();
  const options = { name: 'retry_x_seconds', help: 'A test histogram.', buckets: BUCKETS };
  return labelled
    ? {
        theirs,
        ours,
        prom: new Histogram({ ...options, labelNames: ['status'] as const, registers: [theirs] }),
        bucket: new BucketHistogram({ ...options, labelNames: ['status'] as const, registers: [ours] }),
      }
    : { theirs, ours, prom: new Histogram({ ...options, registers: [theirs] }), bucket: new BucketHistogram({ ...options, registers: [ours] }) };
}

describe('BucketHistogram', () => {
  it("scrapes as prom-client's Histogram does, byte for byte, unlabelled", async () => {
    const { theirs, ours, prom, bucket } = pair(false);
    // Before any observation: the unlabelled series is there with zeros, in both.
    expect(await ours.metrics()).toBe(await theirs.metrics());
    for (const v of VALUES) {
      prom.observe(v);
      bucket.observe(v);
    }
    const text = await ours.metrics();
    expect(text).toBe(await theirs.metrics());
    expect(text).toContain('retry_x_seconds_bucket{le="0.005"} 3\n');
    expect(text).toContain('retry_x_seconds_bucket{le="30"} 9\n');
    expect(text).toContain('retry_x_seconds_bucket{le="+Inf"} 11\n');
    expect(text).toContain('retry_x_seconds_count 11\n');
  });

  it("scrapes as prom-client's Histogram does, labelled: a series appears once observed", async () => {
    const { theirs, ours, prom, bucket } = pair(true);
    const succeeded = bucket.labels('SUCCEEDED');
    const failed = bucket.labels('FAILED');
    bucket.labels('CANCELLED');
    expect(await ours.metrics()).toBe(await theirs.metrics());
    VALUES.forEach((v, i) => {
      const status = i % 3 === 0 ? 'FAILED' : 'SUCCEEDED';
      prom.labels(status).observe(v);
      (status === 'FAILED' ? failed : succeeded).observe(v);
    });
    // prom-client lists series in the order they were first observed; the first value was a FAILED one.
    const text = await ours.metrics();
    expect(text.replace(/^.*SUCCEEDED.*\n/gm, '')).toBe((await theirs.metrics()).replace(/^.*SUCCEEDED.*\n/gm, ''));
    expect(text.replace(/^.*FAILED.*\n/gm, '')).toBe((await theirs.metrics()).replace(/^.*FAILED.*\n/gm, ''));
    expect(text).toContain('retry_x_seconds_count{status="FAILED"} 4\n');
    expect(text).not.toContain('CANCELLED');
  });

  it("gives get() as prom-client's: each value's labels with its series' labels", async () => {
    const { prom, bucket } = pair(true);
    for (const v of VALUES) {
      prom.labels('SUCCEEDED').observe(v);
      bucket.labels('SUCCEEDED').observe(v);
    }
    const strip = (values: { labels: object; value: number; metricName?: string }[]) => values.map(({ labels, value, metricName }) => ({ labels, value, metricName }));
    const [a, b] = [await prom.get(), await bucket.get()];
    expect(strip(b.values)).toEqual(strip(a.values));
    expect({ ...b, values: [] }).toEqual({ name: a.name, help: a.help, type: a.type, aggregator: a.aggregator, values: [] });
  });

  it('forgets every observation on reset, and refuses what prom-client refuses', async () => {
    const { theirs, ours, prom, bucket } = pair(false);
    bucket.observe(0.5);
    bucket.reset();
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(() => bucket.observe(Number.NaN)).toThrow(TypeError);
    expect(() => prom.observe(Number.NaN)).toThrow(TypeError);
    expect(() => bucket.labels('x')).toThrow('retry_x_seconds has no label');
    expect(() => pair(true).bucket.observe(1)).toThrow('observe through labels(value)');
    expect(() => new BucketHistogram({ name: 'retry_y', help: 'y', buckets: [1, 0.5], registers: [] })).toThrow('buckets must be in increasing order');
  });
});
