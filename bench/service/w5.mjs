// W5 — noisy neighbour: fairness between targets and between tenants (../../../shared/WORKLOADS.md).
//
//   node bench/service/w5.mjs [--a-tasks 200000] [--b-tasks 100] [--concurrency 32] [--a-delay 20] [--hang-tasks 300]
//                             [--variant targets,tenants,hang] [--store sqlite[,postgres,redis]] [--sync full|normal]
//                             [--baseline PATH/dist/cli/main.js] [--timeout 180] [--baseline-timeout S]
//                             [--settle 3] [--a-window 5] [--rounds 1] [--json] [--json-file FILE]
//
// targets (through the HTTP API): `retryd serve --concurrency 32` in its own process. A's tasks (--a-tasks, due now)
//   are enqueued first through POST /retry-tasks/batch (1,000 a request, 4 in flight) for target A, a downstream
//   process answering 200 after --a-delay ms; after --settle s, B's 100 tasks (due now, one batch request) for target
//   B, another downstream process on another port (so another origin) answering 200 at once.
// tenants (through the library, in process): tenants cannot be chosen over HTTP yet, so the same timeline runs through
//   `TaskService.enqueueBatch(tenantId, …)` and an `Engine` (concurrency 32) from the build's dist/, wired as
//   start-retryd.ts wires them, in a child process of this script (./lib/w5-library-process.mjs): tenant "a" with
//   --a-tasks tasks and then tenant "b" with 100, both for target A (the same origin; B's requests also take 20 ms).
// hang (through the library, as tenants): a hanging neighbour. Tenant "b"'s --b-tasks tasks for target B (answers at
//   once) are enqueued alone first; then tenant "a" enqueues --hang-tasks tasks for a target that never answers (a
//   server in this process that holds every request; the library's engine has no protection, as a target whose admin
//   turned its protections off), and after --settle s, with a's attempts hanging, b enqueues --b-tasks more. B's times
//   (p50, p99, max from its enqueue to each arrival) alone and beside the hanging neighbour, and how many of a's
//   attempts hung at b's enqueue. With slots not shared between tenants, a's tasks take every slot and b waits for
//   their attempt timeout (30 s): what the variant is there to catch.
//
// Every task carries the same inline policy (so no tenant needs a registered default policy) and its own
// idempotency key. Figures, per run:
//   - B, from B's enqueue: t0 is taken just before B's enqueue call; each B task's time is its request's arrival at
//     the downstream (its success as the target sees it), minus t0: first, p50, max. Also when all of B were
//     recorded SUCCEEDED in the store: polled through GET /retry-tasks/{id} (targets) or stamped by the engine's
//     onAttempt hook, which runs once the result is durable (tenants). A build that has not served all of B within
//     --timeout s (--baseline-timeout for the old build) is reported as "> X s", with how many of B got through.
//   - A's throughput (first successes per second at A's downstream): alone (the --settle s before t0), while B
//     waited (t0 to B's last arrival), and over the --a-window s from t0. The ceiling is concurrency ÷ delay
//     (32 ÷ 20 ms = 1,600/s). A's backlog left at t0 is printed beside it.
// --baseline <older build's dist/cli/main.js> runs that build too (`retryd (before)`) in the same run, on the same
// downstreams, back to back with the current build in every round (the first alternating by round); for the tenants
// variant its dist/ is the one beside that CLI. The report adds after ÷ before. The current build is
// packages/server/dist, or RETRYD_CLI's.
// Build the service first: npm run build

import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { retrydStore } from './lib/contenders/retryd.mjs';
import { startDownstream } from './lib/downstream-client.mjs';
import { libraryProcess } from './lib/w5-library-client.mjs';
import { CURRENT_DIST, distOf, fmt, inParallel, printMachine, printTable, serviceBuild, sleep, positiveIntOption, writeJsonFile, messageOf, stackOf } from './lib/report.mjs';
import { CLI, startRetryd } from './lib/retryd-service.mjs';

