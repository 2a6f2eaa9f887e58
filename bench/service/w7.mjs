// W7 — partial failure: protection must never starve a target that answers (../../../shared/WORKLOADS.md). Each case
// runs retryd with its default protections and with them off, one after the other, against the same downstream.
//
//   node bench/service/w7.mjs [--cases a1,a2,b20,b50,b90,d,f] [--tasks 2000] [--store sqlite|postgres|redis]
//                             [--runs defaults,off] [--timeout 100] [--dead-seconds 60] [--seed 1] [--json]
//                             [--json-file FILE]
//
// The downstream (./downstream.mjs, its own process) answers at once, as each case says:
//   a1, a2 (not ready yet): 503 to the first 1 (a2: 2) requests of each Idempotency-Key, then 200 (flaky mode);
//   b20, b50, b90 (partly failing): 503 with no Retry-After to 20%, 50%, 90% of the requests, drawn at random from a
//       generator seeded with --seed, so that every run draws the same sequence (random mode);
//   d (overload): serves 500 requests/s (a bucket of a tenth of a second's worth) and answers 503 with no Retry-After
//       beyond (overload mode);
//   f (dead): 503 to every request for --dead-seconds (the workload says 5 minutes for real; 60 here), then the run is
//       stopped (dead mode).
// Each run starts `retryd serve` on a fresh store and enqueues --tasks tasks through POST /retry-tasks/batch (each a
// POST with its own idempotency key and a small JSON body, the W7 policy below), all due at one instant after the
// enqueue:
//   defaults: `retryd serve` as it starts, no PUT /targets: the protections a user gets without asking;
//   off:      `retryd serve --protection off` (a build without that flag has no protections: it runs as it is).
// A run ends when no task is PENDING or IN_FLIGHT any more, or is stopped --timeout s after the tasks fell due (f: after
// --dead-seconds) and reported as not finished, with the tasks that succeeded by then.
// Figures per case and run: time from the first request until every task ended (SUCCEEDED or EXHAUSTED, the last
// task's `updatedAt` in the store); tasks succeeded; calls per task (requests the downstream received ÷ tasks); the
// busiest 100 ms (requests); duplicates (requests for a key after its first success); tasks lost (in a finished run,
// neither SUCCEEDED nor EXHAUSTED nor FAILED: must be 0); defaults ÷ off for the time and the calls per task.
// d adds its goodput, f the calls it made and the tasks still pending. The aims of W7 stand beside each case's defaults
// run, met (✓) or not (✗). Prints the table; --json prints the results, --json-file writes them.
// Build the service first: npm run build

import { parseArgs } from 'node:util';
import { retrydStore } from './lib/contenders/retryd.mjs';
import { peakInWindow, startDownstream } from './lib/downstream-client.mjs';
import { fmt, positiveIntOption, positiveNumberOption, printMachine, printTable, ratioText, sleep, writeJsonFile } from './lib/report.mjs';
import { CLI, serveHasFlag, startRetryd } from './lib/retryd-service.mjs';

const { values: args } = parseArgs({
  options: {
    cases: { type: 'string', default: 'a1,a2,b20,b50,b90,d,f' },
    tasks: { type: 'string', default: '2000' },
    store: { type: 'string', default: 'sqlite' },
    runs: { type: 'string', default: 'defaults,off' },
    timeout: { type: 'string', default: '100' },
    'dead-seconds': { type: 'string', default: '60' },
    seed: { type: 'string', default: '1' },
    json: { type: 'boolean', default: false },
    'json-file': { type: 'string' },
  },
});
const N = positiveIntOption(args, 'tasks');
const TIMEOUT_MS = positiveNumberOption(args, 'timeout') * 1000;
const DEAD_MS = positiveNumberOption(args, 'dead-seconds') * 1000;
const SEED = positiveIntOption(args, 'seed');
if (args.store.includes(',')) throw new Error('--store takes one store: sqlite, postgres or redis (run the script once per store)');

/** The W7 policy, every task's (WORKLOADS.md): exponential from 20 ms, ×2, capped at 1 s, 30 attempts, full jitter. */
const W7_POLICY = Object.freeze({ maxAttempts: 30, backoffType: 'EXPONENTIAL', initialDelayMs: 20, multiplier: 2, maxDelayMs: 1_000, jitterType: 'FULL' });
/** Case d's capacity (WORKLOADS.md W7). */
const CAPACITY = 500;
/** Case f's allowance: at most 100 calls an hour to a dead target (WORKLOADS.md W7), scaled to the run's length. */
const DEAD_CALLS_PER_HOUR = 100;
const WINDOW_MS = 100;

