// W8 — the long run: retention keeps the store flat (../../../shared/WORKLOADS.md).
//
//   node bench/service/w8.mjs [--minutes 10] [--rate 500] [--per-tick 5] [--exhaust-every 100] [--retention 1m]
//                             [--retry-delay 1000] [--purge-interval MS] [--store sqlite|postgres|redis] [--sync full|normal]
//                             [--protection on|off] [--w4-p99 MS] [--json] [--json-file FILE]
//
// Tasks arrive at a steady 500/s (5 every 10 ms through POST /retry-tasks/batch, open loop, due at once) for 10
// minutes against a downstream (own process, flaky mode) that fails each key's first request (503) and answers 200 to
// the next: each task succeeds at its second attempt, `--retry-delay` (1 s, fixed, no jitter) after the first. One task
// in `--exhaust-every` (1%) has a key the downstream refuses every time, and exhausts its policy of 2 attempts.
// `retryd serve --retention-succeeded 1m --retention-dead-letters 1m --retention-cancelled 1m` (`--retention`) deletes
// the finished tasks once their `expiresAt` passes (the purge looks every `--purge-interval`, the service's 10 s by
// default), so the store should hold about a minute of tasks, whatever the run's length.
//
// Figures every 10 s (./lib/w8-sampler.mjs): the store's size (SQLite: database file + -wal; PostgreSQL: tasks +
// attempts with their indexes; Redis: used_memory), the service's RSS (VmRSS of its process), the dispatch lag of the
// first attempts that arrived in the window (arrival at the downstream − the task's `nextAttemptAt`, as W4 measures it,
// ./lib/dispatch-lag.mjs) and the tasks purged per second (`retry_tasks_purged_total` from /metrics).
// Aims: the size over the second half within ±10% of its value at half-time (minute 5), and the run's lag p99 (after
// its first 10 s, which W4 leaves out as its warm-up; the whole run's is printed too) no worse than W4's (`--w4-p99`,
// a W4 run's p99 on this machine and store; without it the figure is printed only).
// Then nothing lost (./lib/w8-check.mjs): every task enqueued in the last retention period (the last minute) is read
// back, SUCCEEDED or EXHAUSTED (as its key meant) or still live; the downstream saw no duplicate and every key.
//
// The service runs as a user runs it, with its default protections (a downstream that fails each key's first call is
// what they must let through, W7 a1); `--protection off` beside it shows what they cost here.
// Build the service first: npm run build

import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { startDownstream } from './lib/downstream-client.mjs';
import { retrydStore } from './lib/contenders/retryd.mjs';
import { sendDueNow } from './lib/dispatch-lag.mjs';
import { CURRENT_DIST, fmt, percentileCurve, positiveIntOption, positiveNumberOption, printDiskSync, printMachine, printTable, summarize, waitFor, writeJsonFile } from './lib/report.mjs';
import { startRetryd } from './lib/retryd-service.mjs';
import { checkRecent } from './lib/w8-check.mjs';
import { lagTracker, sampleEvery, storeSizer } from './lib/w8-sampler.mjs';

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    rate: { type: 'string', default: '500' },
    'per-tick': { type: 'string', default: '5' },
    'exhaust-every': { type: 'string', default: '100' },
    retention: { type: 'string', default: '1m' },
    'retry-delay': { type: 'string', default: '1000' },
    'purge-interval': { type: 'string' },
    store: { type: 'string', default: 'sqlite' },
    sync: { type: 'string', default: 'full' },
    protection: { type: 'string', default: 'on' },
    'w4-p99': { type: 'string' },
    json: { type: 'boolean', default: false },
    'json-file': { type: 'string' },
  },
});
const minutes = positiveNumberOption(args, 'minutes');
const rate = positiveNumberOption(args, 'rate');
const perTick = positiveIntOption(args, 'per-tick');
const exhaustEvery = positiveIntOption(args, 'exhaust-every');
const retryDelayMs = positiveIntOption(args, 'retry-delay');
const w4P99 = args['w4-p99'] === undefined ? undefined : positiveNumberOption(args, 'w4-p99');
if (!['on', 'off'].includes(args.protection)) throw new Error(`--protection must be on or off, got ${args.protection}`);
// The service's own reading of a period (7d, 12h, 90m, 60s or ms), so that the check waits what the service keeps.
const { parseRetentionOption } = await import(pathToFileURL(join(CURRENT_DIST, 'service', 'retryd-config.js')).href);
const retentionMs = parseRetentionOption('--retention', args.retention);
const tickMs = (1000 * perTick) / rate;
const total = Math.round(minutes * 60 * rate);
const SAMPLE_MS = 10_000;
const samples = Math.floor((minutes * 60_000) / SAMPLE_MS);
if (samples < 2) throw new Error('--minutes must cover at least two 10 s samples');
const MiB = 2 ** 20;
/** Every `exhaustEvery`-th task (the last of each run of them) has a key the downstream always refuses. */
const exhausts = (i) => i % exhaustEvery === exhaustEvery - 1;
/** Two attempts, `retryDelayMs` apart, exactly: the first fails by design, the second succeeds (or fails for good). */
const policy = { maxAttempts: 2, backoffType: 'FIXED', initialDelayMs: retryDelayMs, multiplier: 1, maxDelayMs: retryDelayMs, jitterType: 'NONE' };