const { values: args } = parseArgs({
  options: {
    'a-tasks': { type: 'string', default: '200000' },
    'b-tasks': { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '32' },
    'a-delay': { type: 'string', default: '20' },
    'hang-tasks': { type: 'string', default: '300' },
    variant: { type: 'string', default: 'targets,tenants,hang' },
    store: { type: 'string', default: 'sqlite' },
    sync: { type: 'string', default: 'full' },
    baseline: { type: 'string' },
    timeout: { type: 'string', default: '180' },
    'baseline-timeout': { type: 'string' },
    settle: { type: 'string', default: '3' },
    'a-window': { type: 'string', default: '5' },
    rounds: { type: 'string', default: '1' },
    json: { type: 'boolean', default: false },
    'json-file': { type: 'string' },
  },
});
const positiveInt = (name) => positiveIntOption(args, name);
const nonNegative = (name, value = args[name]) => {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a number >= 0, got ${value}`);
  return n;
};
const A_TASKS = positiveInt('a-tasks');
const B_TASKS = positiveInt('b-tasks');
const HANG_TASKS = positiveInt('hang-tasks');
const CONCURRENCY = positiveInt('concurrency');
const ROUNDS = positiveInt('rounds');
const A_DELAY = nonNegative('a-delay');
const SETTLE_S = nonNegative('settle');
const A_WINDOW_S = nonNegative('a-window');
const TIMEOUT_S = nonNegative('timeout');
const BASELINE_TIMEOUT_S = args['baseline-timeout'] === undefined ? TIMEOUT_S : nonNegative('baseline-timeout');
const variants = args.variant.split(',').map((s) => s.trim());
for (const v of variants) if (!['targets', 'tenants', 'hang'].includes(v)) throw new Error(`--variant: unknown variant ${v} (targets, tenants, hang)`);
const storeKinds = args.store.split(',').map((s) => s.trim());
if (!['full', 'normal'].includes(args.sync)) throw new Error(`--sync must be full or normal, got ${args.sync}`);
const baseline = args.baseline === undefined ? undefined : resolve(args.baseline);
if (baseline !== undefined && !existsSync(baseline)) throw new Error(`--baseline: no such file ${baseline} (build it: cd <checkout> && npm run build)`);

const builds = [{ role: 'after', label: 'retryd', cli: CLI, dist: CURRENT_DIST, timeoutS: TIMEOUT_S }];
if (baseline !== undefined) builds.push({ role: 'before', label: 'retryd (before)', cli: baseline, dist: distOf(baseline), timeoutS: BASELINE_TIMEOUT_S });
for (const b of builds) b.build = serviceBuild(b.dist).hash;

const PATHS = {
  targets: 'HTTP API: POST /retry-tasks/batch to `retryd serve` (its own process; API and engine in it)',
  tenants: 'library, in process: TaskService.enqueueBatch(tenant, …) + Engine from the build\'s dist/ (a child process of the bench, no HTTP)',
  hang: `library, as tenants: b alone, then b beside tenant a's ${HANG_TASKS} tasks on a target that never answers`,
};
/** The same inline policy on every task: no tenant needs a registered `default` policy (old builds refuse that). */
const POLICY = Object.freeze({ maxAttempts: 5, backoffType: 'EXPONENTIAL', initialDelayMs: 100, multiplier: 2, maxDelayMs: 10_000, jitterType: 'FULL' });
const epochNow = () => performance.timeOrigin + performance.now();

const machine = printMachine('machine', { baseline });
console.log(
  `W5: ${fmt(A_TASKS)} tasks due now for A (answers after ${A_DELAY} ms), then after ${SETTLE_S} s ${fmt(B_TASKS)} due now for B; ` +
    `concurrency ${CONCURRENCY} (A's ceiling ${fmt((CONCURRENCY * 1000) / Math.max(A_DELAY, 1e-9))} tasks/s); ` +
    `B waited for at most ${TIMEOUT_S} s${baseline === undefined ? '' : ` (before: ${BASELINE_TIMEOUT_S} s)`}; stores ${storeKinds.join(', ')}`,
);
for (const v of variants) console.log(`  ${v}: ${PATHS[v]}`);
console.log('');

const runId = Date.now().toString(36);
const dsA = await startDownstream();
const dsB = await startDownstream();
const hanging = variants.includes('hang') ? await startHangingServer() : undefined;

/** A target that never answers: every request is held until the server closes. Counts the requests that arrived. */
async function startHangingServer() {
  let arrived = 0;
  const server = createServer((req) => {
    req.resume();
    arrived++;
  });
  await new Promise((res) => server.listen(0, '127.0.0.1', () => res(undefined)));
  return {
    url: `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}`,
    arrived: () => arrived,
    reset: () => {
      server.closeAllConnections();
      arrived = 0;
    },
    close: () => new Promise((res) => (server.closeAllConnections(), server.close(res))),
  };
}

