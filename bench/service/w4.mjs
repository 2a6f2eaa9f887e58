// W4 — steady load, dispatch lag (../../../shared/WORKLOADS.md).
//
//   node bench/service/w4.mjs [--seconds 60] [--warmup 10] [--rate 2000] [--per-tick 20] [--sync full|normal]
//                             [--store sqlite|postgres|redis] [--concurrency N] [--cpu-prof DIR] [--stalls]
//                             [--baseline PATH/dist/cli/main.js] [--rounds 1] [--json] [--json-file FILE]
//
// Tasks arrive at a steady 2,000/s (a batch of 20 every 10 ms through POST /retry-tasks/batch, open loop; --per-tick
// sets the batch, and the interval follows from the rate) for
// 60 s, each due immediately, against a downstream (own process) that answers 200. Figures: dispatch lag
// p50 / p99 / max (see ./lib/dispatch-lag.mjs for exactly what is measured) and the service's CPU time per
// attempt (utime + stime of the service process from /proc/<pid>/stat, over the whole run, so it includes the
// API work of the enqueue: one attempt per task here).
//
// --baseline <path to an older build's dist/cli/main.js> runs that build too (`retryd (before)`), in the same run,
// against the same downstream: every round runs both builds back to back, each on a fresh store with its own warm-up
// (which goes first alternates by round), and the report adds after ÷ before. The current build is
// packages/server/dist, or RETRYD_CLI. With --rounds > 1 the figures are the medians of the rounds.
// --stalls preloads ./lib/stall-probe.mjs into each service and says, per run, what the tasks at or past the lag's p99
// waited behind: a GC of the service (a mark-compact or not), a stall of its event loop with no GC in it, or neither
// (./lib/tail-causes.mjs). Its timer costs the service CPU: not for CPU figures.
// Build the service first: npx tsc -b packages/server

import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startDownstream } from './lib/downstream-client.mjs';
import { retrydStore } from './lib/contenders/retryd.mjs';
import { lagsOf, sendDueNow, serviceSideLag } from './lib/dispatch-lag.mjs';
import { distOf, fmt, printMachine, printTable, serviceBuild, summarize, waitFor, printDiskSync, writeJsonFile, percentileCurve } from './lib/report.mjs';
import { CLI, startRetryd } from './lib/retryd-service.mjs';
import { tailCauses } from './lib/tail-causes.mjs';

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
    stalls: { type: 'boolean', default: false },
    baseline: { type: 'string' },
    rounds: { type: 'string', default: '1' },
    json: { type: 'boolean', default: false },
    'json-file': { type: 'string' },
  },
});
const seconds = Number(args.seconds);
const rate = Number(args.rate);
const perTick = Number(args['per-tick']);
const tickMs = (1000 * perTick) / rate;
const total = Math.round(seconds * rate);
if (!(total > 0)) throw new Error('--seconds and --rate must be positive');
if (!(Number.isInteger(perTick) && perTick >= 1)) throw new Error('--per-tick must be an integer >= 1');

const ROUNDS = Number(args.rounds);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error(`--rounds must be a positive integer, got ${args.rounds}`);
const baseline = args.baseline === undefined ? undefined : resolve(args.baseline);
if (baseline !== undefined && !existsSync(baseline)) throw new Error(`--baseline: no such file ${baseline} (build it: cd <checkout> && npm run build)`);
const builds = [{ role: 'after', label: 'retryd', cli: CLI }];
if (baseline !== undefined) builds.push({ role: 'before', label: 'retryd (before)', cli: baseline });

const machine = printMachine('machine', { baseline });
machine.diskSync = await printDiskSync();
const warmupSeconds = Number(args.warmup);
console.log(
  `W4: ${fmt(rate)} tasks/s (${perTick} every ${tickMs} ms) for ${seconds} s = ${fmt(total)} tasks due now, after ${args.warmup} s of the same ` +
    `load not measured; store ${args.store}${baseline === undefined ? '' : '; after and before builds back to back'}` +
    `${ROUNDS > 1 ? `; ${ROUNDS} rounds` : ''}\n`,
);

