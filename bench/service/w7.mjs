// W7 — partial failure: protection must never starve a target that answers (../../../shared/WORKLOADS.md). Each case
// runs retryd with its default protections and with them off, one after the other, against the same downstream.
//
//   node bench/service/w7.mjs [--cases a1,a2,b20,b50,b90,d,e,f,g] [--tasks 2000] [--store sqlite|postgres|redis]
//                             [--runs defaults,off] [--timeout 100] [--dead-seconds 60] [--slow-latency 200] [--seed 1]
//                             [--json] [--json-file FILE]
//
// The downstream (./downstream.mjs, its own process) answers at once (but in e), as each case says:
//   a1, a2 (not ready yet): 503 to the first 1 (a2: 2) requests of each Idempotency-Key, then 200 (flaky mode);
//   b20, b50, b90 (partly failing): 503 with no Retry-After to 20%, 50%, 90% of the requests, drawn at random from a
//       generator seeded with --seed, so that every run draws the same sequence (random mode);
//   d (overload): serves 500 requests/s (a bucket of a tenth of a second's worth) and answers 503 with no Retry-After
//       beyond (overload mode);
//   e (slow under load): serves 200 requests at once, each answered 200 after --slow-latency ms (200: why in
//       ./lib/w7-slow.mjs), and queues the rest, first come first served: its latency grows with the requests in flight
//       past 200 (slow mode); capacity 200 ÷ 200 ms = 1,000 requests/s;
//   f (dead): 503 to every request for --dead-seconds (the workload says 5 minutes for real; 60 here), then the run is
//       stopped (dead mode);
//   g (one bad target among good ones): ten targets, ten downstream processes on ten ports (retryd keys a target by
//       its origin): the first as in d, the nine others answer 200 at once (up mode). Half the tasks go to the bad one,
//       all due at once as in d; the other half round the nine good ones, due one after another at 500/s from then
//       (why in ./lib/w7-targets.mjs). Each of its runs is three: the tasks with the bad target; the same tasks with
//       the bad target answering at once like the others (the reference of the aim: what its tasks cost the good ones
//       whatever it answers); the same tasks minus the bad target's (the nine good targets alone, shown beside). Each
//       on a fresh store and service.
// Each run starts `retryd serve` on a fresh store and enqueues --tasks tasks through POST /retry-tasks/batch (each a
// POST with its own idempotency key and a small JSON body, the W7 policy below), all due at one instant after the
// enqueue (g: the good targets' from it on):
//   defaults: `retryd serve` as it starts, no PUT /targets: the protections a user gets without asking;
//   off:      `retryd serve --protection off` (a build without that flag has no protections: it runs as it is).
// A run ends when no task is PENDING or IN_FLIGHT any more, or is stopped --timeout s after the last task fell due (f:
// after --dead-seconds) and reported as not finished, with the tasks that succeeded by then.
// Figures per case and run: time from the first request until every task ended (SUCCEEDED or EXHAUSTED, the last
// task's `updatedAt` in the store); tasks succeeded; calls per task (requests the downstream received ÷ tasks); the
// busiest 100 ms (requests); duplicates (requests for a key after its first success); tasks lost (in a finished run,
// neither SUCCEEDED nor EXHAUSTED nor FAILED: must be 0); defaults ÷ off for the time and the calls per task.
// d adds its goodput, f the calls it made and the tasks still pending. e adds its goodput while the target could be kept
// full, the target's latency and most requests in flight, the attempts that ended in a timeout (the service's attempt
// log) and the requests whose client gave up (the target's count; see ./lib/w7-slow.mjs). g adds the good targets' lag,
// due time to success, p50 and p99, with the bad target and without it; its other figures are its run with it, its lost
// tasks both runs'. W7's aims stand beside each defaults run, met (✓) or not (✗), and what each run measured for them.
// Prints the table; --json prints the results, --json-file writes them.
// Build the service first: npm run build

