// The cost of completing attempts on PostgreSQL, through the store port directly: the server's CPU and the
// service's per `completeAttempts` call, this build against another one side by side.
//
//   npm run bench -- probe completion-cost [--baseline PATH/dist/cli/main.js] [--batches 150] [--size 128] [--rounds 4]
//                                          [--outcome retry|success]
//
// Each round and build gets a fresh schema (`retryd_bench_completion_<build>`, dropped afterwards) holding
// (--batches + 3) × --size due tasks of one target, claims them in batches of --size, and then completes every
// batch as W1's first attempts end (--outcome retry, the default): a 503, a retry scheduled, with the outcome and
// attempt to take instead when a cancel was requested meanwhile (`ifCancelRequested`, `attemptIfCancelRequested`), as
// the engine sends them; or, --outcome success, as W4's attempts end: a 200, SUCCEEDED, with no cancel alternative
// (the engine gives none to a success). Three
// batches are completed untimed first (prepared statements, plan cache); the others are timed. Figures per call:
// the CPU time of every `postgres` process (so run it on a quiet server: other users count), this process's CPU
// time, and the wall time; medians of the rounds, the builds alternating which goes first. Every completion must
// apply (a fenced-out one fails the run).
// Builds: packages/server/dist (or RETRYD_CLI's), and --baseline's (a build with backends/postgres, i.e. from issue 8
// on), named by its CLI as the other benchmarks' --baseline is.
// PostgreSQL: RETRYD_BENCH_POSTGRES_URL, default postgres://root@127.0.0.1:5432/test.

import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { cpuMsOfCommand } from './lib/contenders/call-downstream.mjs';
import { newTaskMaker } from './lib/new-task.mjs';
import { CURRENT_DIST, distOf, fmt, printMachine, printTable, serviceBuild, positiveIntOption } from './lib/report.mjs';

/** The service's default retention of a succeeded task (`DEFAULT_RETENTION.succeededMs`): a final outcome's expiresAt. */
const RETENTION_MS = 7 * 86_400_000;

const { values: args } = parseArgs({
  options: {
    baseline: { type: 'string' },
    batches: { type: 'string', default: '150' },
    size: { type: 'string', default: '128' },
    rounds: { type: 'string', default: '4' },
    outcome: { type: 'string', default: 'retry' },
  },
});
if (args.outcome !== 'retry' && args.outcome !== 'success') throw new Error(`--outcome must be retry or success, got ${args.outcome}`);
const SUCCESS = args.outcome === 'success';
const positiveInt = (name) => positiveIntOption(args, name);
const BATCHES = positiveInt('batches');
const SIZE = positiveInt('size');
const ROUNDS = positiveInt('rounds');
const WARMUP = 3;
const POSTGRES_URL = process.env.RETRYD_BENCH_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test';
const TARGET = 'http://127.0.0.1:9/w1';

const builds = [{ name: 'after', dist: CURRENT_DIST }];
if (args.baseline !== undefined) builds.push({ name: 'before', dist: distOf(resolve(args.baseline)) });
for (const build of builds) {
  if (!existsSync(join(build.dist, 'backends', 'postgres', 'open-postgres-store.js'))) {
    throw new Error(`${build.dist}: no backends/postgres/open-postgres-store.js (build it: npm run build; a build from issue 8 on)`);
  }
  const load = (path) => import(pathToFileURL(join(build.dist, path)).href);
  build.openPostgresStore = (await load('backends/postgres/open-postgres-store.js')).openPostgresStore;
  const { TASK_FIELDS } = await load('domain/task-fields.js');
  const { targetKeyOf } = await load('domain/target-key.js');
  build.newTask = newTaskMaker({ TASK_FIELDS, targetKeyOf, tenantId: 'default' });
  build.hash = serviceBuild(build.dist).hash;
}

printMachine('machine', { build: false });
console.log(
  `completion cost on PostgreSQL: ${BATCHES} timed completeAttempts calls of ${SIZE} ${SUCCESS ? 'successes' : 'retries'} (after ${WARMUP} untimed) per round, ${ROUNDS} rounds`,
);
for (const build of builds) console.log(`  ${build.name}: ${build.dist} (${build.hash})`);
console.log('');

/**
 * W1's end of a first attempt: a 503 and a retry, or, had a cancel been requested, the cancel; with --outcome success,
 * W4's: a 200 that ends the task.
 */
