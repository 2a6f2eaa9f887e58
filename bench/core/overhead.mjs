#!/usr/bin/env node
// Overhead of `retry()` from @retryd/core next to cockatiel and p-retry, measured side by side in one run.
//
//   npm run bench:core            # table
//   npm run bench:core -- --json  # machine-readable results
//
// Two questions, each answered by the median of several interleaved rounds (every round runs every
// library once, in a rotated order, so drift on a shared machine hits all of them alike):
//   (a) What does wrapping a call cost when the first try succeeds?  overhead = t(call) − t(direct call).
//   (b) What does one retry cost with zero delay?                      per retry = t(fail once) − t(first try).
//
// Fairness of "zero delay" (read from the peers' sources, and checked at run time by counting setTimeout):
// - cockatiel 3.2.1 `ConstantBackoff(0)`: RetryPolicy.execute always awaits `setTimeout(resolve, 0)` and has no
//   way to skip it. Node turns any delay below 1 ms (0 included) into 1 ms, so that is a real 1 ms timer.
// - p-retry 7.1.1 `minTimeout: 0`: the delay is 0 and p-retry skips its setTimeout when the delay is not > 0,
//   so there is no timer at all. `minTimeout: 1` gives a real 1 ms timer.
// - retryd: `initialDelayMs` must be > 0. FIXED 0.001 ms with no jitter makes the system clock call
//   setTimeout(0.001), which Node also turns into 1 ms. A `clock` option whose sleep resolves at once removes
//   the timer; its `now` stays the system clock's, so only the sleep differs from (a).
// So (b) is measured twice:
//   (b1) no timer: retryd with an instant sleep vs p-retry minTimeout 0. cockatiel cannot skip its timer: n/a.
//   (b2) one real 1 ms timer per retry: all three. A call then mostly waits ~1 ms for the timer, which hides
//        the library. So these calls run 1,000 at a time and the wall time is divided by the calls: the
//        timers expire while the batch is still being processed, so the figure is CPU cost, timer included.
//        The sequential latency is printed too, to show that the 1 ms timer dominates it.
// Each library runs with its defaults otherwise: retryd's default error classifier, cockatiel's handleAll
// and p-retry's shouldRetry. The failing attempt throws a fresh Error, as real code does. "no library" rows
// make the same calls by hand, to show what the failure itself costs.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { retry, systemClock } from '@retryd/core';
import { ConstantBackoff, handleAll, retry as cockatielRetry } from 'cockatiel';
import pRetry from 'p-retry';

const JSON_OUTPUT = process.argv.includes('--json');
// Every round of every case lasts about `roundMs` (call count calibrated in the warm-up, at most `maxCalls`), so the
// slow cases do not stretch the run: the whole benchmark takes ~30–40 s on a 2-core machine.
const CONFIG = {
  firstTry: { rounds: 7, roundMs: 300, maxCalls: 200_000, warmupChunk: 1_000 },
  noTimer: { rounds: 7, roundMs: 300, maxCalls: 100_000, warmupChunk: 1_000 },
  timerBatched: { rounds: 7, roundMs: 250, maxCalls: 100_000, warmupChunk: 1_000, width: 1_000 },
  timerLatency: { rounds: 7, roundMs: 120, maxCalls: 1_000, warmupChunk: 10 },
};

// ---- the work: every attempt is counted, so each round can prove that every call retried as intended ----
let attempts = 0;
const succeed = async () => {
  attempts++;
  return 1;
};
/** A fresh function per call that fails its first attempt and succeeds on the second. */
const failOnce = () => {
  let calls = 0;
  return async () => {
    attempts++;
    if (calls++ === 0) throw new Error('transient failure');
    return 1;
  };
};
const sleep1ms = () => new Promise((resolve) => setTimeout(resolve, 1));

// ---- the libraries, configured once outside the loops, as users do ----
/** @type {Partial<import('@retryd/core').RetryPolicy>} */
const retrydPolicy = { maxAttempts: 3, backoffType: 'FIXED', initialDelayMs: 0.001, maxDelayMs: 0.001, jitterType: 'NONE' };
const retrydInstantSleep = { clock: { now: systemClock.now, sleep: () => Promise.resolve() } };
const cockatielPolicy = cockatielRetry(handleAll, { maxAttempts: 2, backoff: new ConstantBackoff(0) });
const pRetryNoTimer = { retries: 2, minTimeout: 0 };
const pRetryTimer = { retries: 2, minTimeout: 1 };