import { parseArgs } from 'node:util';
import { retrydStore } from './lib/contenders/retryd.mjs';
import { peakInWindow, startDownstream } from './lib/downstream-client.mjs';
import { fmt, positiveIntOption, positiveNumberOption, printMachine, printTable, ratioText, writeJsonFile, messageOf, stackOf } from './lib/report.mjs';
import { CLI, serveHasFlag, startRetryd } from './lib/retryd-service.mjs';
import { projectedHourCalls } from './lib/w7-dead.mjs';
import { enqueueTasks, tally, waitEnded } from './lib/w7-run.mjs';
import { SLOW_CONCURRENCY, SLOW_LATENCY_DEFAULT_MS, slowFigures, timedOutAttempts } from './lib/w7-slow.mjs';
import {
  GOOD_PER_SECOND,
  LAG_SLACK_MS,
  TARGETS,
  combinedFigures,
  dueOffsetOf,
  goodLag,
  goodTaskCount,
  goodTaskIndex,
  lagUnaffected,
  startTargets,
  targetOf,
} from './lib/w7-targets.mjs';
import { lagText, measuredText, runLine } from './lib/w7-text.mjs';

const { values: args } = parseArgs({
  options: {
    cases: { type: 'string', default: 'a1,a2,b20,b50,b90,d,e,f,g' },
    tasks: { type: 'string', default: '2000' },
    store: { type: 'string', default: 'sqlite' },
    runs: { type: 'string', default: 'defaults,off' },
    timeout: { type: 'string', default: '100' },
    'dead-seconds': { type: 'string', default: '60' },
    'slow-latency': { type: 'string', default: String(SLOW_LATENCY_DEFAULT_MS) },
    seed: { type: 'string', default: '1' },
    json: { type: 'boolean', default: false },
    'json-file': { type: 'string' },
  },
});
const N = positiveIntOption(args, 'tasks');
const TIMEOUT_MS = positiveNumberOption(args, 'timeout') * 1000;
const DEAD_MS = positiveNumberOption(args, 'dead-seconds') * 1000;
const SEED = positiveIntOption(args, 'seed');
const SLOW_LATENCY_MS = positiveNumberOption(args, 'slow-latency');
if (args.store.includes(',')) throw new Error('--store takes one store: sqlite, postgres or redis (run the script once per store)');

/** The W7 policy, every task's (WORKLOADS.md): exponential from 20 ms, ×2, capped at 1 s, 30 attempts, full jitter. */
const W7_POLICY = Object.freeze({ maxAttempts: 30, backoffType: 'EXPONENTIAL', initialDelayMs: 20, multiplier: 2, maxDelayMs: 1_000, jitterType: 'FULL' });
/** Case d's capacity (WORKLOADS.md W7). */
const CAPACITY = 500;
/** Case f's allowance: at most 100 calls an hour to a dead target (WORKLOADS.md W7), scaled to the run's length. */
const DEAD_CALLS_PER_HOUR = 100;
/** Case e's capacity, requests per second: 200 served at once ÷ --slow-latency (./lib/w7-slow.mjs). */
const SLOW_CAPACITY = (SLOW_CONCURRENCY * 1000) / SLOW_LATENCY_MS;
const WINDOW_MS = 100;

/**
 * What a defaults run must do, beside the run with the protections off: `judge(r, off)` is true (met), false (missed)
 * or undefined (cannot be told: `untold` says why; by default, no off run to compare with, or it did not finish).
 */
const AIMS = {
  nearOff: {
    text: 'time ≤ 1.2× off, calls/task ≤ off',
    judge: (r, off) => {
      if (!r.finished) return false;
      if (off?.finished !== true) return undefined;
      return r.doneMs <= 1.2 * off.doneMs && r.requests <= off.requests;
    },
  },
  soonerWithFewerCalls: {
    text: 'time ≤ off, fewer calls/task than off',
    judge: (r, off) => {
      if (!r.finished) return false;
      if (off?.finished !== true) return undefined;
      return r.doneMs <= off.doneMs && r.requests < off.requests;
    },
  },
  goodput: {
    text: `goodput ≥ 90% of ${CAPACITY}/s, calls/task ≤ 1.2`,
    judge: (r) => r.goodputPerSecond >= 0.9 * CAPACITY && r.callsPerTask <= 1.2,
  },
  fewCalls: {
    text: `≤ ${DEAD_CALLS_PER_HOUR} calls an hour (the ${DEAD_MS / 1000} s run's, then one probe per open period for the rest of the hour)`,
    // The first minute holds the first wave and the short open periods; the hour is projected from where the run's
    // probes were spaced at its end (lib/w7-dead.mjs). No projection (still retrying every task): not met.
    judge: (r) => r.hourCalls !== null && r.hourCalls !== undefined && r.hourCalls <= DEAD_CALLS_PER_HOUR,
  },
  slowGoodput: {
    text: `goodput ≥ 90% of ${fmt(SLOW_CAPACITY)}/s, no timeouts`,
    untold: 'too few tasks to keep the target full for two latencies',
    judge: (r) => {
      if (!r.finished || r.timeouts !== 0 || r.abandoned !== 0) return false;
      return r.goodputPerSecond === undefined ? undefined : r.goodputPerSecond >= 0.9 * SLOW_CAPACITY;
    },
  },
  goodLag: {
    text: `the good targets' lag p99 ≤ 1.2× theirs with the bad one healthy, or + ${LAG_SLACK_MS} ms`,
    judge: (r) => r.finished && r.healthy?.finished === true && lagUnaffected(r.goodLag.with, r.goodLag.healthy),
  },
};

