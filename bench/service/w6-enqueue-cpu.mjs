// The application's CPU per task of W6 through the transactional enqueue (`enqueueBatch` of `@retryd/server/pg`),
// counted rather than timed: `process.cpuUsage()` around each batch's `enqueueBatch`, one batch in flight (the process
// does nothing else while the statement runs, so the wait adds no CPU), each batch rolled back. With two or more
// builds (`--dist`), the builds take turns batch by batch in one process, so the machine's load falls on each alike.
//
//   node bench/service/w6-enqueue-cpu.mjs [--dist packages/server/dist]... [--batches 50] [--batch 1000] [--warmup 10]
//
// Prints, for each build, the median and mean µs of CPU per task (user + system) over the counted batches.

import { execFile } from 'node:child_process';
import { resolve, join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import pg from 'pg';
import { CURRENT_DIST, positiveIntOption } from './lib/report.mjs';
import { POSTGRES_URL, dropSchema } from './lib/servers.mjs';
import { w6Task } from './lib/w6-requests.mjs';

const { values: args } = parseArgs({
  options: {
    dist: { type: 'string', multiple: true },
    batches: { type: 'string', default: '50' },
    batch: { type: 'string', default: '1000' },
    warmup: { type: 'string', default: '10' },
  },
});
const BATCHES = positiveIntOption(args, 'batches');
const BATCH = positiveIntOption(args, 'batch');
const WARMUP = positiveIntOption(args, 'warmup');
const SCHEMA = 'retryd_bench_w6_cpu';
const dists = (args.dist ?? [CURRENT_DIST]).map((d) => resolve(d));

await dropSchema(SCHEMA);
await promisify(execFile)(process.execPath, [join(dists[0], 'cli', 'main.js'), 'migrate', '--store', `${POSTGRES_URL}?schema=${SCHEMA}`]);
const builds = [];
for (const dist of dists) {
  const { createPgEnqueuer } = await import(join(dist, 'pg-enqueue', 'index.js'));
  builds.push({ dist, enqueuer: createPgEnqueuer({ schema: SCHEMA, allowTargets: '127.0.0.1/32', env: {} }), perTask: [] });
}
const client = new pg.Client({ connectionString: POSTGRES_URL });
await client.connect();
const notBefore = Date.now() + 3_600_000;
let n = 0;
try {
  for (let b = 0; b < WARMUP + BATCHES; b++) {
    for (const build of builds) {
      const tasks = Array.from({ length: BATCH }, () => w6Task(n++, { keyPrefix: 'cpu', notBefore }));
      await client.query('BEGIN');
      const before = process.cpuUsage();
      await build.enqueuer.enqueueBatch(client, tasks);
      const used = process.cpuUsage(before);
      await client.query('ROLLBACK');
      if (b >= WARMUP) build.perTask.push((used.user + used.system) / BATCH);
    }
  }
} finally {
  await client.end();
  await dropSchema(SCHEMA);
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
for (const { dist, perTask } of builds) {
  const mean = perTask.reduce((a, x) => a + x, 0) / perTask.length;
  console.log(`${dist}: ${median(perTask).toFixed(2)} µs of CPU a task (median of ${perTask.length} batches of ${BATCH}; mean ${mean.toFixed(2)})`);
}
