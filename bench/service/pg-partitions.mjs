// PostgreSQL past one table (docs/stores.md): W1, W2 and W4 on PostgreSQL with today's single `tasks` table beside the
// same table hash-partitioned by tenant_id (lib/pg-partitioned-tasks.mjs), interleaved in one run.
//
//   node bench/service/pg-partitions.mjs [--partitions 8,32] [--rounds 3] [--workloads w1,w2,w4]
//                                        [--w2-backlog 300000] [--w4-seconds 30] [--out DIR] [--from-round 1]
//                                        [--json-file FILE]
//
// Every round runs each workload once per layout (`single`, then one per --partitions count), each in its own child
// process (node bench/service/wN.mjs --store postgres --json-file …, RETRYD_BENCH_PG_PARTITIONS set for a partitioned
// layout) on a fresh schema; which layout goes first rotates by round. W1: --only retryd, 20,000 tasks, the default
// protections. W2: --skip-library (the library's enqueue writes the same rows through the same statement), a backlog of
// --w2-backlog (default 300,000 of W2's 1,000,000, to keep a round within minutes on this machine). W4: 2,000/s for
// --w4-seconds after 5 s of warm-up. Figures: every round, the medians, and partitioned ÷ single (of the medians).
// Each child's JSON is kept in --out (default a temporary directory), the summary in --json-file. A child that fails
// (the machine's PostgreSQL is shared: another user's load or restart) is run once more, then its round is left out.
// --from-round N resumes an interrupted run: rounds before N are read from the JSON files already in --out.
// Build the service first: npm run build

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fmt, median, printMachine, printTable, writeJsonFile } from './lib/report.mjs';

const { values: args } = parseArgs({
  options: {
    partitions: { type: 'string', default: '8,32' },
    rounds: { type: 'string', default: '3' },
    workloads: { type: 'string', default: 'w1,w2,w4' },
    'w2-backlog': { type: 'string', default: '300000' },
    'w4-seconds': { type: 'string', default: '30' },
    out: { type: 'string' },
    'from-round': { type: 'string', default: '1' },
    'json-file': { type: 'string' },
  },
});
const ROUNDS = Number(args.rounds);
const layouts = [0, ...args.partitions.split(',').map(Number)];
const workloads = args.workloads.split(',');
const out = args.out ?? (await mkdtemp(join(tmpdir(), 'retryd-pg-partitions-')));
const figure = (x) => fmt(x, Math.abs(x) < 10 ? 4 : Math.abs(x) < 1000 ? 1 : 0);
const layoutName = (n) => (n === 0 ? 'single' : `hash${n}`);

/** The child's flags and the figures read from its JSON, per workload. */
const WORKLOADS = {
  w1: {
    args: ['--only', 'retryd', '--store', 'postgres'],
    figures: (j) => {
      const r = j.results[0];
      return { attemptsPerSec: r.attemptsPerSec, enqueuePerSec: r.enqueuePerSec, cpuMsPerAttempt: r.cpuMsPerAttempt, storeCpuMsPerAttempt: r.storeCpuMsPerAttempt, pass: r.pass };
    },
  },
  w2: {
    args: ['--store', 'postgres', '--skip-library', '--backlog', args['w2-backlog']],
    figures: (j) => ({
      enqueuePerSec: j.api.enqueuePerSec,
      cpuMsPerTask: j.api.cpuMsPerTask,
      storeCpuMsPerTask: j.api.storeCpuMsPerTask,
      bytesAfterBacklog: j.api.sizeAfterBacklog.total,
      steadyLagP99: j.api.dueNow.steady.lag.p99,
      burstLagP99: j.api.dueNow.burst.lag.p99,
    }),
  },
  w4: {
    args: ['--store', 'postgres', '--seconds', args['w4-seconds'], '--warmup', '5'],
    figures: (j) => {
      const r = j.results[0];
      return { lagP50: r.lag.p50, lagP99: r.lag.p99, lagMax: r.lag.max, cpuMsPerAttempt: r.cpuMsPerAttempt, duplicates: r.duplicates, missing: r.missing };
    },
  },
};

