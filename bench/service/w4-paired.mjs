// W4 against its ceilings, round by round: retryd (./w4.mjs), the relay with the store's work and the bare relay
// (./w4-ceiling.mjs) run back to back in every round, in an order that rotates by round, and each round's ratios are
// taken within the round. On a machine whose speed drifts by minutes (a shared VM, one core shared by every process
// of the run) one run of each, minutes apart, can put the ratio anywhere: lag p99 of the same build moved from 25 to
// 54 ms between 20 s runs on one core here. Paired rounds let drift hit all three alike, and the median of the
// rounds' ratios is the figure.
//
//   node bench/service/w4-paired.mjs [--store sqlite|postgres|redis] [--rounds 5] [--seconds 20] [--warmup 10]
//                                    [--rate 2000] [--per-tick 20] [--cpus N] [--json-file FILE]
//
// The bare relay syncs its log (fdatasync) for SQLite and PostgreSQL and does not for Redis (no persistence), as the
// report reads W4's aim. --cpus N runs every process of each run on the first N cores (`taskset -c`), and the
// machine's PostgreSQL and Redis servers too for the whole of the run (their own affinity given back at the end), as
// `npm run bench -- --cpus N` does; give the rate that is the same share of the bare relay's throughput on N cores
// (the report's W4 note says which). Each run is its script's own process with a fresh store and its own warm-up.
//
// --json-file FILE writes { machine, store, cpus, rate, seconds, rounds: [{ order, retryd, storeRelay, bareRelay,
// ratios }], medians }: each run's lag ({ n, min, p50, p99, max, mean }), the CPU ms a task of the service or relay
// and, for the relays on a server, of the store server; `ratios` of lag p99: retryd ÷ bare relay, retryd ÷ store
// relay, store relay ÷ bare relay.

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { coreList, parseCpus, pinSharedServers } from '../report/scarce.mjs';
import { STORE_NAMES, fmt, median, printMachine, printTable, writeJsonFile } from './lib/report.mjs';

const { values: args } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite' },
    rounds: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '10' },
    rate: { type: 'string', default: '2000' },
    'per-tick': { type: 'string', default: '20' },
    cpus: { type: 'string' },
    'json-file': { type: 'string' },
  },
});
const store = args.store;
if (STORE_NAMES[store] === undefined) throw new Error(`--store must be sqlite, postgres or redis, got ${store}`);
const ROUNDS = Number(args.rounds);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error(`--rounds must be a positive integer, got ${args.rounds}`);
const cpus = parseCpus(args.cpus);
const sized = ['--seconds', args.seconds, '--warmup', args.warmup, '--rate', args.rate, '--per-tick', args['per-tick']];

/** The three contenders of a round: how each is run and where its figures are in its JSON file. */
const CONTENDERS = {
  retryd: { label: 'retryd', script: 'w4.mjs', args: ['--store', store], read: (j) => ({ lag: j.results[0].lag, cpuMsPerTask: j.results[0].cpuMsPerAttempt }) },
  storeRelay: { label: `relay with ${STORE_NAMES[store]}'s work`, script: 'w4-ceiling.mjs', args: ['--store', store], read: readRelay },
  bareRelay: { label: `bare relay (${store === 'redis' ? 'no fdatasync' : 'fdatasync'})`, script: 'w4-ceiling.mjs', args: store === 'redis' ? ['--no-sync'] : [], read: readRelay },
};
function readRelay(j) {
  const round = j.rounds[0];
  return { lag: round.lag, cpuMsPerTask: round.cpuMsPerTask, storeCpuMsPerTask: round.storeCpuMsPerTask };
}
const KEYS = Object.keys(CONTENDERS);

