// W2 — a large backlog (../../../shared/WORKLOADS.md).
//
//   node bench/service/w2.mjs [--backlog 1000000] [--due 1000] [--sync full|normal] [--store sqlite|postgres|redis]
//                             [--skip-library] [--cpu-prof DIR] [--json] [--json-file FILE]
//
// 1. Baseline: a fresh service on an empty store; after a warm-up of 1,000 (not measured), 1,000 tasks due now,
//    sent on a steady schedule (20 every 10 ms), then another 1,000 in one burst: dispatch lag p50 / p99 / max of each.
// 2. Backlog through the public API: a fresh service on an empty store; `--backlog` tasks due in one hour,
//    enqueued through POST /retry-tasks/batch (1,000 a call, 4 calls in flight): enqueue rate, the service's CPU per
//    task, its store server's (every postgres or redis-server process: other users count) and this load generator's
//    own, the service's RSS, the store's size; then, with the backlog sitting, the same warm-up + 1,000 + 1,000 due
//    now: lag, RSS at the end.
// 3. Backlog through the library: TaskService.enqueueBatch on its own store of the same kind, in this process
//    (1,000 a call, 4 in flight): enqueue rate and size on disk.
// Lag is measured as in ./lib/dispatch-lag.mjs. RSS is VmRSS (and VmHWM, the peak) of the service process.
// Build the service first: npx tsc -b packages/server

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startDownstream } from './lib/downstream-client.mjs';
import { retrydStore } from './lib/contenders/retryd.mjs';
import { lagsOf, sendDueNow, serviceSideLag } from './lib/dispatch-lag.mjs';
import { CURRENT_DIST, fmt, inParallel, printMachine, printTable, sleep, summarize, waitFor, printDiskSync, writeJsonFile } from './lib/report.mjs';
import { startRetryd } from './lib/retryd-service.mjs';
import { storeServerCpuMs } from './lib/contenders/call-downstream.mjs';