/** The cases of W7 this script runs (c is W3's outage: not here). */
const CASES = {
  a1: { title: 'not ready: 503 to the 1st request of each key', downstream: { mode: 'flaky', failFirst: 1 }, aim: AIMS.nearOff },
  a2: { title: 'not ready: 503 to the first 2 requests of each key', downstream: { mode: 'flaky', failFirst: 2 }, aim: AIMS.nearOff },
  b20: { title: 'partly failing: 503 to 20% at random', downstream: { mode: 'random', failShare: 0.2, seed: SEED }, aim: AIMS.nearOff },
  b50: { title: 'partly failing: 503 to 50% at random', downstream: { mode: 'random', failShare: 0.5, seed: SEED }, aim: AIMS.nearOff },
  b90: { title: 'partly failing: 503 to 90% at random', downstream: { mode: 'random', failShare: 0.9, seed: SEED }, aim: AIMS.soonerWithFewerCalls },
  d: { title: `overload: ${CAPACITY} requests/s, 503 beyond`, downstream: { mode: 'overload', capacityPerSecond: CAPACITY }, aim: AIMS.goodput },
  e: {
    title: `slow under load: ${SLOW_CONCURRENCY} in flight at ${fmt(SLOW_LATENCY_MS)} ms, the rest wait in line`,
    downstream: { mode: 'slow', concurrency: SLOW_CONCURRENCY, latencyMs: SLOW_LATENCY_MS },
    aim: AIMS.slowGoodput,
  },
  f: { title: `dead: 503 to everything for ${DEAD_MS / 1000} s`, downstream: { mode: 'dead' }, aim: AIMS.fewCalls, dead: true },
  g: {
    title: `one bad target among good ones: d on 1 of ${TARGETS} (half the tasks, at once), 200 at once on the others (${GOOD_PER_SECOND} tasks/s)`,
    downstream: { mode: 'overload', capacityPerSecond: CAPACITY },
    good: { mode: 'up' },
    dueOffsetOf,
    aim: AIMS.goodLag,
  },
};
const CASE_IDS = args.cases.split(',').map((s) => s.trim());
for (const c of CASE_IDS) if (!Object.hasOwn(CASES, c)) throw new Error(`--cases: unknown case ${c} (${Object.keys(CASES).join(', ')})`);
const RUNS = args.runs.split(',').map((s) => s.trim());
for (const r of RUNS) if (!['defaults', 'off'].includes(r)) throw new Error(`--runs: unknown run ${r} (defaults, off)`);

const machine = printMachine('machine');
console.log(
  `W7: ${fmt(N)} tasks a run; cases ${CASE_IDS.join(', ')}; runs ${RUNS.join(', ')}; store ${args.store}; ` +
    `timeout ${TIMEOUT_MS / 1000} s (f: ${DEAD_MS / 1000} s); policy ${JSON.stringify(W7_POLICY)}\n`,
);

const runId = Date.now().toString(36);
const hasProtectionFlag = serveHasFlag(CLI, '--protection');
const ds = await startDownstream();
/** @type {Awaited<ReturnType<typeof startTargets>> | undefined} Case g's ten downstreams (`ds` the bad one), started at its first run. */
let targets;

