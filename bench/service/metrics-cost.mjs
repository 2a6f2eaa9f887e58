// The CPU the service's Prometheus metrics add per attempt, measured on the metrics alone (no HTTP, no store), so the
// figure is not lost in a shared machine's noise as an end-to-end W1 ratio is.
//
//   npm run bench -- probe metrics-cost [--attempts 1000000] [--targets 20] [--rounds 5] [--dist PATH/dist]
//
// Feeds a `ServiceMetrics` (the build's dist/metrics/service-metrics.js) what the engine tells it during W1: per task
// two `retry_scheduled` attempts and one `succeeded`, each with its schedule lag and duration, the task's end, and one
// store commit per 100 attempts; `--targets` origins and 3 policy names in turn. Figures: ns of CPU per attempt
// (process.cpuUsage over the loop), median of the rounds, and one scrape's time afterwards. Compare with the service's
// CPU per attempt in W1 (docs/benchmarks.md). Build first: npm run build

import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { CURRENT_DIST, printMachine } from './lib/report.mjs';

const { values: args } = parseArgs({
  options: {
    attempts: { type: 'string', default: '1000000' },
    targets: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '5' },
    dist: { type: 'string' },
  },
});
const ATTEMPTS = Number(args.attempts);
const TARGETS = Number(args.targets);
const ROUNDS = Number(args.rounds);
for (const [name, v] of /** @type {[string, number][]} */ ([['--attempts', ATTEMPTS], ['--targets', TARGETS], ['--rounds', ROUNDS]])) {
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive integer, got ${v}`);
}
const dist = args.dist === undefined ? CURRENT_DIST : resolve(args.dist);
const { ServiceMetrics } = await import(pathToFileURL(join(dist, 'metrics', 'service-metrics.js')).href);
const { openStore } = await import(pathToFileURL(join(dist, 'service', 'open-store.js')).href);

printMachine('machine', { build: false });
const { store, blobs } = await openStore('sqlite::memory:');
await store.init?.();

const origins = Array.from({ length: TARGETS }, (_, i) => `https://target-${i}.example`);
const policies = ['default', 'webhooks', null];
const tasks = Array.from({ length: 1_000 }, (_, i) => ({
  tenantId: 'default',
  taskId: `t${i}`,
  targetKey: origins[i % TARGETS],
  policyId: policies[i % 3],
  createdAt: 1_000_000,
  nextAttemptAt: 1_000_000 + i,
}));
const attemptOf = (task, outcome, i) => ({ outcome, startedAt: task.nextAttemptAt + (i % 7), durationMs: 1 + (i % 5) });

function round() {
  const metrics = new ServiceMetrics({ store, processMetrics: false });
  const started = process.cpuUsage();
  for (let i = 0; i < ATTEMPTS; i++) {
    const task = tasks[i % tasks.length];
    const nth = i % 3;
    metrics.attemptRecorded(task, attemptOf(task, nth === 2 ? 'succeeded' : 'retry_scheduled', i));
    if (nth === 2) metrics.taskEnded(task, 'SUCCEEDED', null, task.createdAt + 50);
    if (i % 100 === 0) metrics.storeCallTimed('commit', 0.002);
  }
  const used = process.cpuUsage(started);
  return { nsPerAttempt: ((used.user + used.system) * 1_000) / ATTEMPTS, metrics };
}

round(); // warm-up: JIT, the label children
const results = [];
let last;
for (let r = 0; r < ROUNDS; r++) {
  const { nsPerAttempt, metrics } = round();
  results.push(nsPerAttempt);
  last = metrics;
}
const scrapeStarted = performance.now();
const text = await last.scrape();
const scrapeMs = performance.now() - scrapeStarted;
results.sort((a, b) => a - b);
const median = results[Math.floor(results.length / 2)];
console.log(`metrics cost: ${ATTEMPTS.toLocaleString('en-US')} attempts, ${TARGETS} targets, ${ROUNDS} rounds`);
console.log(`  ns of CPU per attempt: median ${median.toFixed(0)} (rounds ${results.map((r) => r.toFixed(0)).join(', ')})`);
console.log(`  one scrape: ${scrapeMs.toFixed(1)} ms, ${(text.length / 1024).toFixed(1)} KiB`);
await store.close();
await blobs.close?.();
