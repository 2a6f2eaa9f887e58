// Small helpers shared by the service benchmarks: percentiles, machine details, Markdown tables.

import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { availableParallelism } from 'node:os';

/** The stores' names as the benchmarks' tables and the report write them. */
export const STORE_NAMES = Object.freeze({ sqlite: 'SQLite', postgres: 'PostgreSQL', redis: 'Redis' });

/**
 * The W1 contender id of the bare loop with a store's work (bare-store.mjs) on `storeKind`, or of its SQLite variant
 * with the store on a thread of its own (`threaded`). SQLite's keeps the name it had before the other stores had one.
 */
export function bareStoreId(storeKind, threaded = false) {
  if (threaded) return 'bare-store-thread';
  return storeKind === 'sqlite' ? 'bare-store' : `bare-store-${storeKind}`;
}

/** p-th percentile (0–100) of numbers, nearest-rank. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** { n, p50, p99, max, min, mean } of a list of numbers. */
export function summarize(values) {
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    n: sorted.length,
    min: sorted[0] ?? NaN,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? NaN,
    mean: sorted.length === 0 ? NaN : sum / sorted.length,
  };
}

/**
 * The distribution of `values` as `[percentile, value]` pairs at p50, p75, p90, p95, p99, p99.9 and the max: what a
 * chart of a lag distribution plots (bench/report/).
 */
export function percentileCurve(values) {
  const sorted = Float64Array.from(values).sort();
  return [50, 75, 90, 95, 99, 99.9, 100].map((p) => [p, percentile(sorted, p)]);
}

/**
 * `--json-file FILE`: writes a run's results (what `--json` prints) to FILE, for the benchmark report
 * (bench/report/), which reads them back instead of parsing the console. Nothing when `path` is undefined.
 */
export function writeJsonFile(path, data) {
  if (path === undefined) return;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(data, null, 2)}\n`);
}

/** The median of some numbers (the mean of the middle two for an even count). */
export function median(values) {
  const v = [...values].sort((a, b) => a - b);
  return v.length % 2 === 1 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
}

export const fmt = (n, digits = 0) =>
  Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : n === Infinity ? '–' : String(n);

/**
 * A ratio as the tables write it: `1.05×`, two significant digits below 0.1 (a dead target's calls with the
 * protections are a few thousandths of those without: `0.0039×`), `≥ ` before a lower bound, `–` when there is none.
 */
export const ratioText = (x, atLeast = false) =>
  x === undefined || Number.isNaN(x) ? '–' : `${atLeast ? '≥ ' : ''}${x < 0.1 ? x.toPrecision(2) : x.toFixed(2)}×`;

/** Prints a Markdown table (so that a run can be pasted into docs/benchmarks.md as is). */
export function printTable(headers, rows) {
  const line = (cells) => `| ${cells.join(' | ')} |`;
  console.log(line(headers));
  console.log(line(headers.map(() => '---')));
  for (const r of rows) console.log(line(r.map((c) => String(c))));
}

/** The machine and its load: print it with every run, figures on a shared 2-core box drift. */
export function machine() {
  let model = cpus()[0]?.model ?? 'unknown';
  try {
    model = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? model;
  } catch {
    // not Linux
  }
  return {
    nproc: availableParallelism(),
    cpu: model.trim(),
    memGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    load: loadavg().map((l) => l.toFixed(2)).join(' '),
  };
}

/**
 * Prints the machine line (and, for `machine`, the build's); returns what it printed.
 *
 * @param {string} [label]
 * @param {{ baseline?: string | undefined,
 *   build?: boolean | undefined }} [options] `baseline`: the CLI of a build run beside this one
 */
export function printMachine(label = 'machine', { baseline, build = true } = {}) {
  const m = machine();
  console.log(`${label}: ${m.nproc} CPUs (${m.cpu}), ${m.memGiB} GiB, node ${m.node}, load average ${m.load}`);
  if (label === 'machine' && build) {
    const b = serviceBuild();
    m.build = b;
    console.log(`retryd build: ${process.env.RETRYD_CLI ?? 'packages/server/dist'} ${b.hash} (newest file ${b.newest})`);
    if (baseline !== undefined) {
      const old = serviceBuild(distOf(baseline));
      m.baselineBuild = old;
      console.log(`retryd build (before), --baseline: ${baseline} ${old.hash} (newest file ${old.newest})`);
    }
  }
  return m;
}

/** The `dist/` folder of a built CLI (`…/dist/cli/main.js` → `…/dist`). */
export const distOf = (cli) => join(cli, '..', '..');

/** The `dist/` of the build under test: `RETRYD_CLI`'s, else packages/server/dist of this checkout. */
export const CURRENT_DIST =
  process.env.RETRYD_CLI === undefined ? join(import.meta.dirname, '..', '..', '..', 'packages', 'server', 'dist') : distOf(process.env.RETRYD_CLI);

/**
 * A hash of a built service (`<dist>/**\/*.js`; default {@link CURRENT_DIST}) and its newest file's time: which code
 * a figure is of.
 */