const firstTryCases = [
  { name: 'no library (direct call)', key: 'baseline', attemptsPerCall: 1, call: () => succeed() },
  { name: 'retryd', key: 'retryd', attemptsPerCall: 1, call: () => retry(succeed, retrydPolicy) },
  { name: 'cockatiel', key: 'cockatiel', attemptsPerCall: 1, call: () => cockatielPolicy.execute(succeed) },
  { name: 'p-retry', key: 'pRetry', attemptsPerCall: 1, call: () => pRetry(succeed, pRetryNoTimer) },
];
const noTimerCases = [
  {
    name: 'no library (catch, call again)',
    key: 'baseline',
    attemptsPerCall: 2,
    call: async () => {
      const fn = failOnce();
      try {
        return await fn();
      } catch {
        return fn();
      }
    },
  },
  { name: 'retryd (instant sleep)', key: 'retryd', attemptsPerCall: 2, call: () => retry(failOnce(), retrydPolicy, retrydInstantSleep) },
  { name: 'cockatiel', key: 'cockatiel', skip: 'always awaits setTimeout; see (b2)' },
  { name: 'p-retry (minTimeout 0)', key: 'pRetry', attemptsPerCall: 2, call: () => pRetry(failOnce(), pRetryNoTimer) },
];
const timerCases = [
  {
    name: 'no library (catch, setTimeout 1, again)',
    key: 'baseline',
    attemptsPerCall: 2,
    call: async () => {
      const fn = failOnce();
      try {
        return await fn();
      } catch {
        await sleep1ms();
        return fn();
      }
    },
  },
  { name: 'retryd (FIXED 0.001 ms)', key: 'retryd', attemptsPerCall: 2, call: () => retry(failOnce(), retrydPolicy) },
  { name: 'cockatiel (ConstantBackoff 0)', key: 'cockatiel', attemptsPerCall: 2, call: () => cockatielPolicy.execute(failOnce()) },
  { name: 'p-retry (minTimeout 1)', key: 'pRetry', attemptsPerCall: 2, call: () => pRetry(failOnce(), pRetryTimer) },
];

// ---- measurement ----
async function runSequential(call, calls) {
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) await call();
  return ((performance.now() - t0) * 1e6) / calls;
}

async function runBatched(call, calls, width) {
  const t0 = performance.now();
  for (let done = 0; done < calls; done += width) {
    const batch = new Array(width);
    for (let j = 0; j < width; j++) batch[j] = call();
    await Promise.all(batch);
  }
  return ((performance.now() - t0) * 1e6) / calls;
}

/** setTimeout calls per call of `call`: checks each library really does (or skips) the timer claimed above. */
async function timersPerCall(call, calls = 20) {
  const realSetTimeout = globalThis.setTimeout;
  let timers = 0;
  // Typed as Node's setTimeout (it has a `__promisify__` the counter does not need); it passes every call on unchanged.
  globalThis.setTimeout = /** @type {typeof setTimeout} */ (
    /** @type {unknown} */ (
      function countedSetTimeout(/** @type {Parameters<typeof setTimeout>} */ ...args) {
        timers++;
        return realSetTimeout.apply(this, args);
      }
    )
  );
  try {
    for (let i = 0; i < calls; i++) {
      if ((await call()) !== 1) throw new Error('a benchmarked call did not resolve to 1');
    }
  } finally {
    globalThis.setTimeout = realSetTimeout;
  }
  return timers / calls;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

/**
 * Runs every case once per round (rotated order) after a warm-up that also sizes the rounds to ~`roundMs`;
 * ns per call of the median round. Each round checks that every call made the attempts it should.
 *
 * @param {any[]} cases
 * @param {{ rounds: number, roundMs: number, maxCalls: number, warmupChunk: number,
 *   width?: number | undefined }} options
 */
async function measure(cases, { rounds, roundMs, maxCalls, warmupChunk, width }) {
  const active = cases.filter((c) => !c.skip);
  const unit = width ?? 1;
  const run = (c, n) => (width ? runBatched(c.call, n, width) : runSequential(c.call, n));
  const state = new Map();
  for (const c of active) {
    const timers = await timersPerCall(c.call);
    const t0 = performance.now();
    let ns;
    do ns = await run(c, warmupChunk);
    while (performance.now() - t0 < roundMs);
    const calls = Math.min(maxCalls, Math.max(unit, Math.round((roundMs * 1e6) / ns / unit) * unit));
    state.set(c.key, { timers, calls, rounds: [] });
  }
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < active.length; i++) {
      const c = active[(i + r) % active.length];
      const st = state.get(c.key);
      attempts = 0;
      const ns = await run(c, st.calls);
      if (attempts !== st.calls * c.attemptsPerCall) {
        throw new Error(`${c.name}: ${attempts} attempts for ${st.calls} calls, expected ${c.attemptsPerCall} per call`);
      }
      st.rounds.push(ns);
    }
  }
  return cases.map((c) => {
    if (c.skip) return { name: c.name, key: c.key, skipped: c.skip };
    const { rounds: roundsNs, timers, calls } = state.get(c.key);
    const ns = median(roundsNs);
    const spreadPct = (100 * (Math.max(...roundsNs) - Math.min(...roundsNs))) / ns;
    return { name: c.name, key: c.key, nsPerCall: ns, opsPerSec: 1e9 / ns, spreadPct, timersPerCall: timers, callsPerRound: calls, roundsNs };
  });
}

