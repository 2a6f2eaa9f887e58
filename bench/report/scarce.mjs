// The scarce-CPU variant of the report (`--cpus N`, issue 45): W1 and W4, and W4's bare relay, run a second time with
// every process of the step pinned to the first N cores. The step's script is spawned through `taskset -c`, and the
// affinity is inherited by all it starts (retryd, the downstream, the peers, a Redis of its own, the load generator,
// which is the script itself); the machine's shared PostgreSQL and Redis servers, which the harness does not start,
// are pinned with `taskset -a -pc` for the step and given their own affinity back after it.

import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

/** The workloads that run again on scarce CPU (`w4paired`: W4 and its two relays in paired rounds). */
export const SCARCE_WORKLOADS = Object.freeze(['w1', 'w4', 'w4paired']);

/** The shared servers pinned for a scarce step, by process name (`pgrep -x`): every process of each. */
const SHARED_SERVERS = Object.freeze(['postgres', 'redis-server']);

/**
 * `--cpus N`: a whole number of cores, at least 1 and fewer than the machine has (the scarce run must be scarcer than
 * the usual one). `undefined` when the option is not given.
 */
export function parseCpus(value, cores = availableParallelism()) {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n >= cores) throw new Error(`--cpus must be a whole number from 1 to ${cores - 1} (fewer cores than the machine's ${cores}), got ${value}`);
  return n;
}

/** The `taskset -c` core list for N cores: `0` or `0-2`. */
export const coreList = (cpus) => (cpus === 1 ? '0' : `0-${cpus - 1}`);

/**
 * The steps of the scarce run, from the usual run's steps: W1's and W4's again with `cpus`, and W4's bare relay
 * (`w4-ceiling`) on both settings, as W4's lag aim is read against it; a relay the usual run already has is not
 * planned twice. The relays with a store's work (`--store`) that the usual run has run again too. With W4 in the run,
 * the bare relay's throughput (`w4-ceiling --throughput`, the median of three rounds) is measured on both settings
 * before the scarce steps, and the scarce W4 and relay steps are marked `shareOfThroughput`: they run at the same share
 * of it as the usual run's rate (see {@link atShareOfThroughput}). W4 in paired rounds (`w4paired`) runs again the
 * same way; it brings its own relays.
 */
export function planScarce(steps, { cpus }) {
  const relays = steps.filter((s) => s.script === 'w4-ceiling');
  // The relays on a log file (not `--store`, the relay with a store's work), which the aim is read against.
  const logRelays = relays.filter((s) => !s.args.includes('--store'));
  const w4 = steps.filter((s) => s.workload === 'w4');
  // The steps whose rate is a share of the bare relay's throughput: W4's, alone and in paired rounds.
  const atRate = steps.filter((s) => s.workload === 'w4' || s.workload === 'w4paired');
  // W4 on stores that commit to disk is read against the relay that syncs; W4 on Redis without AOF against the one that does not.
  const wanted = [
    { stores: w4.filter((s) => s.store !== 'redis').map((s) => s.store), args: [] },
    { stores: w4.filter((s) => s.store === 'redis').map((s) => s.store), args: ['--no-sync'] },
  ].filter((r) => r.stores.length > 0);
  const w4Args = atRate[0]?.args ?? [];
  // The relay at W4's rate, seconds and warm-up, whatever size the run has.
  const sized = ['--seconds', '--warmup', '--rate'].flatMap((flag) => {
    const at = w4Args.indexOf(flag);
    return at === -1 ? [] : [flag, w4Args[at + 1]];
  });
  const added = wanted
    .filter((r) => !logRelays.some((s) => s.args.includes('--no-sync') === r.args.includes('--no-sync')))
    .map((r) => ({ workload: 'ceilings', script: 'w4-ceiling', store: r.stores.join(','), args: [...r.args, ...sized], minutes: w4[0]?.minutes ?? 0.2 }));
  const relaysAll = [...relays, ...added];
  const throughputStores = [...new Set(atRate.flatMap((s) => s.store.split(',')))].join(',');
  // Three rounds, their median: a single run's throughput on one core drifts with the machine within the hour, and
  // the scarce rate with it (docs/benchmarks-history.md, "W1 and W4 on one machine").
  const throughput = { workload: 'ceilings', script: 'w4-ceiling', store: throughputStores, args: ['--throughput', '--rounds', String(THROUGHPUT_ROUNDS), ...sized], minutes: w4[0]?.minutes ?? relays[0]?.minutes ?? 1.4 };
  const measured = atRate.length > 0 ? [throughput, { ...throughput, cpus }] : [];
  const scarce = [...steps.filter((s) => SCARCE_WORKLOADS.includes(s.workload)), ...(w4.length > 0 ? relaysAll : [])].map((s) => ({
    ...s,
    cpus,
    ...(atRate.includes(s) || s.script === 'w4-ceiling' ? { shareOfThroughput: true } : {}),
  }));
  return [...steps, ...added, ...measured, ...scarce];
}