const machine = printMachine();
machine.diskSync = await printDiskSync();
console.log(
  `W8: ${fmt(rate)} tasks/s (${perTick} every ${fmt(tickMs, 1)} ms) for ${fmt(minutes, 1)} min = ${fmt(total)} tasks due now, each failing once ` +
    `then retried ${fmt(retryDelayMs)} ms later, 1 in ${exhaustEvery} failing both attempts (exhausted); retention ${args.retention} for ` +
    `finished tasks; store ${args.store}; protections ${args.protection}\n`,
);

const runId = Date.now().toString(36);
const keyPrefix = `w8-${runId}`;
const ds = await startDownstream();
const store = await retrydStore(args.store, { sync: args.sync, name: 'w8' });
const sizer = storeSizer(store);
const extraArgs = [
  ...['--retention-succeeded', '--retention-dead-letters', '--retention-cancelled'].flatMap((flag) => [flag, args.retention]),
  ...(args['purge-interval'] === undefined ? [] : ['--purge-interval', args['purge-interval']]),
  '--protection',
  args.protection,
];
/** @type {Record<string, any>} The run's settings, then its figures as they are read. */
const result = {
  machine,
  store: store.label,
  durability: store.durability,
  sizeOf: sizer.what,
  ...{ minutes, rate, total, exhaustEvery, retentionMs, retryDelayMs, protection: args.protection },
};
let service;
try {
  service = await startRetryd({ store: store.url, sync: args.sync, extraArgs });
  if (store.kind === 'sqlite' && !service.syncConfirmed) console.log(`note: this build does not report its SQLite synchronous mode; --sync ${args.sync} is as asked`);
  await ds.reset({ mode: 'flaky', failFirst: 1, alwaysFail: `${keyPrefix}-x-`, firstRequests: true });
  const target = `${ds.url}/w8`;
  const makeTask = (i) => ({
    targetUrl: target,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ orderId: i, amountCents: 1250, currency: 'EUR', note: 'w8' }),
    // The exhausting tasks' keys carry the prefix the downstream always refuses; every key ends in `-<i>`.
    idempotencyKey: exhausts(i) ? `${keyPrefix}-x-${i}` : `${keyPrefix}-${i}`,
    policy,
  });
  // What the run keeps of each task (not its whole view: 300,000 of those would weigh more than the service).
  const lag = lagTracker(ds, { prefix: keyPrefix, total });
  const createdAt = new Float64Array(total).fill(NaN);
  const ids = new Array(total);
  const onCreated = (i, task) => {
    lag.due[i] = task.nextAttemptAt;
    createdAt[i] = task.createdAt;
    ids[i] = task.taskId;
  };
  const onRow = (r) =>
    console.log(
      `  ${fmt(r.atS)} s: store ${fmt(r.bytes / MiB, 1)} MiB, RSS ${fmt(r.rssMiB)} MiB, ` +
        `first-attempt lag p99 ${r.lag.n === 0 ? '–' : `${fmt(r.lag.p99, 2)} ms`} (${fmt(r.lag.n)} attempts), purged ${fmt(r.purgedPerSec)}/s`,
    );
  const startedAt = performance.now();
  const [sent, sampled] = await Promise.all([
    sendDueNow(service, { total, makeTask, perTick, tickMs, onCreated }),
    sampleEvery({ service, sizer, lag, startedAt, everyMs: SAMPLE_MS, count: samples, onRow }),
  ]);
  const endAt = Date.now();

  // Nothing lost, checked first: the purge may take the oldest of these once their retention passes.
  const indexes = [];
  for (let i = 0; i < total; i++) if (createdAt[i] >= endAt - retentionMs) indexes.push(i);
  const check = await checkRecent(service, { indexes, ids, createdAt, exhausts, retentionMs, minLifeMs: retryDelayMs });
  // The first attempts of the last tasks, for the run's lag (nothing is due later than the last enqueue).
  await waitFor('every key at the downstream', async () => (await ds.stats()).keys >= total, { timeoutMs: 30_000, everyMs: 200 }).catch(() => undefined);
  await lag.collect(undefined);
  const memory = await service.memory();
  await service.stop();
  service = undefined;
  const stats = await ds.stats();

  const { rows, purgedTotal } = sampled;
  const half = Math.floor(samples / 2);
  const reference = rows[half];
  const lastHalf = rows.slice(half + 1);
  const deviation = Math.max(...lastHalf.map((r) => Math.abs(r.bytes / reference.bytes - 1)));
  const steady = rows.filter((r) => r.atS > (retentionMs + 20_000) / 1000);
  Object.assign(result, {
    achievedRate: total / (sent.ms / 1000),
    schedule: sent.schedule,
    enqueueLatency: sent.latency,
    rows,
    sizeAt: { atS: reference.atS, bytes: reference.bytes },
    sizeLastHalf: { min: Math.min(...lastHalf.map((r) => r.bytes)), max: Math.max(...lastHalf.map((r) => r.bytes)), deviation },
    rss: { startMiB: rows[0].rssMiB, endMiB: memory.rssMiB, peakMiB: memory.hwmMiB, lastHalfMaxMiB: Math.max(...lastHalf.map((r) => r.rssMiB)) },
    lag: lag.overall(),
    // W4 leaves its first 10 s (a cold service) out of its figure: the same cut, for the comparison with it.
    lagWarm: summarize(lag.all().slice(rows[1].lag.n)),
    lagCurve: percentileCurve(lag.all()),
    lagUnmatched: lag.unmatched(),
    purgedTotal,
    purgedPerSecSteady: steady.length === 0 ? NaN : steady.reduce((a, r) => a + r.purgedPerSec, 0) / steady.length,
    check,
    downstream: { requests: stats.requests, keys: stats.keys, firstSuccesses: stats.firstSuccesses, duplicates: stats.duplicates, neverRequested: total - stats.keys },
  });
} finally {
  await service?.stop();
  await ds.close();
  await store.cleanup();
}

