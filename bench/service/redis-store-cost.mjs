// What the Redis store's own calls cost, per task, on both sides of the socket: the service's CPU (encoding the
// script's arguments, ioredis's command building, decoding replies, garbage collection) and redis-server's CPU (the
// scripts), through the store port directly (no HTTP, parsing or checks), for builds side by side.
//
//   npm run bench -- probe redis-store-cost [--tasks 40000] [--rounds 3] [--baseline PATH/dist/cli/main.js]
//
// Each round, each build (alternating, the order rotated every round) opens its own RedisStore on a fresh key prefix
// (`retryd-bench-store-cost-*`, deleted before and after) and does, timed apart:
//   insert    insertTasks of --tasks new PENDING tasks like W1's (two headers, a small JSON body, an inline policy),
//             due now, 1,000 a call, one call in flight;
//   dispatch  claimDue of 32 then completeAttempts of those 32 (every attempt succeeds), until every task is done:
//             one attempt's store work on the dispatch path.
// Figures per task: this process's CPU (user + system, from process.cpuUsage: every thread, the collector's
// included) and redis-server's (utime + stime from /proc/<its pid>/stat, so Redis must run on this machine and
// nothing else should use it meanwhile), and the wall time. Medians over the rounds, and each round's ratio of the
// build to the baseline. The build is packages/server/dist or RETRYD_CLI's. Build it first: npm run build

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { newTaskMaker } from './lib/new-task.mjs';
import { CURRENT_DIST, distOf, fmt, printMachine, printTable } from './lib/report.mjs';
import { REDIS_URL, deleteKeys } from './lib/servers.mjs';

/** The service's default retention of a succeeded task (`DEFAULT_RETENTION.succeededMs`): a final outcome's expiresAt. */
const RETENTION_MS = 7 * 86_400_000;

const { values: args } = parseArgs({
  options: { tasks: { type: 'string', default: '40000' }, rounds: { type: 'string', default: '3' }, baseline: { type: 'string' } },
});
const TASKS = Number(args.tasks);
const ROUNDS = Number(args.rounds);
const PER_INSERT = 1000;
const PER_CLAIM = 32;
printMachine('machine', { baseline: args.baseline });

const admin = new Redis(REDIS_URL);
const redisPid = Number(/process_id:(\d+)/.exec(await admin.info('server'))?.[1]);
console.log(`redis-server pid ${redisPid}; ${fmt(TASKS)} tasks a run, inserted ${fmt(PER_INSERT)} a call, claimed and completed ${PER_CLAIM} a call\n`);

/** CPU ms redis-server has used so far (user + system). */
function redisCpuMs() {
  const fields = readFileSync(`/proc/${redisPid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** CPU ms this process has used so far (user + system, every thread). */
function ownCpuMs() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

async function loadBuild(label, dist) {
  const load = (path) => import(pathToFileURL(join(dist, path)).href);
  const { TASK_FIELDS } = await load('domain/task-fields.js');
  const { targetKeyOf } = await load('domain/target-key.js');
  const { DEFAULT_TENANT } = await load('domain/task.js');
  const { RedisStore } = await load('backends/redis/index.js');
  return { label, RedisStore, makeTask: newTaskMaker({ TASK_FIELDS, targetKeyOf, tenantId: DEFAULT_TENANT }) };
}

const builds = [await loadBuild('retryd', CURRENT_DIST)];
if (args.baseline !== undefined) builds.push(await loadBuild('retryd (before)', distOf(resolve(args.baseline))));

const policy = { maxAttempts: 5, backoffType: 'EXPONENTIAL', initialDelayMs: 1, multiplier: 2, maxDelayMs: 10, jitterType: 'FULL' };

/** The tasks of one run, made before any clock starts (as W1's are: two headers, a small JSON body). */
function tasksOf(build, now) {
  return Array.from({ length: TASKS }, (_, i) =>
    build.makeTask({
      targetUrl: `http://127.0.0.1:9/hooks/${i % 8}`,
      now,
      dueAt: now,
      taskId: randomUUID(),
      idempotencyKey: `cost-${i}`,
      requestHash: randomUUID().replace(/-/g, '').repeat(2),
      headers: { 'content-type': 'application/json', 'x-request': `r${i}` },
      body: JSON.stringify({ order: i, amount: 1299, currency: 'EUR' }),
      policyId: null,
      policy,
    }),
  );
}