/**
 * First successes per second while a backlog lasted: from the first request until all but a second's capacity of the
 * tasks had succeeded. The tail after that is not the target's capacity but the last tasks' backoff.
 */
function goodputPerSecond(timeline) {
  const successes = timeline.times.filter((_, i) => timeline.answers[i] === 2).sort((a, b) => a - b);
  const upTo = Math.min(successes.length, N > CAPACITY ? N - CAPACITY : N);
  if (upTo === 0) return 0;
  return (upTo * 1000) / Math.max(successes[upTo - 1], 1);
}

/**
 * The downstreams' figures of a run of `count` tasks: their requests, the busiest 100 ms over all of them, duplicates;
 * d's goodput; e's (./lib/w7-slow.mjs).
 */
async function downstreamFigures(r, downstreams, count) {
  const s = await combinedFigures(downstreams);
  r.requests = s.requests;
  r.callsPerTask = s.requests / count;
  r.firstSuccesses = s.firstSuccesses;
  r.duplicates = s.duplicates;
  r.firstRequestAt = s.firstRequestAt;
  r.busiest100ms = peakInWindow(s.arrivals, 0, WINDOW_MS);
  const { aim } = CASES[r.case];
  if (aim === AIMS.goodput) r.goodputPerSecond = goodputPerSecond(await downstreams[0].timeline());
  if (aim === AIMS.slowGoodput) {
    Object.assign(r, slowFigures(await downstreams[0].timeline()), { capacityPerSecond: SLOW_CAPACITY });
  }
  if (aim === AIMS.fewCalls) r.hourCalls = projectedHourCalls((await downstreams[0].timeline())?.times ?? [], DEAD_MS);
}

/**
 * One run of a case: a fresh store and service, the tasks, the wait, the figures. `downstreams` (reset by the caller)
 * are those the tasks go to, `urlOf(i)` the i-th task's URL; `variant` names a run of g's without its bad target (in
 * keys and store names), `variantText` says it.
 *
 * @param {string} caseId
 * @param {string} run
 * @param {{ variant?: string | undefined, variantText?: string | undefined, count?: number | undefined,
 *   downstreams?: any[] | undefined, urlOf?: ((i: number) => string) | undefined,
 *   indexOf?: ((i: number) => number) | undefined }} [options]
 */
async function runTasks(caseId, run, { variant, variantText = variant, count = N, downstreams = [ds], urlOf = () => `${ds.url}/w7`, indexOf } = {}) {
  const c = CASES[caseId];
  const label = `${caseId} ${run}${variant === undefined ? '' : ` (${variantText})`}`;
  const r = { case: caseId, run, tasks: count };
  r.protections =
    run === 'defaults' ? 'defaults' : hasProtectionFlag ? 'off (--protection off)' : 'none (a build without --protection)';
  const name = `w7-${caseId}-${run}${variant === undefined ? '' : `-${variant}`}`;
  const store = await retrydStore(args.store, { name });
  let service;
  try {
    service = await startRetryd({ store: store.url, extraArgs: run === 'off' && hasProtectionFlag ? ['--protection', 'off'] : [] });
    r.durability = store.durability;
    const keyPrefix = `w7-${runId}-${caseId}-${run}${variant === undefined ? '' : `-${variant}`}`;
    const { dueAt, lastDueAt } = await enqueueTasks(service, { label, count, policy: W7_POLICY, keyPrefix, urlOf, indexOf, dueOffsetOf: c.dueOffsetOf });
    r.dueAt = dueAt;
    r.finished = await waitEnded(service, lastDueAt + (c.dead ? DEAD_MS : TIMEOUT_MS));
    r.stoppedAt = Date.now();
    // The calls a dead target got in its run's length, before the tally's time adds any.
    await downstreamFigures(r, downstreams, count);
    const { statuses, lastEndedAt, retried } = await tally(service);
    r.statuses = statuses;
    r.succeeded = statuses.SUCCEEDED;
    // Paging PENDING and IN_FLIGHT while a stopped run's service still works can see a task twice (handed back between
    // two pages); the ended statuses only grow, so what has not ended is the rest.
    r.pending = count - statuses.SUCCEEDED - statuses.EXHAUSTED - statuses.FAILED - statuses.CANCELLED;
    if (r.finished) {
      r.lost = count - statuses.SUCCEEDED - statuses.EXHAUSTED - statuses.FAILED;
      if (r.firstRequestAt !== null && lastEndedAt !== null) r.doneMs = lastEndedAt - r.firstRequestAt;
    }
    // Not finished: it would have taken at least this long (a lower bound for the ratio to off).
    else if (r.firstRequestAt !== null) r.atLeastMs = r.stoppedAt - r.firstRequestAt;
    // e's target never fails: every attempt but a task's last ended in a timeout or a lost connection.
    if (c.aim === AIMS.slowGoodput) Object.assign(r, await timedOutAttempts(service, retried));
  } catch (error) {
    r.error = messageOf(error);
    console.error(`${label}: ${stackOf(error)}`);
  } finally {
    await service?.stop();
    await store.cleanup();
  }
  console.log(runLine(r, label));
  return r;
}