/**
 * What a defaults run must do, beside the run with the protections off: `judge(r, off)` is true (met), false (missed)
 * or undefined (cannot be told: no off run to compare with, or it did not finish).
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
    text: `≤ ${DEAD_CALLS_PER_HOUR} calls an hour (${fmt((DEAD_CALLS_PER_HOUR * DEAD_MS) / 3_600_000, 1)} in ${DEAD_MS / 1000} s)`,
    judge: (r) => r.requests <= (DEAD_CALLS_PER_HOUR * DEAD_MS) / 3_600_000,
  },
};

/** The cases of W7 this script runs (c, e and g are W3's, a slow downstream's and several targets': not here). */
const CASES = {
  a1: { title: 'not ready: 503 to the 1st request of each key', downstream: { mode: 'flaky', failFirst: 1 }, aim: AIMS.nearOff },
  a2: { title: 'not ready: 503 to the first 2 requests of each key', downstream: { mode: 'flaky', failFirst: 2 }, aim: AIMS.nearOff },
  b20: { title: 'partly failing: 503 to 20% at random', downstream: { mode: 'random', failShare: 0.2, seed: SEED }, aim: AIMS.nearOff },
  b50: { title: 'partly failing: 503 to 50% at random', downstream: { mode: 'random', failShare: 0.5, seed: SEED }, aim: AIMS.nearOff },
  b90: { title: 'partly failing: 503 to 90% at random', downstream: { mode: 'random', failShare: 0.9, seed: SEED }, aim: AIMS.soonerWithFewerCalls },
  d: { title: `overload: ${CAPACITY} requests/s, 503 beyond`, downstream: { mode: 'overload', capacityPerSecond: CAPACITY }, aim: AIMS.goodput },
  f: { title: `dead: 503 to everything for ${DEAD_MS / 1000} s`, downstream: { mode: 'dead' }, aim: AIMS.fewCalls, dead: true },
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

/** Enqueues the run's tasks, all due at one instant after the enqueue (so a case's load starts at once); returns it. */
async function enqueue(service, caseId, run) {
  const dueAt = Date.now() + 1_000 + Math.ceil(N * 0.25);
  await service.enqueueAll(
    N,
    (i) => ({
      targetUrl: `${ds.url}/w7`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ orderId: i, note: 'w7' }),
      idempotencyKey: `w7-${runId}-${caseId}-${run}-${i}`,
      policy: W7_POLICY,
      notBefore: dueAt,
    }),
    { minimal: true },
  );
  if (Date.now() > dueAt) console.log(`${caseId} ${run}: WARNING: the enqueue ended after the tasks fell due`);
  return dueAt;
}

/**
 * Whether no task is PENDING or IN_FLIGHT. IN_FLIGHT is asked before and after PENDING: a task claimed or handed back
 * between two questions would otherwise be in neither answer.
 */
async function nothingLive(service) {
  for (const status of ['IN_FLIGHT', 'PENDING', 'IN_FLIGHT']) if (await service.anyWithStatus(status)) return false;
  return true;
}

/**
 * Waits until every task ended (true) or `deadline` (epoch ms) passed (false). Nothing live must be seen twice in a
 * row: a task that slipped between the questions of one look (an attempt takes a millisecond here) will not twice.
 */
async function waitEnded(service, deadline) {
  let seen = 0;
  while (Date.now() < deadline) {
    seen = (await nothingLive(service)) ? seen + 1 : 0;
    if (seen === 2) return true;
    await sleep(200);
  }
  return false;
}

/** Every status's count in the store, and when the last task to end (a terminal status) did, from its `updatedAt`. */
async function tally(service) {
  const statuses = {};
  let lastEndedAt = null;
  for (const status of ['SUCCEEDED', 'EXHAUSTED', 'FAILED', 'CANCELLED', 'PENDING', 'IN_FLIGHT']) {
    statuses[status] = 0;
    for await (const items of service.pagesWithStatus(status)) {
      statuses[status] += items.length;
      if (status === 'PENDING' || status === 'IN_FLIGHT') continue;
      for (const t of items) lastEndedAt = Math.max(lastEndedAt ?? 0, t.updatedAt);
    }
  }
  return { statuses, lastEndedAt };
}

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

/** The downstream's figures of a run: its requests, their busiest 100 ms, duplicates; d's goodput. */
async function downstreamFigures(r) {
  const s = await ds.stats();
  const tl = await ds.timeline();
  r.requests = s.requests;
  r.callsPerTask = s.requests / N;
  r.firstSuccesses = s.firstSuccesses;
  r.duplicates = s.duplicates;
  r.firstRequestAt = s.firstRequestAt;
  r.busiest100ms = peakInWindow(Float64Array.from(tl.times).sort(), 0, WINDOW_MS);
  if (CASES[r.case].aim === AIMS.goodput) r.goodputPerSecond = goodputPerSecond(tl);
}

