// W4 — steady load, dispatch lag (../../../shared/WORKLOADS.md).
//
//   node bench/service/w4.mjs [--seconds 60] [--warmup 10] [--rate 2000] [--per-tick 20] [--sync full|normal]
//                             [--store sqlite|postgres|redis] [--concurrency N] [--cpu-prof DIR] [--json]
//
// Tasks arrive at a steady 2,000/s (a batch of 20 every 10 ms through POST /retry-tasks/batch, open loop; --per-tick
// sets the batch, and the interval follows from the rate) for
// 60 s, each due immediately, against a downstream (own process) that answers 200. Figures: dispatch lag
// p50 / p99 / max (see ./lib/dispatch-lag.mjs for exactly what is measured) and the service's CPU time per
// attempt (utime + stime of the service process from /proc/<pid>/stat, over the whole run, so it includes the
// API work of the enqueue: one attempt per task here).
// Build the service first: npx tsc -b packages/server

import { parseArgs } from 'node:util';
import { startDownstream } from './lib/downstream-client.mjs';
import { retrydStore } from './lib/contenders/retryd.mjs';
import { lagsOf, sendDueNow, serviceSideLag } from './lib/dispatch-lag.mjs';
import { fmt, printMachine, printTable, summarize, waitFor, printDiskSync } from './lib/report.mjs';
import { startRetryd } from './lib/retryd-service.mjs';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    warmup: { type: 'string', default: '10' },
    rate: { type: 'string', default: '2000' },
    'per-tick': { type: 'string', default: '20' },
    sync: { type: 'string', default: 'full' },
    store: { type: 'string', default: 'sqlite' },
    concurrency: { type: 'string' },
    'cpu-prof': { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const seconds = Number(args.seconds);
const rate = Number(args.rate);
const perTick = Number(args['per-tick']);
const tickMs = (1000 * perTick) / rate;
const total = Math.round(seconds * rate);
if (!(total > 0)) throw new Error('--seconds and --rate must be positive');
if (!(Number.isInteger(perTick) && perTick >= 1)) throw new Error('--per-tick must be an integer >= 1');

const machine = printMachine();
machine.diskSync = await printDiskSync();
const store = await retrydStore(args.store, { sync: args.sync, name: 'w4' });
console.log(
  `W4: ${fmt(rate)} tasks/s (${perTick} every ${tickMs} ms) for ${seconds} s = ${fmt(total)} tasks due now, after ${args.warmup} s of the same ` +
    `load not measured; store ${store.label} — ${store.durability}\n`,
);

const ds = await startDownstream();
await ds.reset({ mode: 'ok', expect: total });
const nodeArgs = args['cpu-prof'] === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', args['cpu-prof']];
const concurrency = args.concurrency === undefined ? undefined : Number(args.concurrency);
const service = await startRetryd({ store: store.url, sync: args.sync, concurrency, nodeArgs });
if (store.kind === 'sqlite' && !service.syncConfirmed) console.log(`note: this build does not report its SQLite synchronous mode; --sync ${args.sync} is as asked`);
const runId = Date.now().toString(36);
const target = `${ds.url}/w4`;
const makeTask = (i) => ({
  targetUrl: target,
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ orderId: i, amountCents: 1250, currency: 'EUR', note: 'w4' }),
  idempotencyKey: `w4-${runId}-${i}`,
});