function completionsOf(tasks, now) {
  if (SUCCESS) return tasks.map((task) => successOf(task, now));
  return tasks.map((task) => {
    const attempt = {
      tenantId: task.tenantId, taskId: task.taskId, attemptNumber: 1, startedAt: now - 8, durationMs: 7.86,
      responseStatus: 503, errorMessage: 'HTTP 503', outcome: 'retry_scheduled', responseBodySnippet: 'busy',
      nextAttemptAt: now + 5_000, workerId: 'completion-cost', delayedBy: null, backoffAt: null,
    };
    const next = {
      status: 'PENDING', attemptNumber: 1, nextAttemptAt: now + 5_000, runStartedAt: task.runStartedAt, lastDelayMs: 0.39,
      lastError: 'HTTP 503', lastResponseStatus: 503, deadLetterReason: null, expiresAt: null,
    };
    return {
      tenantId: task.tenantId, taskId: task.taskId, fencingToken: task.fencingToken, attempt, next,
      ifCancelRequested: { ...next, status: 'CANCELLED', nextAttemptAt: null, expiresAt: now + RETENTION_MS },
      attemptIfCancelRequested: { ...attempt, outcome: 'cancelled', nextAttemptAt: null },
    };
  });
}

/** An attempt answered 200: the task SUCCEEDED, kept for the default retention; no cancel alternative. */
function successOf(task, now) {
  return {
    tenantId: task.tenantId, taskId: task.taskId, fencingToken: task.fencingToken,
    attempt: {
      tenantId: task.tenantId, taskId: task.taskId, attemptNumber: 1, startedAt: now - 2, durationMs: 1.37,
      responseStatus: 200, errorMessage: null, outcome: 'succeeded', responseBodySnippet: 'ok',
      nextAttemptAt: null, workerId: 'completion-cost', delayedBy: null, backoffAt: null,
    },
    next: {
      status: 'SUCCEEDED', attemptNumber: 1, nextAttemptAt: null, runStartedAt: task.runStartedAt, lastDelayMs: 0,
      lastError: null, lastResponseStatus: 200, deadLetterReason: null, expiresAt: now + RETENTION_MS,
    },
  };
}

async function runOnce(build, admin) {
  const schema = `retryd_bench_completion_${build.name}`;
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  const { store } = await build.openPostgresStore(`${POSTGRES_URL}${POSTGRES_URL.includes('?') ? '&' : '?'}schema=${schema}`, {});
  try {
    const now = Date.now();
    const total = (BATCHES + WARMUP) * SIZE;
    for (let from = 0; from < total; from += 1_000) {
      await store.insertTasks(Array.from({ length: Math.min(1_000, total - from) }, () => build.newTask({ targetUrl: TARGET, dueAt: now - 1_000 })));
    }
    const claims = [];
    for (let i = 0; i < BATCHES + WARMUP; i++) {
      const claimed = await store.claimDue(now, { limit: SIZE, leaseMs: 600_000, workerId: 'completion-cost' });
      if (claimed.length !== SIZE) throw new Error(`claim ${i} returned ${claimed.length} tasks, expected ${SIZE}`);
      claims.push(claimed);
    }
    const complete = async (i) => {
      const results = await store.completeAttempts(completionsOf(claims[i], now + i), now + i);
      const fenced = results.filter((r) => r.kind !== 'applied').length;
      if (fenced > 0) throw new Error(`${fenced} completions of batch ${i} were fenced out`);
    };
    for (let i = 0; i < WARMUP; i++) await complete(i);
    const server0 = await cpuMsOfCommand('postgres');
    const own0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = WARMUP; i < BATCHES + WARMUP; i++) await complete(i);
    const wallMs = performance.now() - t0;
    const own = process.cpuUsage(own0);
    const serverMs = (await cpuMsOfCommand('postgres')) - server0;
    return { serverMs: serverMs / BATCHES, ownMs: (own.user + own.system) / 1_000 / BATCHES, wallMs: wallMs / BATCHES };
  } finally {
    await store.close();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  }
}

const admin = new pg.Client({ connectionString: POSTGRES_URL });
await admin.connect();
/** @type {Map<string, any>} The figures (a list) of each build's rounds, by name. */
const runs = new Map(builds.map((b) => [b.name, []]));
try {
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? builds : [...builds].reverse();
    for (const build of order) runs.get(build.name).push(await runOnce(build, admin));
  }
} finally {
  await admin.end();
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const figures = builds.map((build) => {
  const rs = runs.get(build.name);
  return { build, server: median(rs.map((r) => r.serverMs)), own: median(rs.map((r) => r.ownMs)), wall: median(rs.map((r) => r.wallMs)), rs };
});
printTable(
  ['build', 'server CPU ms / call', 'per round', 'service CPU ms / call', 'wall ms / call', 'server µs / completion'],
  figures.map((f) => [
    `${f.build.name} (${f.build.hash})`, fmt(f.server, 2), f.rs.map((r) => r.serverMs.toFixed(2)).join(', '), fmt(f.own, 2), fmt(f.wall, 2),
    fmt((f.server * 1_000) / SIZE, 1),
  ]),
);
if (figures.length === 2) {
  const [after, before] = figures;
  console.log(`\nafter ÷ before: server CPU ${(after.server / before.server).toFixed(2)}×, service CPU ${(after.own / before.own).toFixed(2)}×, wall ${(after.wall / before.wall).toFixed(2)}×`);
}