function runChild(workload, partitions, file) {
  const env = { ...process.env, RETRYD_BENCH_PG_PARTITIONS: String(partitions) };
  const child = spawn(process.execPath, [join(import.meta.dirname, `${workload}.mjs`), ...WORKLOADS[workload].args, '--json-file', file], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let tail = '';
  child.stdout.on('data', (d) => (tail = (tail + d.toString()).slice(-4000)));
  return /** @type {Promise<void>} */ (
    new Promise((resolve, reject) =>
      child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${workload} (${layoutName(partitions)}) exited ${code}:\n${tail}`)))),
    )
  );
}

const machine = printMachine();
console.log(`PostgreSQL, tasks table: ${layouts.map(layoutName).join(' vs ')}; ${workloads.join(', ')}; ${ROUNDS} rounds; children's JSON in ${out}\n`);
/** rounds[workload][layout] = the figures of each round, in round order. */
/** @type {Record<string, Record<string, Record<string, number>[]>>} */
const rounds = Object.fromEntries(workloads.map((w) => [w, Object.fromEntries(layouts.map((n) => [layoutName(n), []]))]));
/** @type {{ round: number, workload: string, layout: string, error: string }[]} */
const failures = [];
for (let round = 1; round <= ROUNDS; round++) {
  const order = layouts.map((_, i) => layouts[(i + round - 1) % layouts.length]);
  for (const workload of workloads) {
    for (const n of order) {
      const file = join(out, `${workload}-${layoutName(n)}-r${round}.json`);
      const started = performance.now();
      if (round < Number(args['from-round'])) {
        if (!existsSync(file)) continue;
      } else {
        try {
          await runChild(workload, n, file);
        } catch (first) {
          console.log(`round ${round} ${workload} ${layoutName(n)} failed, once more: ${String(first instanceof Error ? first.message : first).split('\n')[0]}`);
          try {
            await runChild(workload, n, file);
          } catch (second) {
            failures.push({ round, workload, layout: layoutName(n), error: String(second instanceof Error ? second.message : second).split('\n')[0] ?? '' });
            continue;
          }
        }
      }
      const figures = { round, ...WORKLOADS[workload].figures(JSON.parse(await readFile(file, 'utf8'))) };
      rounds[workload][layoutName(n)].push(figures);
      console.log(`round ${round} ${workload} ${layoutName(n)} (${fmt((performance.now() - started) / 1000, 0)} s): ${JSON.stringify(figures)}`);
    }
  }
}

const summary = {};
printMachine('load after the run');
for (const workload of workloads) {
  const keys = Object.keys(rounds[workload].single[0]).filter((k) => k !== 'round' && typeof rounds[workload].single[0][k] === 'number');
  const medians = Object.fromEntries(layouts.map((n) => [layoutName(n), Object.fromEntries(keys.map((k) => [k, median(rounds[workload][layoutName(n)].map((r) => r[k]))]))]));
  summary[workload] = { rounds: rounds[workload], medians };
  console.log(`\n${workload}: every round, then the medians and the ratio to the single table`);
  printTable(
    ['layout', 'round', ...keys],
    [
      ...layouts.flatMap((n) => rounds[workload][layoutName(n)].map((r) => [layoutName(n), String(r.round), ...keys.map((k) => figure(r[k]))])),
      ...layouts.map((n) => [layoutName(n), 'median', ...keys.map((k) => figure(medians[layoutName(n)][k]))]),
      ...layouts.slice(1).map((n) => [`${layoutName(n)} ÷ single`, '', ...keys.map((k) => (medians.single[k] === 0 ? '–' : `${(medians[layoutName(n)][k] / medians.single[k]).toFixed(2)}×`))]),
    ],
  );
}
if (failures.length > 0) console.log(`\nleft out: ${JSON.stringify(failures)}`);
writeJsonFile(args['json-file'], { machine, failures, layouts: layouts.map(layoutName), w2Backlog: Number(args['w2-backlog']), w4Seconds: Number(args['w4-seconds']), summary });
