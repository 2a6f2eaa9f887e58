// Claim cost with a held backlog (issue 8: "a target held with 100,000 due tasks does not slow the claims of other
// targets"), through the store port directly, on each store.
//
//   npm run bench -- probe claim-cost [--store sqlite,postgres,redis] [--held 100000] [--claims 200] [--limit 32]
//                                     [--rounds 1] [--sync full|normal] [--dist PATH/dist] [--json]
//
// For each store, two cases, each on its own fresh store (schema `retryd_bench_claim_cost_*` / key prefix
// `retryd-bench-claim-cost-*`, dropped afterwards):
//   (a) no other backlog: target C holds --claims × --limit due tasks; --claims calls of
//       claimDue(now, { limit, leaseMs: 60 000, workerId }) each take --limit of them.
//   (b) the same, after target H got --held tasks due now (inserted before C's, so earlier due) and
//       holdTarget(H, now + 1 year, now) is in force.
// Figures: time per claimDue call (p50, mean, p99) and per claimed task, and (b) ÷ (a). Every claim must return
// --limit tasks, all of C (a claim that returns one of H's tasks fails the run). Both stores are filled first, then
// their claims alternate call by call (a, b, then b, a, …) so drift on a shared machine hits both alike; five claims
// of each before the timed ones warm the stores up (statements, JIT). With --rounds > 1 the figures are medians of
// the rounds (fresh stores every round). Tasks are built like packages/server/test/fixtures/tasks.ts, from the build's
// own field table (dist/domain/task-fields.js). Each store is the built backend itself (dist/backends/<store>/), opened
// as dist/service/open-store.js opens it (SQLite: --sync, default full, as `retryd serve`).
// The build is packages/server/dist, RETRYD_CLI's dist/, or --dist. Build it first: npm run build

import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { retrydStore } from './lib/contenders/retryd.mjs';
import { openBuiltStore } from './lib/built-store.mjs';
import { newTaskMaker } from './lib/new-task.mjs';
import { CURRENT_DIST, fmt, median, printMachine, printTable, serviceBuild, summarize, positiveIntOption, stackOf } from './lib/report.mjs';

const { values: args } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite,postgres,redis' },
    held: { type: 'string', default: '100000' },
    claims: { type: 'string', default: '200' },
    limit: { type: 'string', default: '32' },
    rounds: { type: 'string', default: '1' },
    sync: { type: 'string', default: 'full' },
    dist: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const positiveInt = (name) => positiveIntOption(args, name);
const HELD = positiveInt('held');
const CLAIMS = positiveInt('claims');
const LIMIT = positiveInt('limit');
const ROUNDS = positiveInt('rounds');
const WARMUP_CLAIMS = 5;
if (!['full', 'normal'].includes(args.sync)) throw new Error(`--sync must be full or normal, got ${args.sync}`);
const storeKinds = args.store.split(',').map((s) => s.trim());
const dist = args.dist === undefined ? CURRENT_DIST : resolve(args.dist);

const load = async (...paths) => {
  for (const p of paths) if (existsSync(join(dist, p))) return import(pathToFileURL(join(dist, p)).href);
  throw new Error(`${dist} has none of ${paths.join(', ')}: claim-cost needs a build with the target key and holdTarget (issue 8)`);
};
const { TASK_FIELDS } = await load('domain/task-fields.js');
const { targetKeyOf } = await load('domain/target-key.js');
const { DEFAULT_TENANT } = await load('domain/task.js');

const machine = printMachine('machine', { build: false });
const build = serviceBuild(dist);
console.log(`claim cost: build ${dist} ${build.hash}; stores ${storeKinds.join(', ')}; H holds ${fmt(HELD)} due tasks in case (b); ` +
  `${CLAIMS} timed claims of ${LIMIT} (after ${WARMUP_CLAIMS} untimed) per case${ROUNDS > 1 ? `, ${ROUNDS} rounds` : ''}\n`);

const NOW = Date.now();
const H_URL = 'http://127.0.0.1:9/held';
const C_URL = 'http://127.0.0.1:8/claimed';
const H = { tenantId: DEFAULT_TENANT, targetKey: targetKeyOf(H_URL) };
const C_KEY = targetKeyOf(C_URL);

const newTask = newTaskMaker({ TASK_FIELDS, targetKeyOf, tenantId: DEFAULT_TENANT });
/** A PENDING task due at `dueAt` (created then, as a claim test's task would be: runStartedAt null, as before). */
const makeTask = (targetUrl, dueAt) => newTask({ targetUrl, dueAt, runStartedAt: null });

async function insert(store, count, targetUrl, dueAt) {
  for (let from = 0; from < count; from += 1000) {
    const tasks = Array.from({ length: Math.min(1000, count - from) }, () => makeTask(targetUrl, dueAt));
    const results = await store.insertTasks(tasks);
    const bad = results.find((r) => r.kind !== 'inserted');
    if (bad !== undefined) throw new Error(`insertTasks: ${bad.kind}`);
  }
}