/** One run of a contender in its own process (through `taskset -c` with --cpus): its figures. */
async function runOne(key) {
  const c = CONTENDERS[key];
  const dir = mkdtempSync(join(tmpdir(), 'retryd-w4-paired-'));
  const jsonFile = join(dir, 'run.json');
  const argv = [join(import.meta.dirname, c.script), ...c.args, ...sized, '--json-file', jsonFile];
  const [command, commandArgs] = cpus === undefined ? [process.execPath, argv] : ['taskset', ['-c', coreList(cpus), process.execPath, ...argv]];
  try {
    const code = await new Promise((resolve, reject) => {
      const child = spawn(command, commandArgs, { stdio: ['ignore', 'ignore', 'inherit'] });
      child.once('error', reject);
      child.once('exit', (status, signal) => resolve(status ?? signal));
    });
    if (code !== 0) throw new Error(`${c.label}: ${c.script} exited with ${code}`);
    return c.read(JSON.parse(readFileSync(jsonFile, 'utf8')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const machine = printMachine('machine');
console.log(
  `W4 paired: ${ROUNDS} rounds of retryd, the relay with ${STORE_NAMES[store]}'s work and the bare relay back to back, ` +
    `${args.rate} tasks/s for ${args.seconds} s after ${args.warmup} s of warm-up each${cpus === undefined ? '' : `, every process on ${cpus} core${cpus > 1 ? 's' : ''}`}\n`,
);
const pinning = cpus === undefined ? undefined : pinSharedServers(cpus);
const rounds = [];
try {
  for (let round = 0; round < ROUNDS; round++) {
    // Each contender goes first, second and third in turn.
    const order = KEYS.map((_, i) => KEYS[(i + round) % KEYS.length]);
    const figures = {};
    for (const key of order) figures[key] = await runOne(key);
    const ratios = {
      retrydOverBare: figures.retryd.lag.p99 / figures.bareRelay.lag.p99,
      retrydOverStore: figures.retryd.lag.p99 / figures.storeRelay.lag.p99,
      storeOverBare: figures.storeRelay.lag.p99 / figures.bareRelay.lag.p99,
    };
    rounds.push({ order, ...figures, ratios });
    console.log(
      `round ${round + 1} (${order.join(', ')}): lag p99 retryd ${fmt(figures.retryd.lag.p99, 2)}, store relay ${fmt(figures.storeRelay.lag.p99, 2)}, ` +
        `bare relay ${fmt(figures.bareRelay.lag.p99, 2)} ms; retryd ÷ bare ${ratios.retrydOverBare.toFixed(2)}×, ÷ store relay ${ratios.retrydOverStore.toFixed(2)}×`,
    );
  }
} finally {
  pinning?.restore();
}

/** The median of a figure over the rounds; undefined for a figure no round has (the store server's CPU of a contender without one). */
const m = (get) => {
  const values = rounds.map(get).filter((x) => x !== undefined);
  return values.length === 0 ? undefined : median(values);
};
const medians = {
  ratios: { retrydOverBare: m((r) => r.ratios.retrydOverBare), retrydOverStore: m((r) => r.ratios.retrydOverStore), storeOverBare: m((r) => r.ratios.storeOverBare) },
  ...Object.fromEntries(
    KEYS.map((k) => [
      k,
      { p50: m((r) => r[k].lag.p50), p99: m((r) => r[k].lag.p99), max: m((r) => r[k].lag.max), cpuMsPerTask: m((r) => r[k].cpuMsPerTask), storeCpuMsPerTask: m((r) => r[k].storeCpuMsPerTask) },
    ]),
  ),
};
console.log('');
printTable(
  ['W4, median of the rounds', 'lag p50 (ms)', 'lag p99 (ms)', 'lag max (ms)', 'CPU ms / task', 'store server CPU ms / task'],
  KEYS.map((k) => [CONTENDERS[k].label, fmt(medians[k].p50, 2), fmt(medians[k].p99, 2), fmt(medians[k].max, 1), fmt(medians[k].cpuMsPerTask, 3), medians[k].storeCpuMsPerTask === undefined ? '' : fmt(medians[k].storeCpuMsPerTask, 3)]),
);
const perRound = (get) => rounds.map((r) => `${get(r).toFixed(2)}×`).join(', ');
console.log('');
console.log(`lag p99, retryd ÷ bare relay: median ${medians.ratios.retrydOverBare.toFixed(2)}× (rounds ${perRound((r) => r.ratios.retrydOverBare)}); aim ≤ 1.2×`);
console.log(`lag p99, retryd ÷ relay with the store's work: median ${medians.ratios.retrydOverStore.toFixed(2)}× (rounds ${perRound((r) => r.ratios.retrydOverStore)})`);
console.log(`lag p99, relay with the store's work ÷ bare relay: median ${medians.ratios.storeOverBare.toFixed(2)}× (rounds ${perRound((r) => r.ratios.storeOverBare)})`);
writeJsonFile(args['json-file'], { machine, store, cpus: cpus ?? null, rate: Number(args.rate), seconds: Number(args.seconds), rounds, medians });