const r = result;
console.log(
  `\nsent ${fmt(r.total)} tasks at ${fmt(r.achievedRate)} tasks/s (${r.schedule.lateTicks} of ${fmt(r.schedule.ticks)} batches sent > 2 ms late, ` +
    `worst ${fmt(r.schedule.maxLateMs, 1)} ms); enqueue round trip p50 ${fmt(r.enqueueLatency.p50, 2)} ms, p99 ${fmt(r.enqueueLatency.p99, 2)} ms`,
);
console.log('');
printMachine('load after the run');
console.log('');
printTable(
  [
    `W8: ${fmt(r.rate)}/s × ${fmt(r.minutes, 1)} min, ${r.store}`,
    ...['store size (MiB)', 'RSS (MiB)', 'first attempts', 'lag p50 (ms)', 'lag p99 (ms)', 'lag max (ms)', 'purged/s', 'purged SUCCEEDED / EXHAUSTED'],
  ],
  r.rows.map((w) => [
    `${fmt(w.atS)} s`,
    fmt(w.bytes / MiB, 1),
    fmt(w.rssMiB),
    fmt(w.lag.n),
    ...(w.lag.n === 0 ? ['–', '–', '–'] : [fmt(w.lag.p50, 2), fmt(w.lag.p99, 2), fmt(w.lag.max, 1)]),
    fmt(w.purgedPerSec),
    `${fmt(w.purged.SUCCEEDED ?? 0)} / ${fmt(w.purged.EXHAUSTED ?? 0)}`,
  ]),
);
console.log(`\nstore size: ${r.sizeOf}`);
console.log('');
printTable(
  ['W8', 'durability', `size at ${fmt(r.sizeAt.atS)} s (MiB)`, 'size, second half (MiB)', 'RSS start / end / peak (MiB)', 'lag p50 / p99 / max (ms)', 'lag p99 after 10 s (ms)', 'purged/s (mean once steady)'],
  [
    [
      r.store,
      r.durability,
      fmt(r.sizeAt.bytes / MiB, 1),
      `${fmt(r.sizeLastHalf.min / MiB, 1)} – ${fmt(r.sizeLastHalf.max / MiB, 1)}`,
      `${fmt(r.rss.startMiB)} / ${fmt(r.rss.endMiB)} / ${fmt(r.rss.peakMiB)}`,
      `${fmt(r.lag.p50, 2)} / ${fmt(r.lag.p99, 2)} / ${fmt(r.lag.max, 1)}`,
      fmt(r.lagWarm.p99, 2),
      Number.isNaN(r.purgedPerSecSteady) ? '– (the run ended before the purge was steady)' : fmt(r.purgedPerSecSteady),
    ],
  ],
);
const c = r.check;
const d = r.downstream;
console.log(
  `\npurged over the run: ${Object.entries(r.purgedTotal).map(([s, n]) => `${fmt(n)} ${s}`).join(', ') || 'none'}; ` +
    `downstream: ${fmt(d.requests)} requests, ${fmt(d.keys)} keys of ${fmt(r.total)} (${fmt(d.neverRequested)} never requested), ` +
    `${fmt(d.firstSuccesses)} first successes, ${fmt(d.duplicates)} duplicates` +
    (r.lagUnmatched > 0 ? `; ${fmt(r.lagUnmatched)} first requests without an enqueue answer (not in the lag)` : ''),
);
console.log(
  `last ${fmt(r.retentionMs / 1000)} s of tasks read back (${fmt(c.checked)}, in ${fmt(c.seconds, 1)} s): ` +
    `${Object.entries(c.byStatus).map(([s, n]) => `${fmt(n)} ${s}`).join(', ')}; ${fmt(c.lost)} lost, ` +
    `${fmt(c.goneAfterRetention)} gone after their retention could have passed, ${fmt(c.otherStatus)} in another status, ` +
    `${fmt(c.wrongOutcome)} with the other outcome than their key meant, ${fmt(c.noExpiry)} finished without expiresAt; ` +
    `expiresAt − updatedAt ${fmt(c.expiryAfterEnd.min)} – ${fmt(c.expiryAfterEnd.max)} ms`,
);
for (const e of c.examples) console.log(`  ${e}`);
const lost = c.lost + c.otherStatus + c.noExpiry + d.duplicates + d.neverRequested;
console.log('');
console.log(
  `aim W8 store flat: size over the second half within ±10% of its value at ${fmt(r.sizeAt.atS)} s ` +
    `(${fmt(r.sizeAt.bytes / MiB, 1)} MiB): worst ${(r.sizeLastHalf.deviation * 100).toFixed(1)}% → ${r.sizeLastHalf.deviation <= 0.1 ? 'MET' : 'MISSED'}`,
);
console.log(
  `aim W8 lag p99 no worse than W4's: ${fmt(r.lagWarm.p99, 2)} ms after the first 10 s, as W4 measures ` +
    `(${fmt(r.lag.p99, 2)} ms over the whole run, its cold start included)` +
    (w4P99 === undefined
      ? ' (give --w4-p99 MS, a W4 run on this machine and store, to compare)'
      : ` vs W4 ${fmt(w4P99, 2)} ms → ${r.lagWarm.p99 <= w4P99 ? 'MET' : 'MISSED'}`),
);
console.log(`nothing lost: ${lost === 0 ? 'yes' : `NO (${fmt(lost)} lost, duplicated, never requested or wrongly kept)`}`);
if (args.json) console.log(JSON.stringify(r, null, 2));
writeJsonFile(args['json-file'], r);
process.exit(lost === 0 ? 0 : 1);