/** A case's store, filled: C's due tasks and, with `withHeld`, H's held backlog before them. */
async function setUpCase(storeKind, withHeld) {
  const place = await retrydStore(storeKind, { sync: args.sync, name: `claim-cost-${withHeld ? 'held' : 'empty'}` });
  const store = await openBuiltStore(dist, place, { sync: args.sync });
  const c = { withHeld, place, store, times: [] };
  try {
    if (typeof store.holdTarget !== 'function') throw new Error(`this build's ${storeKind} store has no holdTarget`);
    if (withHeld) {
      const t = performance.now();
      // Due before C's tasks: a claim that ignored the hold would take H's first.
      await insert(store, HELD, H_URL, NOW - 120_000);
      c.heldInsertMs = performance.now() - t;
      await store.holdTarget(H, NOW + 365 * 86_400_000, NOW);
    }
    await insert(store, (CLAIMS + WARMUP_CLAIMS) * LIMIT, C_URL, NOW - 60_000);
    return c;
  } catch (error) {
    await tearDown(c);
    throw error;
  }
}

async function tearDown(c) {
  await c.store.close();
  await c.place.cleanup();
}

/** The i-th claim of a case: timed, and checked (LIMIT tasks, all of C). */
async function claimOnce(c, i) {
  const t = performance.now();
  const claimed = await c.store.claimDue(NOW + i, { limit: LIMIT, leaseMs: 60_000, workerId: 'claim-cost' });
  const ms = performance.now() - t;
  if (claimed.length !== LIMIT) throw new Error(`claim ${i} returned ${claimed.length} tasks, expected ${LIMIT}`);
  const stray = claimed.find((task) => task.targetKey !== C_KEY);
  if (stray !== undefined) throw new Error(`claim ${i} returned a task of ${stray.targetKey}, which is held`);
  if (i >= WARMUP_CLAIMS) c.times.push(ms);
}

/**
 * One round on a store: both cases' stores are set up first, then their claims alternate call by call (a, b, then
 * b, a, …), so that load from elsewhere on the machine, checkpoints and vacuums hit both cases alike.
 */
async function runRound(storeKind) {
  const cases = [];
  try {
    cases.push(await setUpCase(storeKind, true));
    cases.push(await setUpCase(storeKind, false));
    const [held, empty] = cases;
    for (let i = 0; i < CLAIMS + WARMUP_CLAIMS; i++) {
      for (const c of i % 2 === 0 ? [empty, held] : [held, empty]) await claimOnce(c, i);
    }
    return {
      a: { times: empty.times, label: empty.place.label, durability: empty.place.durability },
      b: { times: held.times, heldInsertMs: held.heldInsertMs, label: held.place.label, durability: held.place.durability },
    };
  } finally {
    for (const c of cases) await tearDown(c);
  }
}

const rows = [];
let failed = false;
for (const storeKind of storeKinds) {
  /** @type {{ a: any[], b: any[] }} The rounds of each case. */
  const runs = { a: [], b: [] };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const both = await runRound(storeKind);
      for (const c of ['a', 'b']) {
        const r = both[c];
        const s = summarize(r.times);
        runs[c].push({ ...r, ...s });
        console.log(
          `${r.label.replace(/, (schema|prefix) .*/, '')} (${c}) ${c === 'a' ? 'no other backlog' : `H holds ${fmt(HELD)} due tasks (inserted in ${fmt(r.heldInsertMs / 1000, 1)} s)`}: ` +
            `claimDue p50 ${fmt(s.p50, 3)} ms, mean ${fmt(s.mean, 3)} ms, p99 ${fmt(s.p99, 3)} ms, max ${fmt(s.max, 2)} ms`,
        );
      }
    }
  } catch (error) {
    failed = true;
    console.error(`${storeKind}: ${stackOf(error)}`);
    continue;
  }
  const m = (c, k) => median(runs[c].map((r) => r[k]));
  rows.push({
    storeKind,
    label: runs.a[0].label.replace(/, (schema|prefix) .*/, ''),
    durability: runs.a[0].durability,
    a: { p50: m('a', 'p50'), mean: m('a', 'mean'), p99: m('a', 'p99') },
    b: { p50: m('b', 'p50'), mean: m('b', 'mean'), p99: m('b', 'p99') },
    runs,
  });
}

console.log('');
printMachine('load after the run');
console.log('');
if (ROUNDS > 1) console.log(`median of ${ROUNDS} rounds\n`);
printTable(
  [
    `claimDue of ${LIMIT} (build ${build.hash})`,
    'durability',
    '(a) no backlog: p50 / mean / p99 (ms)',
    `(b) H holds ${fmt(HELD)}: p50 / mean / p99 (ms)`,
    '(b) ÷ (a) p50',
    '(b) ÷ (a) mean',
    '(a) p50 per task (µs)',
    '(b) p50 per task (µs)',
  ],
  rows.map((r) => [
    r.label,
    r.durability,
    `${fmt(r.a.p50, 3)} / ${fmt(r.a.mean, 3)} / ${fmt(r.a.p99, 3)}`,
    `${fmt(r.b.p50, 3)} / ${fmt(r.b.mean, 3)} / ${fmt(r.b.p99, 3)}`,
    `${(r.b.p50 / r.a.p50).toFixed(2)}×`,
    `${(r.b.mean / r.a.mean).toFixed(2)}×`,
    fmt((1000 * r.a.p50) / LIMIT, 1),
    fmt((1000 * r.b.p50) / LIMIT, 1),
  ]),
);
if (args.json) {
  // The per-call times stay out of the JSON: their summary is in each run.
  const strip = (rs) => rs.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => k !== 'times')));
  console.log(JSON.stringify({ machine, build, held: HELD, claims: CLAIMS, limit: LIMIT, rows: rows.map((r) => ({ ...r, runs: { a: strip(r.runs.a), b: strip(r.runs.b) } })) }, null, 2));
}
process.exit(failed ? 1 : 0);