/** One case, one run: a fresh store and service, the tasks, the wait, the figures. */
async function runOnce(caseId, run) {
  const c = CASES[caseId];
  const r = { case: caseId, run, tasks: N };
  r.protections =
    run === 'defaults' ? 'defaults' : hasProtectionFlag ? 'off (--protection off)' : 'none (a build without --protection)';
  const store = await retrydStore(args.store, { name: `w7-${caseId}-${run}` });
  let service;
  try {
    service = await startRetryd({ store: store.url, extraArgs: run === 'off' && hasProtectionFlag ? ['--protection', 'off'] : [] });
    r.durability = store.durability;
    await ds.reset(c.downstream);
    const dueAt = await enqueue(service, caseId, run);
    r.finished = await waitEnded(service, dueAt + (c.dead ? DEAD_MS : TIMEOUT_MS));
    r.stoppedAt = Date.now();
    // The calls a dead target got in its run's length, before the tally's time adds any.
    await downstreamFigures(r);
    const { statuses, lastEndedAt } = await tally(service);
    r.statuses = statuses;
    r.succeeded = statuses.SUCCEEDED;
    // Paging PENDING and IN_FLIGHT while a stopped run's service still works can see a task twice (handed back between
    // two pages); the ended statuses only grow, so what has not ended is the rest.
    r.pending = N - statuses.SUCCEEDED - statuses.EXHAUSTED - statuses.FAILED - statuses.CANCELLED;
    if (r.finished) {
      r.lost = N - statuses.SUCCEEDED - statuses.EXHAUSTED - statuses.FAILED;
      if (r.firstRequestAt !== null && lastEndedAt !== null) r.doneMs = lastEndedAt - r.firstRequestAt;
    }
    // Not finished: it would have taken at least this long (a lower bound for the ratio to off).
    else if (r.firstRequestAt !== null) r.atLeastMs = r.stoppedAt - r.firstRequestAt;
  } catch (error) {
    r.error = error.message;
    console.error(`${caseId} ${run}: ${error.stack ?? error}`);
  } finally {
    await service?.stop();
    await store.cleanup();
  }
  console.log(runLine(r));
  return r;
}

/** A run's figures in one line, as it ends. */
function runLine(r) {
  const outcome = r.finished ? `ended after ${fmt((r.doneMs ?? NaN) / 1000, 2)} s` : `not finished (stopped)`;
  return (
    `${r.case} ${r.run}: ${outcome}, ${fmt(r.succeeded)} of ${fmt(N)} succeeded, ${fmt(r.requests)} requests ` +
    `(${r.callsPerTask?.toFixed(2)} a task), busiest 100 ms ${fmt(r.busiest100ms)}, duplicates ${fmt(r.duplicates)}` +
    `${r.goodputPerSecond === undefined ? '' : `, goodput ${fmt(r.goodputPerSecond)}/s`}, ${JSON.stringify(r.statuses ?? {})}` +
    `${r.error ? ` — ${r.error}` : ''}`
  );
}

const results = [];
try {
  for (const caseId of CASE_IDS) for (const run of RUNS) results.push(await runOnce(caseId, run));
} finally {
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
    return `${ran}: ${fmt(r.requests)} calls (${fmt((r.requests * 3_600_000) / DEAD_MS)} an hour), ${fmt(r.pending)} pending`;
  }
  return r.finished ? 'finished' : `not finished after ${TIMEOUT_MS / 1000} s: ${fmt(r.succeeded)} succeeded`;
}

/**
 * A defaults run's aim: its text (with d's goodput) and whether it was met (true, false, or undefined when it cannot
 * be told); an off run is the reference, with no aim of its own.
 */
function judgeAim(r, off) {
  if (r.run !== 'defaults') return { aim: '(the reference)' };
  const { aim } = CASES[r.case];
  const measured = r.goodputPerSecond === undefined ? '' : ` — goodput ${fmt(r.goodputPerSecond)}/s`;
  return { aim: `${aim.text}${measured}`, aimText: aim.text, aimMet: r.error === undefined ? aim.judge(r, off) : false };
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

const output = { machine, tasks: N, store: args.store, policy: W7_POLICY, capacity: CAPACITY, deadSeconds: DEAD_MS / 1000, timeoutSeconds: TIMEOUT_MS / 1000, seed: SEED, results };
if (args.json) console.log(JSON.stringify(output, null, 2));
writeJsonFile(args['json-file'], output);
process.exit(results.every((r) => r.error === undefined && (r.lost ?? 0) === 0) ? 0 : 1);