/** The rounds of the bare relay's throughput on each setting (`w4-ceiling --throughput --rounds`), the median read. */
const THROUGHPUT_ROUNDS = 3;

/** W4's rate, and its bare relay's, when the step's arguments name none (both scripts' default). */
const W4_DEFAULT_RATE = 2000;

/** Whether a run (or step) measured the bare relay's throughput (`w4-ceiling --throughput`). */
const isThroughputRun = (r) => r.script === 'w4-ceiling' && r.args.includes('--throughput');

/**
 * A step marked `shareOfThroughput` (a scarce W4 or relay step), at the rate that is the same share of the bare
 * relay's throughput on its cores as its planned rate is of the throughput on the usual ones, both read from the
 * throughput runs among `runs` (the latest of each); it then carries `rateShare`: `{ usualRate, rate,
 * usualTasksPerSec, scarceTasksPerSec }`. Any other step is returned as it is, and so is a marked one when either
 * throughput is missing (`rateShare.missing` says so): it runs at its planned rate.
 */
export function atShareOfThroughput(step, runs) {
  if (!step.shareOfThroughput) return step;
  const tasksPerSec = (scarce) => runs.findLast((r) => isThroughputRun(r) && (scarce ? r.cpus === step.cpus : r.cpus === undefined) && r.data?.tasksPerSec > 0)?.data.tasksPerSec;
  const usualTasksPerSec = tasksPerSec(false);
  const scarceTasksPerSec = tasksPerSec(true);
  const at = step.args.indexOf('--rate');
  const usualRate = at === -1 ? W4_DEFAULT_RATE : Number(step.args[at + 1]);
  if (usualTasksPerSec === undefined || scarceTasksPerSec === undefined) return { ...step, rateShare: { usualRate, rate: usualRate, missing: true } };
  const rate = Math.max(1, Math.round((usualRate * scarceTasksPerSec) / usualTasksPerSec));
  const args = at === -1 ? [...step.args, '--rate', String(rate)] : step.args.map((a, i) => (i === at + 1 ? String(rate) : a));
  return { ...step, args, rateShare: { usualRate, rate, usualTasksPerSec, scarceTasksPerSec } };
}

/** A process's CPU list as `taskset -pc` prints it (`pid 12's current affinity list: 0,1` → `0,1`). */
function affinityOf(pid) {
  const out = execFileSync('taskset', ['-pc', String(pid)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return /list:\s*(\S+)/.exec(out)?.[1];
}

function pidsOf(name) {
  try {
    return execFileSync('pgrep', ['-x', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split('\n').filter((l) => l !== '').map(Number);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

/**
 * Pins every process of the machine's shared servers to the first `cpus` cores (all their threads), and returns what
 * was pinned and a `restore()` that gives each its affinity back; processes the servers started meanwhile (new
 * PostgreSQL backends, forked from a pinned postmaster) get their server's first process's affinity. A process that
 * ends meanwhile is skipped.
 */
export function pinSharedServers(cpus) {
  const list = coreList(cpus);
  const pinned = [];
  for (const name of SHARED_SERVERS) {
    const pids = pidsOf(name);
    const before = new Map();
    for (const pid of pids) {
      try {
        const affinity = affinityOf(pid);
        if (affinity === undefined) continue;
        execFileSync('taskset', ['-a', '-pc', list, String(pid)], { stdio: 'ignore' });
        before.set(pid, affinity);
      } catch {
        // ended between pgrep and taskset
      }
    }
    if (before.size > 0) pinned.push({ name, pids: [...before.keys()], before });
  }
  const restore = () => {
    for (const { name, before } of pinned) {
      const fallback = before.values().next().value;
      for (const pid of pidsOf(name)) {
        try {
          execFileSync('taskset', ['-a', '-pc', before.get(pid) ?? fallback, String(pid)], { stdio: 'ignore' });
        } catch {
          // ended meanwhile
        }
      }
    }
  };
  return { pinned: pinned.map(({ name, pids }) => ({ name, processes: pids.length })), restore };
}

/** The results as the usual figures read them, with only the scarce steps (`cpus` set) or only the usual ones. */
export function resultsOnCores(results, scarce) {
  return {
    ...results,
    runs: results.runs
      .filter((r) => (r.cpus !== undefined) === scarce)
      .map((r) => {
        const usual = { ...r };
        delete usual.cpus;
        return usual;
      }),
  };
}