/** Runs `work`, returning µs per task of this process's CPU, of redis-server's, and of wall time. */
async function measure(work) {
  const own = ownCpuMs();
  const redis = redisCpuMs();
  const started = performance.now();
  await work();
  const per = (ms) => (ms * 1000) / TASKS;
  return { own: per(ownCpuMs() - own), redis: per(redisCpuMs() - redis), wall: per(performance.now() - started) };
}

async function run(build, round) {
  const prefix = `retryd-bench-store-cost-${round}`;
  await deleteKeys(admin, `*${prefix}*`);
  const store = new build.RedisStore({ url: REDIS_URL, prefix });
  await store.init();
  try {
    const now = Date.now();
    const tasks = tasksOf(build, now);
    globalThis.gc?.();
    const insert = await measure(async () => {
      for (let from = 0; from < TASKS; from += PER_INSERT) await store.insertTasks(tasks.slice(from, from + PER_INSERT));
    });
    let done = 0;
    const dispatch = await measure(async () => {
      while (done < TASKS) {
        const at = now + 1 + done;
        const claimed = await store.claimDue(at, { limit: PER_CLAIM, leaseMs: 60_000, workerId: 'store-cost' });
        if (claimed.length === 0) throw new Error(`claimDue returned nothing with ${TASKS - done} tasks left`);
        const completions = claimed.map((task) => ({
          tenantId: task.tenantId,
          taskId: task.taskId,
          fencingToken: task.fencingToken,
          attempt: {
            tenantId: task.tenantId,
            taskId: task.taskId,
            attemptNumber: task.attemptNumber + 1,
            startedAt: at,
            durationMs: 3,
            responseStatus: 200,
            errorMessage: null,
            outcome: 'succeeded',
            responseBodySnippet: null,
            nextAttemptAt: null,
            workerId: 'store-cost',
            delayedBy: null,
            backoffAt: null,
          },
          next: {
            status: 'SUCCEEDED',
            attemptNumber: task.attemptNumber + 1,
            nextAttemptAt: null,
            runStartedAt: task.runStartedAt,
            lastDelayMs: task.lastDelayMs,
            lastError: null,
            lastResponseStatus: 200,
            deadLetterReason: null,
            // As the engine dates a success (its default retention): the expiry index is part of the cost.
            expiresAt: at + RETENTION_MS,
          },
        }));
        const results = await store.completeAttempts(completions, at);
        if (results.some((r) => r.kind !== 'applied')) throw new Error(`a completion was not applied: ${JSON.stringify(results.find((r) => r.kind !== 'applied'))}`);
        done += claimed.length;
      }
    });
    return { insert, dispatch };
  } finally {
    await store.close();
    await deleteKeys(admin, `*${prefix}*`);
  }
}

/** @type {any[][]} Each build's rounds. */
const results = builds.map(() => []);
for (let round = 0; round < ROUNDS; round++) {
  const order = builds.map((_, i) => (i + round) % builds.length);
  for (const b of order) {
    const r = await run(builds[b], round);
    results[b].push(r);
    const line = (name) => `${name} ${fmt(r[name].own, 2)} µs own + ${fmt(r[name].redis, 2)} µs redis (${fmt(r[name].wall, 2)} µs wall)`;
    console.log(`${builds[b].label} round ${round + 1}: ${line('insert')}; ${line('dispatch')}`);
  }
}
await admin.quit();

const median = (values) => {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};
console.log('\nµs per task (medians over rounds)');
const rows = [];
for (const op of ['insert', 'dispatch']) {
  for (const [b, build] of builds.entries()) {
    const rs = results[b].map((r) => r[op]);
    const cells = ['own', 'redis', 'wall'].map((k) => fmt(median(rs.map((r) => r[k])), 2));
    const ratios =
      b === 0 || builds.length === 1
        ? ''
        : rs.map((r, i) => fmt((r.own + r.redis) / (results[0][i][op].own + results[0][i][op].redis), 2)).join(', ');
    rows.push([op, build.label, ...cells, fmt(median(rs.map((r) => r.own + r.redis)), 2), ratios]);
  }
}
printTable(['op', 'build', 'service CPU', 'redis-server CPU', 'wall', 'CPU, both', 'baseline ÷ build (CPU, both), per round'], rows);