/** A task input due now. */
const input = (targetUrl, key, i) => ({
  targetUrl,
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ n: i, note: 'w5' }),
  idempotencyKey: key,
  policy: POLICY,
});

/**
 * After B's enqueue at `t0`: waits for B's arrivals (up to the build's timeout), then for the end of A's window,
 * and works out B's times and A's throughput. `recordedAt()` resolves with when all of B were SUCCEEDED in the
 * store (epoch ms), or undefined.
 */
async function measure({ t0, bEnqueuedAt, bDs, bPrefix, aPrefix, timeoutS, recordedAt }) {
  const deadline = t0 + timeoutS * 1000;
  const watched = await bDs.watch(bPrefix, B_TASKS, { timeoutMs: Math.max(0, deadline - epochNow()) });
  const arrived = [...(await bDs.arrivals({ prefix: bPrefix })).values()].map((at) => at - t0).sort((a, b) => a - b);
  const allIn = arrived.length >= B_TASKS;
  const recorded = allIn ? await recordedAt() : undefined;
  // Nearest-rank over all of B, the missing ones counting as later than the timeout.
  const rank = (p) => Math.ceil((p / 100) * B_TASKS);
  const at = (p) => (arrived.length >= rank(p) ? arrived[rank(p) - 1] : undefined);
  const bEnd = allIn ? t0 + arrived[arrived.length - 1] : Math.min(epochNow(), deadline);
  const windowEnd = t0 + A_WINDOW_S * 1000;
  if (epochNow() < windowEnd) await sleep(windowEnd - epochNow());
  const count = (from, to) => dsA.countArrivals({ prefix: aPrefix, from, to });
  const aBefore = await count(t0 - SETTLE_S * 1000, t0);
  const aDuring = await count(t0, bEnd);
  const aWindow = await count(t0, windowEnd);
  const aDoneAtT0 = await count(-Infinity, t0);
  const aDoneAtEnd = await count(-Infinity, Infinity);
  // A's backlog ran dry inside the window: its rate over the window then understates what the service could do.
  const aRanOut = (await count(-Infinity, windowEnd)) >= A_TASKS;
  return {
    timedOut: !allIn,
    timeoutS,
    bArrived: arrived.length,
    bEnqueueMs: bEnqueuedAt - t0,
    bFirstMs: arrived[0],
    bP50Ms: at(50),
    bMaxMs: allIn ? arrived[arrived.length - 1] : undefined,
    bRecordedMs: recorded === undefined ? undefined : recorded - t0,
    watched: watched.reached,
    aLeftAtT0: A_TASKS - aDoneAtT0,
    aDoneAtEnd,
    aAlonePerSec: SETTLE_S > 0 ? aBefore / SETTLE_S : NaN,
    aWhileBPerSec: bEnd > t0 ? aDuring / ((bEnd - t0) / 1000) : NaN,
    aWhileBWindowMs: bEnd - t0,
    aWindowPerSec: A_WINDOW_S > 0 ? aWindow / A_WINDOW_S : NaN,
    aRanOut,
  };
}