const ds = await startDownstream();
const nodeArgs = args['cpu-prof'] === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', args['cpu-prof']];
// --stalls: ./lib/stall-probe.mjs in every service, which records its event loop's stalls and its GCs for tailCauses.
if (args.stalls) nodeArgs.push('--import', join(import.meta.dirname, 'lib', 'stall-probe.mjs'));
const concurrency = args.concurrency === undefined ? undefined : Number(args.concurrency);
const runId = Date.now().toString(36);

/** One W4 run of one build: a fresh store and service, the warm-up, then the measured load. */
async function runOnce(build, round) {
  const store = await retrydStore(args.store, { sync: args.sync, name: build.role === 'before' ? 'before-w4' : 'w4' });
  const keyPrefix = `w4-${runId}-${build.role}-${round}`;
  const target = `${ds.url}/w4`;
  const makeTask = (i) => ({
    targetUrl: target,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ orderId: i, amountCents: 1250, currency: 'EUR', note: 'w4' }),
    idempotencyKey: `${keyPrefix}-${i}`,
  });
  let service;
  // Where the service's stall probe writes (--stalls), read once the service has exited.
  const stallFile = args.stalls ? join(tmpdir(), `retryd-w4-stalls-${runId}-${build.role}-${round}.json`) : undefined;
  /** @type {any} The run's figures (set once it has run). */
  let r;
  /** The run's tasks and their arrivals, for the tail's causes (--stalls). */
  let lagInputs;
  try {
    const env = stallFile === undefined ? {} : { RETRYD_STALL_FILE: stallFile };
    service = await startRetryd({ cli: build.cli, store: store.url, sync: args.sync, concurrency, nodeArgs, env });
    if (store.kind === 'sqlite' && !service.syncConfirmed) console.log(`note: ${build.label} does not report its SQLite synchronous mode; --sync ${args.sync} is as asked`);
    if (warmupSeconds > 0) {
      // The same load, not measured: a freshly started service runs its first seconds cold (JIT, lazily compiled
      // schemas), and a backlog built then takes a while to drain. --warmup 0 measures the cold start too.
      const warm = Math.round(warmupSeconds * rate);
      await ds.reset({ mode: 'ok', expect: warm });
      await sendDueNow(service, { total: warm, makeTask: (i) => ({ ...makeTask(i), idempotencyKey: `${keyPrefix}-warmup-${i}` }), perTick, tickMs });
      await ds.waitReached({ stallMs: 30_000 });
      await waitFor('the warm-up recorded', async () => !(await service.anyWithStatus('PENDING')) && !(await service.anyWithStatus('IN_FLIGHT')), {
        timeoutMs: 120_000,
      });
    }
    await ds.reset({ mode: 'ok', expect: total });
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
    const lagCurve = percentileCurve(lags);
    // Lag per 10 s of the run (by enqueue order): shows whether it drifts as the store grows.
    const windows = [];
    const perWindow = rate * 10;
    for (let from = 0; from < sent.created.length; from += perWindow) {
      windows.push(summarize(lagsOf(sent.created.slice(from, from + perWindow), arrivals).lags));
    }
    const serviceLag = await serviceSideLag(service, sent.created, 2000);
    const succeeded = await service.countStatus('SUCCEEDED');
    r = {
      role: build.role,
      label: build.label,
      build: serviceBuild(distOf(build.cli)).hash,
      round,
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
      lagCurve,
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
    lagInputs = { created: sent.created, arrivals };
    console.log(
      `${r.label} [build ${r.build}]${ROUNDS > 1 ? ` round ${round + 1}` : ''}: sent ${fmt(r.tasks)} tasks at ${fmt(r.achievedRate)} tasks/s ` +
        `(${r.schedule.lateTicks} of ${fmt(r.schedule.ticks)} batches sent > 2 ms late, worst ${fmt(r.schedule.maxLateMs, 1)} ms); ` +
        `enqueue round trip p50 ${fmt(r.enqueueLatency.p50, 2)} ms, p99 ${fmt(r.enqueueLatency.p99, 2)} ms; ` +
        `lag p50 ${fmt(r.lag.p50, 2)} / p99 ${fmt(r.lag.p99, 2)} / max ${fmt(r.lag.max, 1)} ms; ` +
        `downstream ${fmt(r.requests)} requests, ${fmt(r.duplicates)} duplicates, ${fmt(r.missing)} never arrived; store ${fmt(r.succeeded)} SUCCEEDED`,
    );
  } finally {
    await service?.stop();
    await store.cleanup();
  }
  if (stallFile !== undefined && lagInputs !== undefined && existsSync(stallFile)) {
    const causes = tailCauses(lagInputs.created, lagInputs.arrivals, JSON.parse(readFileSync(stallFile, 'utf8')), r.lag.p99);
    rmSync(stallFile, { force: true });
    if (causes !== undefined) {
      const { tail, stalls, scavenges, markCompacts } = causes;
      console.log(
        `  the service meanwhile: its event loop held > 3 ms ${fmt(stalls.count)} times (${fmt(stalls.ms)} ms in all, the longest ${fmt(stalls.longestMs, 1)} ms); ` +
          `${fmt(scavenges.count)} scavenges (${fmt(scavenges.ms)} ms), ${fmt(markCompacts.count)} mark-compacts (${fmt(markCompacts.ms)} ms). ` +
          `Of the ${fmt(tail.tasks)} tasks at or past the p99 (${fmt(causes.p99, 2)} ms): ${fmt(tail.gc)} had a GC within their lag ` +
          `(${fmt(tail.major)} a mark-compact), ${fmt(tail.stall)} only a stall without one, ${fmt(tail.neither)} neither`,
      );
      r.tailCauses = causes;
    }
  }
  return r;
}