export function serviceBuild(root = CURRENT_DIST) {
  const hash = createHash('sha256');
  let newest = 0;
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.js')) {
        hash.update(p.slice(root.length)).update(readFileSync(p));
        newest = Math.max(newest, statSync(p).mtimeMs);
      }
    }
  };
  try {
    walk(root);
  } catch {
    return { hash: 'missing (run npx tsc -b packages/server)', newest: '-' };
  }
  return { hash: hash.digest('hex').slice(0, 12), newest: new Date(newest).toISOString() };
}

/** A command-line option (`parseArgs`' values) that must be a positive integer: the number, or an error naming it. */
export function positiveIntOption(values, name) {
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${values[name]}`);
  return n;
}

/** A command-line option (`parseArgs`' values) that must be a positive number: the number, or an error naming it. */
export function positiveNumberOption(values, name) {
  const n = Number(values[name]);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, got ${values[name]}`);
  return n;
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * What a caught value says: an Error's message, anything else thrown as a string.
 *
 * @param {unknown} error
 */
export const messageOf = (error) => (error instanceof Error ? error.message : String(error));

/**
 * A caught value with where it was thrown: an Error's stack (its message when it has none), anything else as a string.
 *
 * @param {unknown} error
 */
export const stackOf = (error) => (error instanceof Error ? (error.stack ?? error.message) : String(error));

/**
 * The HTTP status of an error from the service's API (`call` of retryd-service.mjs), or undefined for any other.
 *
 * @param {unknown} error
 * @returns {number | undefined}
 */
export const statusOf = (error) => (error instanceof Error && 'statusCode' in error && typeof error.statusCode === 'number' ? error.statusCode : undefined);

/** Polls `check` every `everyMs` until it returns true; throws `what` after `timeoutMs`. */
export async function waitFor(what, check, { timeoutMs = 120_000, everyMs = 20 } = {}) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Runs `fn(i)` for i in [0, count) with at most `limit` in flight. */
export async function inParallel(count, limit, fn) {
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const i = next++;
      await fn(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, lane));
}

/**
 * Latency of a durable commit on the disk under `dir`: `count` appends of `bytes` to a file, each followed by
 * fdatasync (what a WAL commit with synchronous=FULL costs at least). The floor under every durable figure.
 */
export async function diskSyncLatency(dir = tmpdir(), { count = 200, bytes = 4096 } = {}) {
  const { open, rm } = await import('node:fs/promises');
  const path = join(dir, `retryd-bench-fsync-${process.pid}`);
  const handle = await open(path, 'w');
  const buf = Buffer.alloc(bytes, 1);
  const times = [];
  try {
    for (let i = 0; i < count; i++) {
      await handle.write(buf);
      const t = performance.now();
      await handle.datasync();
      times.push(performance.now() - t);
    }
  } finally {
    await handle.close();
    await rm(path, { force: true });
  }
  return summarize(times);
}

export async function printDiskSync(dir = tmpdir()) {
  const s = await diskSyncLatency(dir);
  console.log(`disk (${dir}): fdatasync after a 4 KiB append p50 ${fmt(s.p50, 2)} ms, p99 ${fmt(s.p99, 2)} ms, max ${fmt(s.max, 1)} ms (${s.n} samples)`);
  return s;
}