/**
 * Adds `overheadNs` = ns per call − the reference's (one number, or the same key's row). With `perRetry`,
 * also `libraryNs` = that overhead − the "no library" row's: what the library adds to a retry beyond the
 * failed attempt itself (a fresh Error thrown and caught, a second call), which costs every library the same.
 */
function withOverhead(rows, reference, perRetry = false) {
  const out = rows.map((row) => {
    if (row.skipped) return row;
    const ref = typeof reference === 'number' ? reference : reference.find((x) => x.key === row.key)?.nsPerCall;
    return { ...row, overheadNs: ref === undefined ? undefined : row.nsPerCall - ref };
  });
  if (!perRetry) return out;
  const floor = out.find((r) => r.key === 'baseline').overheadNs;
  return out.map((row) => (row.skipped ? row : { ...row, libraryNs: row.overheadNs - floor }));
}

function ratios(rows, field) {
  const get = (key) => rows.find((r) => r.key === key && !r.skipped)?.[field];
  const ratio = (a, b) => (a === undefined || b === undefined || b <= 0 ? null : a / b);
  return { retrydOverCockatiel: ratio(get('retryd'), get('cockatiel')), retrydOverPRetry: ratio(get('retryd'), get('pRetry')) };
}

// ---- environment ----
function packageVersion(specifier) {
  let dir = dirname(fileURLToPath(import.meta.resolve(specifier)));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      if (pkg.name === specifier) return pkg.version;
    } catch {
      // no package.json here: keep walking up
    }
    const parent = dirname(dir);
    if (parent === dir) return 'unknown';
    dir = parent;
  }
}

const started = performance.now();
const environment = {
  date: new Date().toISOString(),
  node: process.version,
  v8: process.versions.v8,
  cpu: os.cpus()[0]?.model ?? 'unknown',
  cpus: os.cpus().length,
  platform: `${os.platform()} ${os.release()} ${os.arch()}`,
  loadAverageAtStart: os.loadavg()[0],
  libraries: { '@retryd/core': packageVersion('@retryd/core'), cockatiel: packageVersion('cockatiel'), 'p-retry': packageVersion('p-retry') },
};

// ---- run ----
const firstTry = await measure(firstTryCases, CONFIG.firstTry);
const a = withOverhead(firstTry, firstTry[0].nsPerCall);
const b1 = withOverhead(await measure(noTimerCases, CONFIG.noTimer), a, true);
const firstTryBatched = await measure(firstTryCases, CONFIG.timerBatched);
const b2 = withOverhead(await measure(timerCases, CONFIG.timerBatched), firstTryBatched, true);
const latency = await measure(timerCases, CONFIG.timerLatency);

const results = {
  environment,
  config: CONFIG,
  firstTry: { rows: a, ratios: ratios(a, 'overheadNs') },
  retryNoTimer: { rows: b1, ratios: ratios(b1, 'overheadNs'), libraryRatios: ratios(b1, 'libraryNs') },
  retryRealTimer: { rows: b2, ratios: ratios(b2, 'overheadNs'), libraryRatios: ratios(b2, 'libraryNs'), firstTryBatched },
  retryRealTimerLatency: { rows: latency },
  loadAverageAtEnd: os.loadavg()[0],
  durationS: (performance.now() - started) / 1000,
};

