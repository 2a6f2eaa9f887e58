// The application's CPU per task of W6 through the transactional enqueue (`enqueueBatch` of `@retryd/server/pg`),
// counted rather than timed: `process.cpuUsage()` around each batch's `enqueueBatch`, one batch in flight (the process
// does nothing else while the statement runs, so the wait adds no CPU), each batch rolled back.
//
//   node bench/service/w6-enqueue-cpu.mjs [--dist packages/server/dist]... [--rounds 5] [--batches 30] [--batch 1000]
//                                         [--warmup 10]
//
// Each round runs every build (`--dist`, default the current one) once, one after the other, each in a process of its
// own: --warmup batches not counted, then --batches counted. The order of the builds is swapped every round. Builds
// that took turns in one process charged each other for their garbage (collected during the other's batches) and made
// the builtins' inline caches see both: a build that made less garbage made the other look faster.
//
// Prints, for each build, each round's median µs of CPU per task (user + system) and the median of the rounds.

import { execFile } from 'node:child_process';
import { resolve, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import pg from 'pg';
import { CURRENT_DIST, median, positiveIntOption } from './lib/report.mjs';
import { POSTGRES_URL, dropSchema } from './lib/servers.mjs';
import { w6Task } from './lib/w6-requests.mjs';

const { values: args } = parseArgs({
  options: {
    dist: { type: 'string', multiple: true },
    rounds: { type: 'string', default: '5' },
    batches: { type: 'string', default: '30' },
    batch: { type: 'string', default: '1000' },
    warmup: { type: 'string', default: '10' },
    child: { type: 'boolean', default: false },
  },
});
const ROUNDS = positiveIntOption(args, 'rounds');
const BATCHES = positiveIntOption(args, 'batches');
const BATCH = positiveIntOption(args, 'batch');
const WARMUP = positiveIntOption(args, 'warmup');
const SCHEMA = 'retryd_bench_w6_cpu';
const dists = (args.dist ?? [CURRENT_DIST]).map((d) => resolve(d));
const run = promisify(execFile);

if (args.child) {
  // One build: prints the median µs of CPU per task of its counted batches.
  const { createPgEnqueuer } = await import(join(dists[0], 'pg-enqueue', 'index.js'));
  const enqueuer = createPgEnqueuer({ schema: SCHEMA, allowTargets: '127.0.0.1/32', env: {} });
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  const notBefore = Date.now() + 3_600_000;
  const perTask = [];
  try {
    for (let b = 0; b < WARMUP + BATCHES; b++) {
      const tasks = Array.from({ length: BATCH }, (_, i) => w6Task(b * BATCH + i, { keyPrefix: 'cpu', notBefore }));
      await client.query('BEGIN');
      const before = process.cpuUsage();
      await enqueuer.enqueueBatch(client, tasks);
      const used = process.cpuUsage(before);
      await client.query('ROLLBACK');
      if (b >= WARMUP) perTask.push((used.user + used.system) / BATCH);
    }
  } finally {
    await client.end();
  }
  console.log(JSON.stringify({ perTask: median(perTask) }));
} else {
  await dropSchema(SCHEMA);
  await run(process.execPath, [join(dists[0], 'cli', 'main.js'), 'migrate', '--store', `${POSTGRES_URL}?schema=${SCHEMA}`]);
  /** @type {number[][]} */
  const rounds = dists.map(() => []);
  const self = fileURLToPath(import.meta.url);
  try {
    for (let r = 0; r < ROUNDS; r++) {
      const order = dists.map((_, i) => i);
      if (r % 2 === 1) order.reverse();
      for (const i of order) {
        const childArgs = [self, '--child', '--dist', dists[i], '--batches', String(BATCHES), '--batch', String(BATCH), '--warmup', String(WARMUP)];
        const { stdout } = await run(process.execPath, childArgs);
        rounds[i].push(JSON.parse(stdout.trim().split('\n').at(-1) ?? 'null').perTask);
      }
    }
  } finally {
    await dropSchema(SCHEMA);
  }
  dists.forEach((dist, i) => {
    const each = rounds[i].map((x) => x.toFixed(2)).join(', ');
    console.log(`${dist}: ${median(rounds[i]).toFixed(2)} µs of CPU a task (median of ${ROUNDS} rounds: ${each}; each the median of ${BATCHES} batches of ${BATCH})`);
  });
}