/**
 * Case g's run: the tasks over the ten targets, then the same tasks minus the bad target's over the nine good ones
 * alone; the figures are the first run's, with the good targets' lag in both (`goodLag.with`, `goodLag.without`) and
 * the second run's own figures in `alone`.
 */
async function runSpread(caseId, run) {
  const c = CASES[caseId];
  const spread = (targets ??= await startTargets(ds));
  const resetAll = () => Promise.all(spread.all.map((d, t) => d.reset(t === 0 ? c.downstream : c.good)));
  await resetAll();
  const r = await runTasks(caseId, run, { downstreams: spread.all, urlOf: (i) => `${spread.all[targetOf(i)].url}/w7` });
  const withBad = await goodLag(spread.good, r.dueAt);
  // The same tasks with the bad target answering at once like the others: what its tasks cost the good ones whatever
  // it answers (their turn in the claims and on the event loop), the reference the aim is judged against.
  await Promise.all(spread.all.map((d) => d.reset(c.good)));
  const healthy = await runTasks(caseId, run, {
    variant: 'bad-healthy',
    variantText: 'the bad target answering at once',
    downstreams: spread.all,
    urlOf: (i) => `${spread.all[targetOf(i)].url}/w7`,
  });
  const healthyLag = await goodLag(spread.good, healthy.dueAt);
  await resetAll();
  const alone = await runTasks(caseId, run, {
    variant: 'good-alone',
    variantText: `the ${TARGETS - 1} good targets alone`,
    count: goodTaskCount(N),
    downstreams: spread.good,
    indexOf: goodTaskIndex,
    urlOf: (j) => `${spread.all[targetOf(goodTaskIndex(j))].url}/w7`,
  });
  r.goodLag = { with: withBad, healthy: healthyLag, without: await goodLag(spread.good, alone.dueAt) };
  r.healthy = healthy;
  r.alone = alone;
  if (healthy.error !== undefined) r.error ??= `with the bad target healthy: ${healthy.error}`;
  if (alone.error !== undefined) r.error ??= `without the bad target: ${alone.error}`;
  if (r.lost !== undefined) r.lost += (healthy.lost ?? 0) + (alone.lost ?? 0);
  console.log(
    `${caseId} ${run}: the good targets' lag p50 / p99 ${lagText(r.goodLag.with)} with the bad one, ` +
      `${lagText(r.goodLag.healthy)} with it healthy, ${lagText(r.goodLag.without)} without its tasks`,
  );
  return r;
}

/** One case, one run. */
async function runOnce(caseId, run) {
  if (CASES[caseId].good !== undefined) return runSpread(caseId, run);
  await ds.reset(CASES[caseId].downstream);
  return runTasks(caseId, run);
}

const results = [];
try {
  for (const caseId of CASE_IDS) for (const run of RUNS) results.push(await runOnce(caseId, run));
} finally {
  await targets?.close();
  await ds.close();
}

/**
 * defaults ÷ off, for the time and the calls: `atLeast` when the defaults run was stopped (it would have taken longer
 * and called more); a figure is undefined when there is nothing to divide.
 */
function ratios(r, off) {
  if (r.run !== 'defaults' || r.requests === undefined || off?.requests === undefined) return {};
  const calls = off.requests > 0 ? r.requests / off.requests : undefined;
  // A dead target's runs last as long as they are told to: only their calls compare.
  if (CASES[r.case].dead) return { calls };
  const time = !off.finished ? undefined : (r.finished ? r.doneMs : r.atLeastMs) / off.doneMs;
  return { time, calls, atLeast: !r.finished };
}

