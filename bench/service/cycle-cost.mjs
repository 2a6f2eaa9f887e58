#!/usr/bin/env node
// W1's store work alone, through the store port in this process: no HTTP, no engine, no downstream. The cost of an
// attempt's claim, completion and log line in the store, the part of W1 that a store's schema and statements decide,
// measured with far less noise than W1's attempts/s (three processes on two cores), builds side by side.
//
//   npm run bench -- probe cycle-cost [--store sqlite[,postgres,redis]] [--tasks 20000] [--size 128] [--rounds 5]
//                                     [--sync full|normal] [--baseline PATH/dist/cli/main.js] [--json]
//
// Each round and build gets a fresh store holding --tasks due tasks of one target, and runs W1's attempts on it as
// the engine does: one claimDue of --size, then completeAndClaim calls, each completing the tasks the last one
// claimed (attempts 1 and 2: a 503 and a retry due at once; attempt 3: a 200 and SUCCEEDED, with the outcome to take
// instead had a cancel been requested, as the engine sends them) and claiming the next --size, until every task has
// succeeded (3 × --tasks attempts; any other count fails the run). Figures per attempt: this process's CPU time
// (user + system: the statements, the row mapping, SQLite's own work), on PostgreSQL and Redis the server's CPU
// apart (every `postgres` process's, redis-server's, from /proc: run it on a quiet server), and the wall time
// (SQLite: its fsyncs included). Medians of the rounds; the builds alternate which goes
// first. Task ids are the build's own UUIDv7 (time-ordered, as the service makes them), and each task carries W1's
// policy inline, as W1 enqueues them (so its bytes are in every row read and rewritten). The build is
// packages/server/dist (or RETRYD_CLI's); --baseline adds another, named by its CLI (SQLite: any build; PostgreSQL
// and Redis: from issue 8 on).
// Build first: npm run build
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { builtTaskMaker } from './lib/new-task.mjs';
import { CURRENT_DIST, distOf, fmt, median, printMachine, printTable, serviceBuild, positiveIntOption, writeJsonFile } from './lib/report.mjs';
import { W1_POLICY, retrydStore } from './lib/contenders/retryd.mjs';
import { openBuiltStore } from './lib/built-store.mjs';
import { storeServerCpuMs } from './lib/contenders/call-downstream.mjs';

/** The service's default retention of a succeeded task (`DEFAULT_RETENTION.succeededMs`): a final outcome's expiresAt. */
const RETENTION_MS = 7 * 86_400_000;

const { values: args } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite' },
    tasks: { type: 'string', default: '20000' },
    size: { type: 'string', default: '128' },
    rounds: { type: 'string', default: '5' },
    sync: { type: 'string', default: 'full' },
    baseline: { type: 'string' },
    json: { type: 'boolean', default: false },
    'json-file': { type: 'string' },
  },
});
const positiveInt = (name) => positiveIntOption(args, name);
const TASKS = positiveInt('tasks');
const SIZE = positiveInt('size');
const ROUNDS = positiveInt('rounds');
const ATTEMPTS_PER_TASK = 3;
if (!['full', 'normal'].includes(args.sync)) throw new Error(`--sync must be full or normal, got ${args.sync}`);
const storeKinds = args.store.split(',').map((s) => s.trim());
for (const kind of storeKinds) if (!['sqlite', 'postgres', 'redis'].includes(kind)) throw new Error(`--store: unknown store ${kind}`);
const TARGET = 'http://127.0.0.1:9/w1';

const builds = [{ name: 'after', dist: CURRENT_DIST }];
if (args.baseline !== undefined) builds.push({ name: 'before', dist: distOf(resolve(args.baseline)) });
for (const build of builds) {
  build.newTask = await builtTaskMaker(build.dist);
  build.hash = serviceBuild(build.dist).hash;
}

const machine = printMachine('machine', { build: false });
console.log(`cycle cost: W1's store work through the port, ${fmt(TASKS)} tasks × ${ATTEMPTS_PER_TASK} attempts, claims of ${SIZE}, ${ROUNDS} rounds; stores ${storeKinds.join(', ')}`);
for (const build of builds) console.log(`  ${build.name}: ${build.dist} (${build.hash})`);
console.log('');

/** The end of a claimed task's attempt as W1's downstream answers it: 503 twice (a retry due at once), then 200. */
function completionOf(task, now) {
  const number = task.attemptNumber + 1;
  const last = number === ATTEMPTS_PER_TASK;
  const attempt = {
    tenantId: task.tenantId, taskId: task.taskId, attemptNumber: number, startedAt: now - 2, durationMs: 1.4,
    responseStatus: last ? 200 : 503, errorMessage: last ? null : 'HTTP 503', outcome: last ? 'succeeded' : 'retry_scheduled',
    responseBodySnippet: last ? null : 'busy', nextAttemptAt: last ? null : now, workerId: 'cycle-cost',
    delayedBy: null, backoffAt: null,
  };
  const next = {
    status: last ? 'SUCCEEDED' : 'PENDING', attemptNumber: number, nextAttemptAt: last ? null : now, runStartedAt: task.runStartedAt,
    lastDelayMs: last ? task.lastDelayMs : 0.6, lastError: last ? null : 'HTTP 503', lastResponseStatus: last ? 200 : 503, deadLetterReason: null,
    // As the engine dates a final outcome (the default retention of a success): the expiry index is part of the cost.
    expiresAt: last ? now + RETENTION_MS : null,
  };
  return {
    tenantId: task.tenantId, taskId: task.taskId, fencingToken: task.fencingToken, attempt, next,
    ifCancelRequested: { ...next, status: 'CANCELLED', nextAttemptAt: null, expiresAt: now + RETENTION_MS },
    attemptIfCancelRequested: { ...attempt, outcome: 'cancelled', nextAttemptAt: null },
  };
}