/** The targets variant, through the HTTP API of `retryd serve`. */
async function runTargets(build, storeKind, round) {
  const prefix = `w5-${runId}-${round}-${build.role}-targets-`;
  const aPrefix = `${prefix}a-`;
  const bPrefix = `${prefix}b-`;
  await dsA.reset({ mode: 'ok', delayMs: A_DELAY });
  await dsB.reset({ mode: 'ok' });
  const store = await retrydStore(storeKind, { sync: args.sync, name: build.role === 'before' ? 'before-w5-targets' : 'w5-targets' });
  let service;
  try {
    service = await startRetryd({ cli: build.cli, store: store.url, sync: args.sync, concurrency: CONCURRENCY });
    const started = performance.now();
    await inParallel(Math.ceil(A_TASKS / 1000), 4, async (b) => {
      const inputs = [];
      for (let i = b * 1000; i < Math.min(A_TASKS, (b + 1) * 1000); i++) inputs.push(input(`${dsA.url}/a`, `${aPrefix}${i}`, i));
      await service.enqueueBatch(inputs);
    });
    const aEnqueueMs = performance.now() - started;
    await sleep(SETTLE_S * 1000);
    const bInputs = Array.from({ length: B_TASKS }, (_, i) => input(`${dsB.url}/b`, `${bPrefix}${i}`, i));
    const t0 = epochNow();
    const created = await service.enqueueBatch(bInputs);
    const bEnqueuedAt = epochNow();
    const recordedAt = async () => {
      // Polled once B's requests have all arrived; each task is read until it is SUCCEEDED (within 30 s).
      let pending = created.map((t) => t.taskId);
      const until = Date.now() + 30_000;
      while (pending.length > 0 && Date.now() < until) {
        const still = [];
        await inParallel(pending.length, 8, async (i) => {
          const task = await service.call('GET', `/retry-tasks/${pending[i]}`);
          if (task.status !== 'SUCCEEDED') still.push(pending[i]);
        });
        if (still.length === 0) return epochNow();
        pending = still;
        await sleep(5);
      }
      return undefined;
    };
    const r = await measure({ t0, bEnqueuedAt, bDs: dsB, bPrefix, aPrefix, timeoutS: build.timeoutS, recordedAt });
    return { ...r, aEnqueuePerSec: A_TASKS / (aEnqueueMs / 1000), store: store.label, durability: store.durability };
  } finally {
    await service?.stop();
    await store.cleanup();
  }
}

/** The tenants variant, through the library in a child process: tenants "a" and "b", one target. */
async function runTenants(build, storeKind, round) {
  const prefix = `w5-${runId}-${round}-${build.role}-tenants-`;
  const aPrefix = `${prefix}a-`;
  const bPrefix = `${prefix}b-`;
  await dsA.reset({ mode: 'ok', delayMs: A_DELAY });
  const store = await retrydStore(storeKind, { sync: args.sync, name: build.role === 'before' ? 'before-w5-tenants' : 'w5-tenants' });
  let lib;
  try {
    lib = await libraryProcess(build.dist);
    await lib.call('open', { storeUrl: store.url, sync: args.sync, concurrency: CONCURRENCY });
    const target = `${dsA.url}/a`;
    const { ms } = await lib.call('enqueueMany', { tenantId: 'a', count: A_TASKS, keyPrefix: aPrefix, template: { ...input(target, '', 0), body: undefined } });
    await sleep(SETTLE_S * 1000);
    const bInputs = Array.from({ length: B_TASKS }, (_, i) => input(target, `${bPrefix}${i}`, i));
    const { startedAt: t0, endedAt: bEnqueuedAt } = await lib.call('enqueueTimed', { tenantId: 'b', inputs: bInputs });
    const recordedAt = async () => {
      const until = Date.now() + 30_000;
      for (;;) {
        const rec = await lib.call('recorded', { tenantId: 'b' });
        if (rec.length >= B_TASKS) return Math.max(...rec.map(([, at]) => at));
        if (Date.now() > until) return undefined;
        await sleep(5);
      }
    };
    const r = await measure({ t0, bEnqueuedAt, bDs: dsA, bPrefix, aPrefix, timeoutS: build.timeoutS, recordedAt });
    const errors = await lib.call('errors');
    if (errors.length > 0) console.log(`  ${build.label} library process reported: ${errors.slice(0, 3).join('; ')}`);
    return { ...r, aEnqueuePerSec: A_TASKS / (ms / 1000), store: store.label, durability: store.durability };
  } finally {
    await lib?.close();
    await store.cleanup();
  }
}

/**
 * The hang variant, through the library: tenant b's tasks alone, then beside tenant a's tasks hanging on a target that
 * never answers. B's times from its enqueue to each arrival at B's downstream: nearest-rank p50, p99, max.
 */