/** @type {Map<string, any>} The figures (a list) of each build's rounds, by role. */
const runs = new Map(builds.map((b) => [b.role, []]));
try {
  for (let round = 0; round < ROUNDS; round++) {
    // Back to back, the build that goes first alternating by round, so drift hits both alike.
    const order = round % 2 === 0 ? builds : [...builds].reverse();
    for (const build of order) runs.get(build.role).push(await runOnce(build, round));
  }
} finally {
  await ds.close();
}

const median = (xs) => {
  const v = [...xs].sort((a, b) => a - b);
  return v.length % 2 === 1 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};
/** Per build: the run itself (one round) or the medians of its rounds. */
const results = builds.map((b) => {
  const rs = runs.get(b.role);
  if (rs.length === 1) return rs[0];
  const m = (get) => median(rs.map(get));
  return {
    ...rs[0],
    lag: { p50: m((r) => r.lag.p50), p99: m((r) => r.lag.p99), max: m((r) => r.lag.max) },
    lagCurve: rs[0].lagCurve.map(([p], i) => [p, m((r) => r.lagCurve[i][1])]),
    serviceLag: { p50: m((r) => r.serviceLag.p50), p99: m((r) => r.serviceLag.p99), max: m((r) => r.serviceLag.max) },
    enqueueLatency: { ...rs[0].enqueueLatency, p50: m((r) => r.enqueueLatency.p50), p99: m((r) => r.enqueueLatency.p99) },
    cpuMsPerAttempt: m((r) => r.cpuMsPerAttempt),
    cpuShare: m((r) => r.cpuShare),
    rssMiB: m((r) => r.rssMiB),
    missing: Math.max(...rs.map((r) => r.missing)),
    duplicates: Math.max(...rs.map((r) => r.duplicates)),
    runs: rs,
  };
});