const mark = (ok) => (ok === true ? '✓' : ok === false ? '✗' : '?');

/** What a run came to, in the table's words: finished, stopped at the timeout, or (f) what a dead target got. */
function outcomeText(r) {
  if (r.error !== undefined) return `error: ${r.error}`;
  if (CASES[r.case].dead) {
    const ran = r.finished ? `every task ended after ${fmt(r.doneMs / 1000, 1)} s` : `ran ${DEAD_MS / 1000} s`;
    const hour = r.hourCalls === null || r.hourCalls === undefined ? `${fmt((r.requests * 3_600_000) / DEAD_MS)} an hour at that rate` : `${fmt(r.hourCalls)} in the hour, projected`;
    return `${ran}: ${fmt(r.requests)} calls (${hour}), ${fmt(r.pending)} pending`;
  }
  return r.finished ? 'finished' : `not finished after ${TIMEOUT_MS / 1000} s: ${fmt(r.succeeded)} succeeded`;
}

/**
 * A run's aim: its text, with what it measured for it (`measured`), and for a defaults run whether it was met (true,
 * false, or undefined when it cannot be told); an off run is the reference, with no aim of its own.
 */
function judgeAim(r, off) {
  const measured = measuredText(r);
  const withMeasured = (text) => ({ aim: `${text}${measured === undefined ? '' : ` — ${measured}`}`, ...(measured === undefined ? {} : { measured }) });
  if (r.run !== 'defaults') return withMeasured('(the reference)');
  const { aim } = CASES[r.case];
  const aimMet = r.error === undefined ? aim.judge(r, off) : false;
  const untold = aimMet === undefined ? { aimUntold: aim.untold ?? 'the run with the protections off did not finish' } : {};
  return { ...withMeasured(aim.text), aimText: aim.text, aimMet, ...untold };
}

console.log('');
printMachine('load after the runs', { build: false });
console.log('');
for (const r of results) {
  const off = results.find((o) => o.case === r.case && o.run === 'off');
  r.title = CASES[r.case].title;
  r.dead = CASES[r.case].dead === true;
  r.ratio = ratios(r, off);
  Object.assign(r, judgeAim(r, off));
}
printTable(
  ['case', 'run', 'outcome', 'time to done (s)', 'succeeded', 'calls/task', 'busiest 100 ms', 'duplicates', 'lost', 'time ÷ off', 'calls/task ÷ off', 'aim (W7)', 'met'],
  results.map((r) => [
    `${r.case}: ${CASES[r.case].title}`,
    r.protections,
    outcomeText(r),
    r.finished && !CASES[r.case].dead ? fmt(r.doneMs / 1000, 2) : '–',
    fmt(r.succeeded),
    r.callsPerTask === undefined ? '–' : r.callsPerTask.toFixed(2),
    fmt(r.busiest100ms),
    fmt(r.duplicates),
    r.finished ? fmt(r.lost) : '–',
    ratioText(r.ratio.time, r.ratio.atLeast),
    ratioText(r.ratio.calls, r.ratio.atLeast),
    r.aim,
    r.run === 'defaults' ? mark(r.aimMet) : '',
  ]),
);
const finished = results.filter((r) => r.finished);
const lost = finished.reduce((n, r) => n + r.lost, 0);
console.log(`\nnothing lost in the ${finished.length} finished runs: ${fmt(lost)} lost ${mark(lost === 0)}`);

const output = {
  machine,
  tasks: N,
  store: args.store,
  policy: W7_POLICY,
  capacity: CAPACITY,
  slow: { concurrency: SLOW_CONCURRENCY, latencyMs: SLOW_LATENCY_MS, capacityPerSecond: SLOW_CAPACITY },
  targets: TARGETS,
  lagSlackMs: LAG_SLACK_MS,
  deadSeconds: DEAD_MS / 1000,
  timeoutSeconds: TIMEOUT_MS / 1000,
  seed: SEED,
  results,
};
if (args.json) console.log(JSON.stringify(output, null, 2));
writeJsonFile(args['json-file'], output);
process.exit(results.every((r) => r.error === undefined && (r.lost ?? 0) === 0) ? 0 : 1);