async function runHang(build, storeKind, round) {
  // Started whenever the variants include hang, the only ones that run this.
  const hangs = /** @type {NonNullable<typeof hanging>} */ (hanging);
  const prefix = `w5-${runId}-${round}-${build.role}-hang-`;
  await dsB.reset({ mode: 'ok' });
  hangs.reset();
  const store = await retrydStore(storeKind, { sync: args.sync, name: build.role === 'before' ? 'before-w5-hang' : 'w5-hang' });
  let lib;
  try {
    lib = await libraryProcess(build.dist);
    await lib.call('open', { storeUrl: store.url, sync: args.sync, concurrency: CONCURRENCY });
    const bTimes = async (bPrefix) => {
      const bInputs = Array.from({ length: B_TASKS }, (_, i) => input(`${dsB.url}/b`, `${bPrefix}${i}`, i));
      const { startedAt: t0 } = await lib.call('enqueueTimed', { tenantId: 'b', inputs: bInputs });
      const watched = await dsB.watch(bPrefix, B_TASKS, { timeoutMs: Math.max(0, t0 + build.timeoutS * 1000 - epochNow()) });
      const arrived = [...(await dsB.arrivals({ prefix: bPrefix })).values()].map((at) => at - t0).sort((a, b) => a - b);
      const at = (p) => {
        const rank = Math.ceil((p / 100) * B_TASKS);
        return arrived.length >= rank ? arrived[rank - 1] : undefined;
      };
      return { arrived: arrived.length, p50: at(50), p99: at(99), max: arrived.length >= B_TASKS ? arrived[B_TASKS - 1] : undefined, watched: watched.reached };
    };
    const alone = await bTimes(`${prefix}alone-`);
    const hangTemplate = { ...input(`${hangs.url}/a`, '', 0), body: undefined };
    await lib.call('enqueueMany', { tenantId: 'a', count: HANG_TASKS, keyPrefix: `${prefix}a-`, template: hangTemplate });
    await sleep(SETTLE_S * 1000);
    const hungAtB = hangs.arrived();
    const beside = await bTimes(`${prefix}beside-`);
    const errors = await lib.call('errors');
    if (errors.length > 0) console.log(`  ${build.label} library process reported: ${errors.slice(0, 3).join('; ')}`);
    return {
      timedOut: beside.max === undefined || alone.max === undefined,
      timeoutS: build.timeoutS,
      hungAtB,
      bArrived: beside.arrived,
      bAloneP50Ms: alone.p50,
      bAloneP99Ms: alone.p99,
      bAloneMaxMs: alone.max,
      bBesideP50Ms: beside.p50,
      bBesideP99Ms: beside.p99,
      bBesideMaxMs: beside.max,
      store: store.label,
      durability: store.durability,
    };
  } finally {
    // The engine stops within its grace (5 s), then aborts a's hanging attempts.
    await lib?.close();
    await store.cleanup();
  }
}

const secs = (ms) => (ms === undefined ? undefined : ms / 1000);
/** "1,234 ms", or "> 180 s" when the figure fell past the timeout. */
const showMs = (ms, r) => (ms === undefined ? `> ${fmt(r.timeoutS)} s` : ms >= 10_000 ? `${fmt(secs(ms), 1)} s` : `${fmt(ms, ms < 10 ? 1 : 0)} ms`);

/** @type {Record<string, any>[]} One row per run: its variant, store, round and build, and its figures or its error. */
const results = [];
try {
  for (const storeKind of storeKinds) {
    for (const variant of variants) {
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? builds : [...builds].reverse();
        for (const build of order) {
          const run = variant === 'targets' ? runTargets : variant === 'tenants' ? runTenants : runHang;
          /** @type {Record<string, any>} */
          let r;
          try {
            r = await run(build, storeKind, round);
          } catch (error) {
            console.error(`${build.label} ${variant} on ${storeKind}: ${stackOf(error)}`);
            r = { error: messageOf(error) };
          }
          r = { variant, storeKind, round, role: build.role, label: build.label, build: build.build, ...r };
          results.push(r);
          if (r.error !== undefined) continue;
          if (variant === 'hang') {
            console.log(
              `${r.label} [build ${r.build}] hang on ${r.store}${ROUNDS > 1 ? `, round ${round + 1}` : ''}: ${fmt(r.hungAtB)} of a's attempts hanging at b's enqueue; ` +
                `B alone p50 ${showMs(r.bAloneP50Ms, r)}, p99 ${showMs(r.bAloneP99Ms, r)}; beside the hanging neighbour (${fmt(r.bArrived)}/${fmt(B_TASKS)} arrived) ` +
                `p50 ${showMs(r.bBesideP50Ms, r)}, p99 ${showMs(r.bBesideP99Ms, r)}, max ${showMs(r.bBesideMaxMs, r)}`,
            );
            continue;
          }
          console.log(
            `${r.label} [build ${r.build}] ${variant} on ${r.store}${ROUNDS > 1 ? `, round ${round + 1}` : ''}: ` +
              `A enqueued at ${fmt(r.aEnqueuePerSec)} tasks/s, ${fmt(r.aLeftAtT0)} of A left at B's enqueue; ` +
              `B (${fmt(r.bArrived)}/${fmt(B_TASKS)} arrived) first ${showMs(r.bFirstMs, r)}, p50 ${showMs(r.bP50Ms, r)}, max ${showMs(r.bMaxMs, r)}, ` +
              `all SUCCEEDED in the store ${showMs(r.bRecordedMs, r)}; A ${fmt(r.aAlonePerSec)}/s alone, ${fmt(r.aWhileBPerSec)}/s while B waited ` +
              `(${fmt(r.aWhileBWindowMs)} ms), ${fmt(r.aWindowPerSec)}/s over ${A_WINDOW_S} s from B's enqueue${r.aRanOut ? ' (A ran out)' : ''}`,
          );
        }
      }
    }
  }
} finally {
  await dsA.close();
  await dsB.close();
  await hanging?.close();
}