console.log('');
printMachine('load after the run');
console.log('');
if (ROUNDS > 1) console.log(`median of ${ROUNDS} rounds per build\n`);
printTable(
  [
    'W4',
    'durability',
    'lag p50 (ms)',
    'lag p99 (ms)',
    'lag max (ms)',
    'service-side p50 / p99 / max (ms)',
    'enqueue round trip p50 / p99 (ms)',
    'CPU ms / attempt',
    'service CPU (cores)',
    'RSS (MiB)',
  ],
  results.map((r) => [
    `${r.label}: ${fmt(r.rate)}/s × ${r.seconds} s (after ${r.warmupSeconds} s warm-up), ${r.store}`,
    r.durability,
    fmt(r.lag.p50, 2),
    fmt(r.lag.p99, 2),
    fmt(r.lag.max, 1),
    `${fmt(r.serviceLag.p50)} / ${fmt(r.serviceLag.p99)} / ${fmt(r.serviceLag.max)}`,
    `${fmt(r.enqueueLatency.p50, 2)} / ${fmt(r.enqueueLatency.p99, 2)}`,
    fmt(r.cpuMsPerAttempt, 3),
    fmt(r.cpuShare, 2),
    fmt(r.rssMiB),
  ]),
);
const after = results[0];
const before = results[1];
if (before !== undefined) {
  const ratio = (get, digits = 2) => `${(get(after) / get(before)).toFixed(digits)}×`;
  console.log('');
  console.log(`after = ${process.env.RETRYD_CLI ?? 'packages/server/dist'} (${machine.build.hash}); before = --baseline ${baseline} (${machine.baselineBuild.hash})`);
  printTable(
    ['after ÷ before', 'lag p50', 'lag p99', 'lag max', 'enqueue round trip p50', 'enqueue round trip p99', 'CPU ms / attempt', 'RSS'],
    [
      [
        args.store,
        ratio((r) => r.lag.p50),
        ratio((r) => r.lag.p99),
        ratio((r) => r.lag.max),
        ratio((r) => r.enqueueLatency.p50),
        ratio((r) => r.enqueueLatency.p99),
        ratio((r) => r.cpuMsPerAttempt),
        ratio((r) => r.rssMiB),
      ],
    ],
  );
  if (ROUNDS > 1) {
    // A median can hide a build that loses every round by a little, or one round's outlier: each round's ratio says which.
    const perRound = (get) => runs.get('after').map((a, i) => `${(get(a) / get(runs.get('before')[i])).toFixed(2)}×`).join(', ');
    console.log(`after ÷ before per round: lag p99 ${perRound((r) => r.lag.p99)}`);
    console.log(`after ÷ before per round: enqueue round trip p50 ${perRound((r) => r.enqueueLatency.p50)}`);
    console.log(`after ÷ before per round: CPU ms / attempt ${perRound((r) => r.cpuMsPerAttempt)}`);
  }
}
for (const r of results) {
  console.log('');
  printTable(
    [`${r.label}: 10 s window${ROUNDS > 1 ? ' (round 1)' : ''}`, 'tasks', 'lag p50 (ms)', 'lag p99 (ms)', 'lag max (ms)'],
    (r.runs?.[0] ?? r).windows.map((w, i) => [`${i * 10}–${i * 10 + 10} s`, fmt(w.n), fmt(w.p50, 2), fmt(w.p99, 2), fmt(w.max, 1)]),
  );
}
console.log('');
for (const r of results) console.log(`aim W4 dispatch lag p99 < 2 ms — ${r.label}: ${fmt(r.lag.p99, 2)} ms → ${r.lag.p99 < 2 ? 'MET' : 'MISSED'}`);
if (args.json) console.log(JSON.stringify({ machine, results }, null, 2));
writeJsonFile(args['json-file'], { machine, results });
process.exit(results.every((r) => r.missing === 0 && r.duplicates === 0) ? 0 : 1);