async function runOnce(build, storeKind, round) {
  const place = await retrydStore(storeKind, { sync: args.sync, name: `cycle-cost-${build.name}` });
  const store = await openBuiltStore(build.dist, place, { sync: args.sync });
  try {
    const start = Date.now();
    for (let from = 0; from < TASKS; from += 1_000) {
      const tasks = Array.from({ length: Math.min(1_000, TASKS - from) }, () => build.newTask({ targetUrl: TARGET, dueAt: start - 1_000, policyId: null, policy: W1_POLICY }));
      const results = await store.insertTasks(tasks);
      if (results.some((r) => r.kind !== 'inserted')) throw new Error('insertTasks: a task was not inserted');
    }
    const claim = { limit: SIZE, leaseMs: 600_000, workerId: 'cycle-cost' };
    let attempts = 0;
    let succeeded = 0;
    const server0 = await storeServerCpuMs(storeKind);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let now = Date.now();
    let claimed = await store.claimDue(now, claim);
    while (claimed.length > 0) {
      now = Date.now();
      const completions = claimed.map((task) => completionOf(task, now));
      const { results, claimed: next } = await store.completeAndClaim(completions, now, claim);
      for (const r of results) {
        if (r.kind !== 'applied') throw new Error(`a completion was ${r.kind}`);
        if (r.status === 'SUCCEEDED') succeeded += 1;
      }
      attempts += completions.length;
      claimed = next;
    }
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const server1 = await storeServerCpuMs(storeKind);
    if (attempts !== TASKS * ATTEMPTS_PER_TASK || succeeded !== TASKS) {
      throw new Error(`${attempts} attempts and ${succeeded} successes, expected ${TASKS * ATTEMPTS_PER_TASK} and ${TASKS}`);
    }
    const cpuUs = (cpu.user + cpu.system) / attempts;
    const serverUs = server0 === undefined || server1 === undefined ? null : ((server1 - server0) * 1_000) / attempts;
    return { label: place.label, durability: place.durability, cpuUs, serverUs, bothUs: cpuUs + (serverUs ?? 0), wallUs: (wallMs * 1_000) / attempts, round };
  } finally {
    await store.close();
    await place.cleanup();
  }
}

const results = [];
for (const storeKind of storeKinds) {
  /** @type {Map<string, any>} The figures (a list) of each build's rounds, by name. */
  const runs = new Map(builds.map((b) => [b.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? builds : [...builds].reverse();
    for (const build of order) {
      const r = await runOnce(build, storeKind, round);
      runs.get(build.name).push(r);
      const server = r.serverUs === null ? '' : ` + server ${fmt(r.serverUs, 1)} µs`;
      if (!args.json) console.log(`${storeKind} round ${round + 1} ${build.name}: CPU ${fmt(r.cpuUs, 1)} µs${server}, wall ${fmt(r.wallUs, 1)} µs per attempt`);
    }
  }
  for (const build of builds) {
    const rs = runs.get(build.name);
    results.push({
      store: storeKind, build: build.name, hash: build.hash, label: rs[0].label, durability: rs[0].durability,
      cpuUs: median(rs.map((r) => r.cpuUs)), serverUs: rs[0].serverUs === null ? null : median(rs.map((r) => r.serverUs)),
      bothUs: median(rs.map((r) => r.bothUs)), wallUs: median(rs.map((r) => r.wallUs)), rounds: rs,
    });
  }
}

if (args['json-file']) writeJsonFile(args['json-file'], { machine, tasks: TASKS, size: SIZE, results });
if (args.json) {
  console.log(JSON.stringify({ machine, tasks: TASKS, size: SIZE, results }, null, 2));
} else {
  console.log('');
  printTable(
    ['store', 'build', 'CPU µs / attempt (median)', 'per round', 'server CPU µs / attempt', 'both', 'wall µs / attempt (median)', 'per round'],
    results.map((r) => [
      r.store, `${r.build} (${r.hash})`, fmt(r.cpuUs, 1), r.rounds.map((x) => x.cpuUs.toFixed(1)).join(', '),
      r.serverUs === null ? '–' : fmt(r.serverUs, 1), fmt(r.bothUs, 1),
      fmt(r.wallUs, 1), r.rounds.map((x) => x.wallUs.toFixed(1)).join(', '),
    ]),
  );
  if (builds.length === 2) {
    console.log('');
    for (const kind of storeKinds) {
      const [after, before] = ['after', 'before'].map((name) => results.find((r) => r.store === kind && r.build === name));
      const ratio = (key) => after.rounds.map((r, i) => (r[key] / before.rounds[i][key]).toFixed(2)).join(', ');
      const both = after.serverUs === null ? '' : `, CPU with the server's ${(after.bothUs / before.bothUs).toFixed(3)}× (rounds ${ratio('bothUs')})`;
      console.log(`${kind}: after ÷ before, CPU ${(after.cpuUs / before.cpuUs).toFixed(3)}× (rounds ${ratio('cpuUs')})${both}, wall ${(after.wallUs / before.wallUs).toFixed(3)}× (rounds ${ratio('wallUs')})`);
    }
  }
}