if (JSON_OUTPUT) {
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
} else {
  printReport(results);
}

// ---- report ----
function printReport(res) {
  const int = (x) => (x === undefined ? '—' : Math.round(x).toLocaleString('en-US'));
  const ops = (x) => (x >= 1e6 ? `${(x / 1e6).toFixed(2)} M` : `${(x / 1e3).toFixed(1)} k`);
  const ratio = (x) => (x === null ? 'n/a' : `${x.toFixed(2)}×`);
  const cols = (cells, widths) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[0]) : cell.padStart(widths[i]))).join('');
  const table = (title, rows, extra) => {
    const widths = [42, 9, 11, 14, ...(extra ? [16] : []), 8, 8, 10];
    console.log(`\n${title}`);
    console.log(`  ${cols(['library', 'ns/call', 'calls/s', extra ? 'per retry ns' : 'overhead ns', ...(extra ? ['library-own ns'] : []), 'spread', 'timers', 'calls/rd'], widths)}`);
    for (const r of rows) {
      if (r.skipped) {
        console.log(`  ${r.name.padEnd(widths[0])}${'n/a'.padStart(widths[1])}  (${r.skipped})`);
        continue;
      }
      const cells = [r.name, int(r.nsPerCall), ops(r.opsPerSec), int(r.overheadNs), ...(extra ? [int(r.libraryNs)] : [])];
      console.log(`  ${cols([...cells, `±${(r.spreadPct / 2).toFixed(0)}%`, String(r.timersPerCall), int(r.callsPerRound)], widths)}`);
    }
  };
  const ratioLine = (label, rs) => console.log(`  ${label.padEnd(24)} retryd ÷ cockatiel ${ratio(rs.retrydOverCockatiel).padStart(7)}   retryd ÷ p-retry ${ratio(rs.retrydOverPRetry).padStart(7)}`);
  const e = res.environment;
  console.log('retryd core overhead benchmark');
  console.log(`  date ${e.date}   Node ${e.node} (V8 ${e.v8})   ${e.cpu} × ${e.cpus}   ${e.platform}`);
  console.log(`  @retryd/core ${e.libraries['@retryd/core']}   cockatiel ${e.libraries.cockatiel}   p-retry ${e.libraries['p-retry']}`);
  console.log(`  1-min load average ${e.loadAverageAtStart.toFixed(2)} at start, ${res.loadAverageAtEnd.toFixed(2)} at end (on ${e.cpus} CPUs: above ~${e.cpus - 1} other work competed)`);
  console.log(`  median of ${res.config.firstTry.rounds} interleaved rounds after a warm-up; spread = ±half the range of the rounds; timers = setTimeout calls per call`);
  console.log('  lower ns is better; a ratio below 1× means retryd adds less than the peer');

  table('(a) first try succeeds, one call at a time; overhead = ns/call − direct call', res.firstTry.rows, false);
  ratioLine('ratio of overhead:', res.firstTry.ratios);

  table('(b1) fails once, retried with NO timer, one call at a time; per retry = ns/call − (a) of the same library', res.retryNoTimer.rows, true);
  ratioLine('ratio of per retry:', res.retryNoTimer.ratios);
  ratioLine('ratio of library-own:', res.retryNoTimer.libraryRatios);

  const width = int(res.config.timerBatched.width);
  table(`(b2) fails once, retried after a REAL 1 ms timer, ${width} calls in flight; per retry = ns/call − first try in flight`, res.retryRealTimer.rows, true);
  ratioLine('ratio of per retry:', res.retryRealTimer.ratios);
  ratioLine('ratio of library-own:', res.retryRealTimer.libraryRatios);
  console.log(`  first try, ${width} in flight (reference): ${res.retryRealTimer.firstTryBatched.map((r) => `${r.key} ${int(r.nsPerCall)} ns`).join(', ')}`);

  console.log("\n(b2') the same as (b2), one call at a time: latency per call, which the 1 ms timer dominates");
  for (const r of res.retryRealTimerLatency.rows) console.log(`  ${r.name.padEnd(42)}${(r.nsPerCall / 1e6).toFixed(3).padStart(9)} ms`);
  console.log(`\ntotal ${res.durationS.toFixed(1)} s`);
}