let result;
try {
  const warmupSeconds = Number(args.warmup);
  if (warmupSeconds > 0) {
    // The same load, not measured: a freshly started service runs its first seconds cold (JIT, lazily compiled
    // schemas), and a backlog built then takes a while to drain. --warmup 0 measures the cold start too.
    const warm = Math.round(warmupSeconds * rate);
    await ds.reset({ mode: 'ok', expect: warm });
    await sendDueNow(service, { total: warm, makeTask: (i) => ({ ...makeTask(i), idempotencyKey: `w4-${runId}-warmup-${i}` }), perTick, tickMs });
    await ds.waitReached({ stallMs: 30_000 });
    await waitFor('the warm-up recorded', async () => !(await service.anyWithStatus('PENDING')) && !(await service.anyWithStatus('IN_FLIGHT')), {
      timeoutMs: 120_000,
    });
    await ds.reset({ mode: 'ok', expect: total });
  }
  const cpu0 = await service.cpuMs();
  const sent = await sendDueNow(service, { total, makeTask, perTick, tickMs });
  const reached = await ds.waitReached({ stallMs: 30_000 });
  await waitFor('every task recorded', async () => !(await service.anyWithStatus('PENDING')) && !(await service.anyWithStatus('IN_FLIGHT')), {
    timeoutMs: 120_000,
  });
  const cpu1 = await service.cpuMs();
  const memory = await service.memory();
  const stats = await ds.stats();
  const arrivals = await ds.arrivals();
  const { lags, missing } = lagsOf(sent.created, arrivals);
  const lag = summarize(lags);
  // Lag per 10 s of the run (by enqueue order): shows whether it drifts as the store grows.
  const windows = [];
  const perWindow = rate * 10;
  for (let from = 0; from < sent.created.length; from += perWindow) {
    windows.push(summarize(lagsOf(sent.created.slice(from, from + perWindow), arrivals).lags));
  }
  const serviceLag = await serviceSideLag(service, sent.created, 2000);
  const succeeded = await service.countStatus('SUCCEEDED');
  result = {
    machine,
    store: store.label,
    durability: store.durability,
    tasks: total,
    seconds,
    warmupSeconds,
    rate,
    achievedRate: total / (sent.ms / 1000),
    schedule: sent.schedule,
    enqueueLatency: sent.latency,
    lag,
    missing,
    windows,
    serviceLag,
    cpuMsPerAttempt: (cpu1 - cpu0) / stats.requests,
    cpuShare: (cpu1 - cpu0) / (reached.lastFirstSuccessAt - reached.firstRequestAt),
    rssMiB: memory.rssMiB,
    hwmMiB: memory.hwmMiB,
    requests: stats.requests,
    duplicates: stats.duplicates,
    succeeded,
  };
} finally {
  await service.stop();
  await ds.close();
  await store.cleanup();
}

const r = result;
console.log(
  `sent ${fmt(r.tasks)} tasks at ${fmt(r.achievedRate)} tasks/s (${r.schedule.lateTicks} of ${fmt(r.schedule.ticks)} batches sent > 2 ms late, ` +
    `worst ${fmt(r.schedule.maxLateMs, 1)} ms); enqueue round trip p50 ${fmt(r.enqueueLatency.p50, 2)} ms, p99 ${fmt(r.enqueueLatency.p99, 2)} ms`,
);
console.log(`downstream: ${fmt(r.requests)} requests, ${fmt(r.duplicates)} duplicates, ${fmt(r.missing)} tasks never arrived; store: ${fmt(r.succeeded)} SUCCEEDED\n`);
printMachine('load after the run');
console.log('');
printTable(
  ['W4 (retryd)', 'durability', 'lag p50 (ms)', 'lag p99 (ms)', 'lag max (ms)', 'service-side p50 / p99 / max (ms)', 'CPU ms / attempt', 'service CPU (cores)', 'RSS (MiB)'],
  [
    [
      `${fmt(r.rate)}/s × ${r.seconds} s (after ${r.warmupSeconds} s warm-up), ${r.store}`,
      r.durability,
      fmt(r.lag.p50, 2),
      fmt(r.lag.p99, 2),
      fmt(r.lag.max, 1),
      `${fmt(r.serviceLag.p50)} / ${fmt(r.serviceLag.p99)} / ${fmt(r.serviceLag.max)}`,
      fmt(r.cpuMsPerAttempt, 3),
      fmt(r.cpuShare, 2),
      fmt(r.rssMiB),
    ],
  ],
);
console.log('');
printTable(
  ['10 s window', 'tasks', 'lag p50 (ms)', 'lag p99 (ms)', 'lag max (ms)'],
  r.windows.map((w, i) => [`${i * 10}–${i * 10 + 10} s`, fmt(w.n), fmt(w.p50, 2), fmt(w.p99, 2), fmt(w.max, 1)]),
);
console.log(`\naim W4 dispatch lag p99 < 2 ms: ${fmt(r.lag.p99, 2)} ms → ${r.lag.p99 < 2 ? 'MET' : 'MISSED'}`);
if (args.json) console.log(JSON.stringify(r, null, 2));
process.exit(r.missing === 0 && r.duplicates === 0 ? 0 : 1);