const { values: args } = parseArgs({
  options: {
    backlog: { type: 'string', default: '1000000' },
    due: { type: 'string', default: '1000' },
    sync: { type: 'string', default: 'full' },
    store: { type: 'string', default: 'sqlite' },
    'skip-library': { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
    json: { type: 'boolean', default: false },
    'json-file': { type: 'string' },
  },
});
const BACKLOG = Number(args.backlog);
const DUE = Number(args.due);
const HOUR = 3_600_000;
const nodeArgs = args['cpu-prof'] === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', args['cpu-prof']];
const MiB = 2 ** 20;

const machine = printMachine();
machine.diskSync = await printDiskSync();
console.log(`W2: backlog ${fmt(BACKLOG)} tasks due in 1 h, then ${fmt(DUE)} due now (steady) + ${fmt(DUE)} due now (burst)\n`);

const runId = Date.now().toString(36);
const ds = await startDownstream();
const body = (i) => JSON.stringify({ orderId: i, amountCents: 1250, currency: 'EUR', note: 'w2' });
const backlogTask = (prefix) => (i) => ({
  targetUrl: `${ds.url}/w2-backlog`,
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: body(i),
  idempotencyKey: `${prefix}-${i}`,
  delayMs: HOUR,
});
const dueTask = (prefix) => (i) => ({
  targetUrl: `${ds.url}/w2-due`,
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: body(i),
  idempotencyKey: `${prefix}-${i}`,
});

/**
 * Sends DUE tasks due now (steady, then burst) and measures their dispatch lag. A warm-up of the same size and
 * pace goes first and is not measured: a freshly started service runs its first requests cold (JIT, lazily
 * compiled schemas), which would charge the empty-store baseline for start-up rather than for the store.
 */
async function dueNow(service, label) {
  const out = {};
  {
    const prefix = `w2-${runId}-${label}-warmup`;
    await ds.reset({ mode: 'ok', expect: DUE });
    await sendDueNow(service, { total: DUE, makeTask: dueTask(prefix) });
    await ds.waitReached({ stallMs: 30_000 });
    await waitFor('the warm-up recorded', async () => !(await service.anyWithStatus('IN_FLIGHT')), { timeoutMs: 60_000 });
  }
  for (const burst of [false, true]) {
    const prefix = `w2-${runId}-${label}-${burst ? 'burst' : 'steady'}`;
    await ds.reset({ mode: 'ok', expect: DUE });
    const sent = await sendDueNow(service, { total: DUE, makeTask: dueTask(prefix), burst });
    await ds.waitReached({ stallMs: 30_000 });
    const arrivals = await ds.arrivals();
    const { lags, missing } = lagsOf(sent.created, arrivals);
    await waitFor('the due tasks recorded', async () => !(await service.anyWithStatus('IN_FLIGHT')), { timeoutMs: 60_000 });
    const stats = await ds.stats();
    out[burst ? 'burst' : 'steady'] = {
      lag: summarize(lags),
      serviceLag: await serviceSideLag(service, sent.created, DUE),
      missing,
      duplicates: stats.duplicates,
      enqueueLatency: sent.latency,
    };
  }
  return out;
}

const results = { machine, backlog: BACKLOG, due: DUE };
try {
  // 1. Baseline on an empty store.
  {
    const store = await retrydStore(args.store, { sync: args.sync, name: 'w2-empty' });
    results.durability = store.durability;
    results.storeLabel = store.label;
    const service = await startRetryd({ store: store.url, sync: args.sync });
    if (store.kind === 'sqlite' && !service.syncConfirmed) console.log(`note: this build does not report its SQLite synchronous mode; --sync ${args.sync} is as asked`);
    try {
      results.empty = await dueNow(service, 'empty');
      results.empty.memory = await service.memory();
    } finally {
      await service.stop();
      await store.cleanup();
    }
    console.log(`empty store: steady lag p99 ${fmt(results.empty.steady.lag.p99, 2)} ms, burst lag p99 ${fmt(results.empty.burst.lag.p99, 2)} ms`);
  }

  // 2. Backlog through the API.
  {
    const store = await retrydStore(args.store, { sync: args.sync, name: 'w2-api' });
    const service = await startRetryd({ store: store.url, sync: args.sync, nodeArgs });
    try {
      const make = backlogTask(`w2-${runId}-api`);
      const mem0 = await service.memory();
      const enqueueCpu0 = await service.cpuMs();
      const enqueueStoreCpu0 = await storeServerCpuMs(args.store);
      const clientCpu0 = process.cpuUsage();
      const started = performance.now();
      let done = 0;
      let lastReport = started;
      await inParallel(Math.ceil(BACKLOG / 1000), 4, async (b) => {
        const from = b * 1000;
        const to = Math.min(BACKLOG, from + 1000);
        await service.enqueueBatch(Array.from({ length: to - from }, (_, j) => make(from + j)));
        done += to - from;
        if (performance.now() - lastReport > 10_000) {
          lastReport = performance.now();
          const m = await service.memory();
          console.log(`  … ${fmt(done)} enqueued, ${fmt(done / ((lastReport - started) / 1000))} tasks/s, service RSS ${fmt(m.rssMiB)} MiB`);
        }
      });
      const ms = performance.now() - started;
      const clientCpu = process.cpuUsage(clientCpu0);
      const enqueueCpuMs = (await service.cpuMs()) - enqueueCpu0;
      const enqueueStoreCpu1 = await storeServerCpuMs(args.store);
      // Let the last commit and a checkpoint settle before reading memory and disk.
      await sleep(2000);
      results.api = {
        enqueuePerSec: BACKLOG / (ms / 1000),
        seconds: ms / 1000,
        cpuMsPerTask: enqueueCpuMs / BACKLOG,
        storeCpuMsPerTask: enqueueStoreCpu0 === undefined || enqueueStoreCpu1 === undefined ? undefined : (enqueueStoreCpu1 - enqueueStoreCpu0) / BACKLOG,
        // This process's own CPU (building and sending the batches), which shares the machine's cores with the
        // service and the store: the sizing model's check of the enqueue rate counts it as W1's counts the downstream.
        clientCpuMsPerTask: (clientCpu.user + clientCpu.system) / 1000 / BACKLOG,
        memoryBefore: mem0,
        memoryAfterBacklog: await service.memory(),
        sizeAfterBacklog: await store.size(),
      };
      console.log(
        `API: ${fmt(BACKLOG)} tasks in ${fmt(ms / 1000, 1)} s = ${fmt(results.api.enqueuePerSec)} tasks/s, ` +
          `service CPU ${fmt(results.api.cpuMsPerTask, 4)} ms/task, store server CPU ${results.api.storeCpuMsPerTask === undefined ? '–' : fmt(results.api.storeCpuMsPerTask, 4)} ms/task, load generator CPU ${fmt(results.api.clientCpuMsPerTask, 4)} ms/task; ` +
          `RSS ${fmt(results.api.memoryAfterBacklog.rssMiB)} MiB`,
      );
      const cpu0 = await service.cpuMs();
      results.api.dueNow = await dueNow(service, 'backlog');
      results.api.dueNowCpuMs = (await service.cpuMs()) - cpu0;
      results.api.memoryEnd = await service.memory();
      results.api.sizeEnd = await store.size();
      results.api.pendingStillBacklog = true;
    } finally {
      await service.stop();
      await store.cleanup();
    }
    console.log(`backlog: steady lag p99 ${fmt(results.api.dueNow.steady.lag.p99, 2)} ms, burst lag p99 ${fmt(results.api.dueNow.burst.lag.p99, 2)} ms`);
  }

  // 3. Backlog through the library (TaskService), in this process.
  if (!args['skip-library']) {
    const dist = CURRENT_DIST; // RETRYD_CLI's build when it is set, as for the service process
    // The store opener lives with the service wiring since ad889b9 (`service/`); older builds keep it in `store/`.
    const opener = ['service', 'store'].map((d) => join(dist, d, 'open-store.js')).find((p) => existsSync(p)) ?? join(dist, 'service', 'open-store.js');
    const { openStore } = await import(opener);
    const { TaskService } = await import(join(dist, 'tasks', 'task-service.js'));
    const { TargetGuard, parseAllowList } = await import(join(dist, 'security', 'target-guard.js'));
    const { DEFAULT_TENANT } = await import(join(dist, 'domain', 'task.js'));
    const store = await retrydStore(args.store, { sync: args.sync, name: 'w2-lib' });
    const { store: taskStore, blobs } = await openStore(store.url, { synchronous: args.sync === 'normal' ? 'NORMAL' : 'FULL' });
    const service = new TaskService({ store: taskStore, blobs, targetGuard: new TargetGuard({ allow: parseAllowList(['127.0.0.1/32']) }) });
    try {
      await service.ensureDefaultPolicy();
      const make = backlogTask(`w2-${runId}-lib`);
      const started = performance.now();
      await inParallel(Math.ceil(BACKLOG / 1000), 4, async (b) => {
        const from = b * 1000;
        const to = Math.min(BACKLOG, from + 1000);
        const res = await service.enqueueBatch(DEFAULT_TENANT, Array.from({ length: to - from }, (_, j) => make(from + j)));
        const bad = res.find((r) => r.kind === 'error');
        if (bad) throw bad.error;
      });
      const ms = performance.now() - started;
      await service.close();
      results.library = { enqueuePerSec: BACKLOG / (ms / 1000), seconds: ms / 1000, size: await store.size() };
      console.log(`library: ${fmt(BACKLOG)} tasks in ${fmt(ms / 1000, 1)} s = ${fmt(results.library.enqueuePerSec)} tasks/s`);
    } finally {
      await taskStore.close();
      await store.cleanup();
    }
  }
} finally {
  await ds.close();
}

console.log('');
printMachine('load after the run');
console.log('');
const api = results.api;
printTable(
  ['W2 enqueue of the backlog', 'durability', 'tasks', 'tasks/s', 'seconds', 'store size (MiB)', 'service RSS after (MiB)'],
  [
    ['public API (POST /retry-tasks/batch, 1,000 a call, 4 in flight)', results.durability, fmt(BACKLOG), fmt(api.enqueuePerSec), fmt(api.seconds, 1), fmt(api.sizeAfterBacklog.total / MiB), fmt(api.memoryAfterBacklog.rssMiB)],
    ...(results.library
      ? [['library (TaskService.enqueueBatch, same store kind, in-process)', results.durability, fmt(BACKLOG), fmt(results.library.enqueuePerSec), fmt(results.library.seconds, 1), fmt(results.library.size.total / MiB), '–']]
      : []),
  ],
);
console.log('');
const row = (label, d) => [label, fmt(d.lag.p50, 2), fmt(d.lag.p99, 2), fmt(d.lag.max, 1), `${fmt(d.serviceLag.p50)} / ${fmt(d.serviceLag.p99)} / ${fmt(d.serviceLag.max)}`, fmt(d.missing + d.duplicates)];
printTable(
  [`${fmt(DUE)} tasks due now`, 'lag p50 (ms)', 'lag p99 (ms)', 'lag max (ms)', 'service-side p50 / p99 / max (ms)', 'missing + duplicates'],
  [
    row('empty store, steady (20 / 10 ms)', results.empty.steady),
    row(`${fmt(BACKLOG)} pending, steady (20 / 10 ms)`, api.dueNow.steady),
    row('empty store, burst (one batch)', results.empty.burst),
    row(`${fmt(BACKLOG)} pending, burst (one batch)`, api.dueNow.burst),
  ],
);
console.log('');
printTable(
  ['service memory', 'RSS (MiB)', 'peak RSS, VmHWM (MiB)'],
  [
    [`empty store, after its 3 × ${fmt(DUE)} due tasks`, fmt(results.empty.memory.rssMiB), fmt(results.empty.memory.hwmMiB)],
    [`after enqueuing ${fmt(BACKLOG)}`, fmt(api.memoryAfterBacklog.rssMiB), fmt(api.memoryAfterBacklog.hwmMiB)],
    [`end (backlog + 3 × ${fmt(DUE)} due)`, fmt(api.memoryEnd.rssMiB), fmt(api.memoryEnd.hwmMiB)],
  ],
);
const s = api.sizeEnd;
const parts = s.db === undefined
  ? `${s.note ?? 'tables and indexes'}`
  : `db ${fmt(s.db / MiB)} MiB + wal ${fmt(s.wal / MiB)} MiB + shm ${fmt(s.shm / MiB, 1)} MiB + blobs ${fmt(s.blobs / MiB, 1)} MiB`;
console.log(`\nstore size at the end: ${parts} = ${fmt(s.total / MiB)} MiB (${fmt(s.total / (BACKLOG + 3 * DUE))} bytes a task)`);
const rise = api.dueNow.steady.lag.p99 / results.empty.steady.lag.p99;
console.log(`aim W2 RSS < 300 MB with ${fmt(BACKLOG)} pending: peak ${fmt((api.memoryEnd.hwmMiB * MiB) / 1e6)} MB → ${api.memoryEnd.hwmMiB * MiB < 300e6 ? 'MET' : 'MISSED'}`);
console.log(`aim W2 no rise in dispatch lag: steady p99 ${fmt(api.dueNow.steady.lag.p99, 2)} ms with the backlog vs ${fmt(results.empty.steady.lag.p99, 2)} ms empty (${rise.toFixed(2)}×)`);
if (args.json) console.log(JSON.stringify(results, null, 2));
writeJsonFile(args['json-file'], results);
process.exit(0);