const median = (xs) => {
  const v = xs.filter((x) => x !== undefined && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return undefined;
  return v.length % 2 === 1 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};
/** @type {Record<string, any>[]} One row per (store, variant, build): the run, or the medians of its rounds (a timed-out figure stays "> X"). */
const rows = [];
for (const storeKind of storeKinds) {
  for (const variant of variants) {
    for (const build of builds) {
      const rs = results.filter((r) => r.storeKind === storeKind && r.variant === variant && r.role === build.role && r.error === undefined);
      if (rs.length === 0) {
        rows.push({ storeKind, variant, role: build.role, label: build.label, build: build.build, error: true, timeoutS: build.timeoutS });
        continue;
      }
      const m = (k) => (rs.some((r) => r[k] === undefined) ? undefined : median(rs.map((r) => r[k])));
      rows.push({
        ...rs[0],
        rounds: rs.length,
        ...Object.fromEntries(
          [
            ...(variant === 'hang'
              ? ['hungAtB', 'bAloneP50Ms', 'bAloneP99Ms', 'bAloneMaxMs', 'bBesideP50Ms', 'bBesideP99Ms', 'bBesideMaxMs']
              : ['bFirstMs', 'bP50Ms', 'bMaxMs', 'bRecordedMs', 'bEnqueueMs', 'aAlonePerSec', 'aWhileBPerSec', 'aWhileBWindowMs', 'aWindowPerSec', 'aEnqueuePerSec', 'aLeftAtT0']),
            'bArrived',
          ].map(
            (k) => [k, m(k)],
          ),
        ),
        timedOut: rs.some((r) => r.timedOut),
        aRanOut: rs.some((r) => r.aRanOut),
      });
    }
  }
}

console.log('');
printMachine('load after the run');
console.log('');
if (ROUNDS > 1) console.log(`median of ${ROUNDS} rounds per row\n`);
printTable(
  [
    'W5',
    'path',
    'store',
    'A left at B\'s enqueue',
    'B first (from B\'s enqueue)',
    'B p50',
    'B max',
    'B all SUCCEEDED in store',
    'A alone (tasks/s)',
    'A while B waited (tasks/s)',
    `A over ${A_WINDOW_S} s from B's enqueue (tasks/s)`,
    'A enqueue (tasks/s)',
  ],
  rows.filter((r) => r.variant !== 'hang').map((r) =>
    r.error
      ? [`${r.label}, ${r.variant}`, r.variant === 'targets' ? 'HTTP API' : 'library', r.storeKind, 'FAILED', '', '', '', '', '', '', '', '']
      : [
          `${r.label} [${r.build}], ${r.variant}`,
          r.variant === 'targets' ? 'HTTP API' : 'library (in process)',
          r.store,
          fmt(r.aLeftAtT0),
          showMs(r.bFirstMs, r),
          showMs(r.bP50Ms, r),
          r.timedOut ? `> ${fmt(r.timeoutS)} s (${fmt(r.bArrived)} of ${fmt(B_TASKS)} in)` : showMs(r.bMaxMs, r),
          showMs(r.bRecordedMs, r),
          fmt(r.aAlonePerSec),
          `${fmt(r.aWhileBPerSec)} (over ${fmt(r.aWhileBWindowMs)} ms)`,
          `${fmt(r.aWindowPerSec)}${r.aRanOut ? ' (A ran out)' : ''}`,
          fmt(r.aEnqueuePerSec),
        ],
  ),
);

const hangRows = rows.filter((r) => r.variant === 'hang');
if (hangRows.length > 0) {
  console.log('');
  console.log(`B beside a hanging neighbour: tenant a's ${fmt(HANG_TASKS)} tasks on a target that never answers, no protection, ${fmt(CONCURRENCY)} slots`);
  printTable(
    ['W5 hang', 'store', "a's attempts hanging", 'B p50 alone', 'B p99 alone', 'B p50 beside', 'B p99 beside', 'B max beside'],
    hangRows.map((r) =>
      r.error
        ? [r.label, r.storeKind, 'FAILED', '', '', '', '', '']
        : [
            `${r.label} [${r.build}]`,
            r.store,
            fmt(r.hungAtB),
            showMs(r.bAloneP50Ms, r),
            showMs(r.bAloneP99Ms, r),
            showMs(r.bBesideP50Ms, r),
            showMs(r.bBesideP99Ms, r),
            r.timedOut ? `> ${fmt(r.timeoutS)} s (${fmt(r.bArrived)} of ${fmt(B_TASKS)} in)` : showMs(r.bBesideMaxMs, r),
          ],
    ),
  );
}

if (baseline !== undefined) {
  // after ÷ before; a "before" past its timeout gives a bound: after ÷ before < after ÷ timeout.
  const ratio = (a, b, timeoutS) => {
    if (a === undefined || !Number.isFinite(a)) return '–';
    if (b === undefined) return `< ${(a / (timeoutS * 1000)).toPrecision(2)}×`;
    return `${(a / b).toPrecision(2)}×`;
  };
  const perSec = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(2)}×` : '–');
  console.log('');
  console.log(`after = ${process.env.RETRYD_CLI ?? 'packages/server/dist'} (${builds[0].build}); before = --baseline ${baseline} (${builds[1].build})`);
  const pairRows = [];
  for (const storeKind of storeKinds) {
    for (const variant of variants) {
      const a = rows.find((r) => r.storeKind === storeKind && r.variant === variant && r.role === 'after');
      const b = rows.find((r) => r.storeKind === storeKind && r.variant === variant && r.role === 'before');
      if (a === undefined || b === undefined || a.error || b.error) continue;
      if (variant === 'hang') {
        pairRows.push([
          `hang (library), ${storeKind}`,
          ratio(a.bBesideP50Ms, b.bBesideP50Ms, b.timeoutS),
          ratio(a.bBesideMaxMs, b.bBesideMaxMs, b.timeoutS),
          '–',
          '–',
          `${showMs(a.bBesideMaxMs, a)} vs ${b.timedOut ? `> ${fmt(b.timeoutS)} s` : showMs(b.bBesideMaxMs, b)}`,
        ]);
        continue;
      }
      pairRows.push([
        `${variant} (${variant === 'targets' ? 'HTTP API' : 'library'}), ${storeKind}`,
        ratio(a.bP50Ms, b.bP50Ms, b.timeoutS),
        ratio(a.bMaxMs, b.bMaxMs, b.timeoutS),
        perSec(a.aAlonePerSec, b.aAlonePerSec),
        perSec(a.aWindowPerSec, b.aWindowPerSec),
        `${showMs(a.bMaxMs, a)} vs ${b.timedOut ? `> ${fmt(b.timeoutS)} s` : showMs(b.bMaxMs, b)}`,
      ]);
    }
  }
  printTable(['after ÷ before', 'B p50', 'B max', 'A alone', `A over ${A_WINDOW_S} s from B's enqueue`, 'B max: after vs before'], pairRows);
}
const output = { machine, aTasks: A_TASKS, bTasks: B_TASKS, hangTasks: HANG_TASKS, concurrency: CONCURRENCY, aDelayMs: A_DELAY, aWindowS: A_WINDOW_S, results, rows };
if (args.json) console.log(JSON.stringify(output, null, 2));
writeJsonFile(args['json-file'], output);
process.exit(results.every((r) => r.error === undefined) ? 0 : 1);
