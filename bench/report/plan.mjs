// What `npm run bench` runs: each workload script of bench/service/ with its arguments, per store, at full size or
// at the smoke sizes of `--quick`, and how long each is expected to take on a quiet 2-core machine.

/** The stores retryd runs on, in report order. */
export const STORES = Object.freeze(['sqlite', 'postgres', 'redis']);
/** The W1 peers (bench/service/lib/contenders/): BullMQ on Redis and pg-boss on PostgreSQL. */
export const PEERS = Object.freeze(['bullmq', 'pgboss']);
/**
 * What the report covers: the workloads of WORKLOADS.md (`w1grpc`: W1 over gRPC, retryd alone on each store, beside W1
 * over HTTP, `w1.mjs --downstream grpc`; `w6tx`: W6 through the transactional enqueue of
 * `@retryd/server/pg` beside pg-boss's `insert` on the same client, w6-transactional.mjs, on PostgreSQL only; W7: the
 * cases w7.mjs has, each with the default protections and with them off; W8: ten minutes of steady load with retention,
 * read against W4's lag on the same store; `w4paired`: W4 against its two relays in paired rounds, w4-paired.mjs, the
 * reading its lag aim is judged on), then `space` (what a pending task takes in each store,
 * store-space.mjs) and `ceilings` (what this machine allows without retryd's work: each store's insert alone,
 * insert-floor.mjs; W6's requests through the least an HTTP enqueue does, beside retryd and the peer's bulk insert,
 * ingest-floor.mjs; and W4's load through a bare relay, w4-ceiling.mjs), the figures issue 14's aims are read
 * against.
 */
export const WORKLOADS = Object.freeze(['w1', 'w1grpc', 'w2', 'w3', 'w4', 'w4paired', 'w5', 'w6tx', 'w7', 'w8', 'space', 'ceilings']);
/** The workloads whose scripts run a `--baseline` build beside the current one (the report's before and after). */
export const BASELINE_WORKLOADS = Object.freeze(['w1', 'w4']);

/**
 * W1's retryd runs: with the default protections (the headline: what users run) and with `--protection off`, back to
 * back in every round; the page shows defaults ÷ off.
 */
const W1_PROTECTIONS = ['--protection', 'defaults,off'];

/**
 * Redis as deployed (docs/stores.md: AOF, `appendfsync everysec`, Redis's own default for it): when the run has Redis,
 * W1 starts a Redis of its own with AOF and runs retryd, BullMQ and the bare loop with the Redis store's work on it too,
 * the headline for Redis; the runs on the machine's Redis (no persistence) stay beside them as a second row.
 */
const W1_REDIS_AOF = ['--redis-aof', 'everysec'];

/**
 * Arguments per workload. Full: the sizes of WORKLOADS.md (W1 with three rounds, rotated, for medians, and W6 in a
 * transaction with seven; W7 its 5,000 tasks a case, every case of w7.mjs: a run of 2,000 is CI-sized, and the fixed
 * costs of finding out what a target does weigh on it more than on the workload). Quick: a smoke run that proves the
 * pipeline end to end in seconds; its figures mean nothing.
 */
const ARGS = {
  full: {
    w1: [...W1_PROTECTIONS, '--rounds', '3'],
    w1grpc: ['--protection', 'defaults', '--rounds', '3'],
    w2: [],
    w3: ['--svg', 'none'],
    w4: [],
    w4paired: ['--rounds', '3'],
    w5: [],
    w6tx: ['--tasks', '50000', '--rounds', '7'],
    w7: ['--tasks', '5000'],
    w8: [],
    space: ['--tasks', '100000'],
    'insert-floor': [],
    'ingest-floor': ['--tasks', '50000', '--rounds', '3'],
    'w4-ceiling': [],
  },
  quick: {
    w1: [...W1_PROTECTIONS, '--tasks', '300', '--rounds', '1'],
    w1grpc: ['--protection', 'defaults', '--tasks', '300', '--rounds', '1'],
    w2: ['--backlog', '2000', '--due', '100'],
    w3: ['--tasks', '200', '--outage', '1', '--capacity', '200', '--limit', '200', '--svg', 'none'],
    w4: ['--seconds', '2', '--warmup', '1', '--rate', '500'],
    w4paired: ['--rounds', '1', '--seconds', '2', '--warmup', '1', '--rate', '500'],
    w5: ['--a-tasks', '2000', '--b-tasks', '10', '--settle', '0.5', '--a-window', '1'],
    w6tx: ['--tasks', '2000', '--rounds', '1'],
    w7: ['--tasks', '200', '--timeout', '30', '--dead-seconds', '3'],
    w8: ['--minutes', '0.5', '--rate', '100'],
    space: ['--tasks', '2000'],
    'insert-floor': ['--batches', '2'],
    'ingest-floor': ['--tasks', '2000', '--rounds', '1'],
    'w4-ceiling': ['--seconds', '2', '--warmup', '1', '--rate', '500'],
  },
};

/**
 * Minutes each step takes at full size on a quiet 2-core machine (from the runs in docs/benchmarks-history.md):
 * W1 about 40 s per contender and round; W2 about 6 min per store (1,000,000 tasks through the API, then through
 * the library); W3 two storms of about 25 s plus start-up; W4 10 s of warm-up, 60 s measured, and the drain; W4
 * paired three rounds of three runs, each 10 s of warm-up, 20 s measured and about 5 s of start-up and drain; W5 two
 * variants of about 40 s (200,000 tasks enqueued, then B's 100 and the window after them); W7 nine cases twice at 5,000 tasks,
 * f's two dead minutes and b90's 25 s runs the longest, g's runs three each (with its bad target, with it healthy, without its tasks) and e's and g's a few seconds;
 * W8 its 10 minutes, then reading back the last minute's tasks; W6 through the transactional enqueue seven rounds of
 * 50,000 tasks through each side, with a migrated schema for retryd and pg-boss's own every round (a round is under a
 * second a side, and one round's ratio moves by ±10%: three rounds' median came out 0.95× where five's gave 1.02×).
 */
const FULL_MINUTES = { w1PerContenderRound: 0.7, w2: 6, w3: 1.5, w4: 1.7, w4paired: 5.3, w5: 1.5, w6tx: 2, w7: 12, w8: 10.7, space: 0.7, 'insert-floor': 0.7, 'ingest-floor': 1.5, 'w4-ceiling': 1.4 };

/**
 * The steps of a run, in order: `{ workload, script?, store, args, minutes }` (`script`: the file of bench/service/
 * it runs, when not the workload's own). W1 runs once with every store and peer side by side (its rounds rotate the
 * order over all of them); W6 through the transactional enqueue once, on PostgreSQL, when the run has it (beside
 * pg-boss when the run has it); W2–W5, W7, `space` and the store inserts of `ceilings` run once per store, W4's bare
 * relay once per kind of commit. With `baseline` (another build's `dist/cli/main.js`), W1 and W4 run that build
 * too, beside the current one in every round (the report's before and after), which doubles their retryd runs; W1
 * also runs the current build a second time (`--control`), whose ratio to the first is the noise the before-and-after
 * ratio is read against.
 */
export function planRuns({ quick, stores = STORES, peers = PEERS, workloads = WORKLOADS, baseline }) {
  const mode = quick ? 'quick' : 'full';
  const steps = [];
  // A step beside the store's peer (BullMQ for SQLite and Redis, pg-boss for PostgreSQL) when the run has it.
  const peerArgs = (store) => (peers.includes(store === 'postgres' ? 'pgboss' : 'bullmq') ? [] : ['--peer', 'none']);
  const withBaseline = (workload, args) => {
    if (baseline === undefined || !BASELINE_WORKLOADS.includes(workload)) return args;
    return [...args, '--baseline', baseline, ...(workload === 'w1' ? ['--control'] : [])];
  };
  for (const workload of WORKLOADS.filter((w) => workloads.includes(w))) {
    if (workload === 'w1') {
      // The bare loop, and on each store the bare loop with the store's work (w1.mjs runs `bare-store` once per
      // store): the two ceilings W1's aims are read against.
      const only = ['retryd', ...peers, 'bare', ...(stores.length > 0 ? ['bare-store'] : [])];
      const rounds = quick ? 1 : 3;
      // Per store: retryd with the defaults and off, the bare loop with the store's work, and the before and control;
      // on Redis with AOF, retryd with the defaults and off, the bare loop with its work and BullMQ when it runs.
      const aof = stores.includes('redis');
      const contenders = stores.length * (baseline === undefined ? 3 : 5) + peers.length + 1 + (aof ? 3 + (peers.includes('bullmq') ? 1 : 0) : 0);
      steps.push({
        workload,
        store: stores.join(','),
        args: withBaseline(workload, ['--store', stores.join(','), '--only', only.join(','), ...ARGS[mode].w1, ...(aof ? W1_REDIS_AOF : [])]),
        minutes: quick ? 0.2 : FULL_MINUTES.w1PerContenderRound * rounds * contenders,
      });
      continue;
    }
    if (workload === 'w1grpc') {
      // W1 over gRPC: retryd alone (no peer speaks gRPC), with its default protections, every store side by side.
      if (stores.length > 0) {
        steps.push({
          workload,
          script: 'w1',
          store: stores.join(','),
          args: ['--downstream', 'grpc', '--store', stores.join(','), '--only', 'retryd', ...ARGS[mode].w1grpc],
          minutes: quick ? 0.2 : FULL_MINUTES.w1PerContenderRound * 3 * stores.length,
        });
      }
      continue;
    }
    if (workload === 'w6tx') {
      // The transactional enqueue is PostgreSQL's alone (`@retryd/server/pg`), in the application's transaction.
      if (stores.includes('postgres')) {
        steps.push({ workload, script: 'w6-transactional', store: 'postgres', args: [...peerArgs('postgres'), ...ARGS[mode].w6tx], minutes: quick ? 0.2 : FULL_MINUTES.w6tx });
      }
      continue;
    }
    if (workload === 'w4paired') {
      // Per store, retryd, the relay with the store's work and the bare relay back to back in each round: drift hits
      // all three alike, and the median of the rounds' ratios is the figure W4's lag aim is judged on.
      for (const store of stores) {
        steps.push({ workload, script: 'w4-paired', store, args: ['--store', store, ...ARGS[mode].w4paired], minutes: quick ? 0.3 : FULL_MINUTES.w4paired });
      }
      continue;
    }
    if (workload === 'space') {
      for (const store of stores) {
        // Beside the peer on the same server, which keeps the same calls as jobs (store-space.mjs has none for SQLite).
        steps.push({ workload, script: 'store-space', store, args: ['--store', store, ...peerArgs(store), ...ARGS[mode].space], minutes: quick ? 0.2 : FULL_MINUTES.space });
      }
      continue;
    }
    if (workload === 'ceilings') {
      for (const store of stores) {
        steps.push({ workload, script: 'insert-floor', store, args: ['--store', store, ...ARGS[mode]['insert-floor']], minutes: quick ? 0.2 : FULL_MINUTES['insert-floor'] });
        steps.push({ workload, script: 'ingest-floor', store, args: ['--store', store, ...peerArgs(store), ...ARGS[mode]['ingest-floor']], minutes: quick ? 0.3 : FULL_MINUTES['ingest-floor'] });
      }
      // The relay commits to disk as SQLite and PostgreSQL do; for Redis (no AOF: nothing on disk) it does not.
      const relays = [
        { store: stores.filter((s) => s !== 'redis').join(','), args: [] },
        { store: stores.includes('redis') ? 'redis' : '', args: ['--no-sync'] },
      ].filter((r) => r.store !== '');
      for (const relay of relays) {
        steps.push({ workload, script: 'w4-ceiling', store: relay.store, args: [...relay.args, ...ARGS[mode]['w4-ceiling']], minutes: quick ? 0.2 : FULL_MINUTES['w4-ceiling'] });
      }
      // And per store, the relay with W4's work on that store (its hand-off inserts and completions, its server): the
      // ceiling of a durable relay on the store, which retryd's W4 lag there is also read against.
      for (const store of stores) {
        steps.push({ workload, script: 'w4-ceiling', store, args: ['--store', store, ...ARGS[mode]['w4-ceiling']], minutes: quick ? 0.2 : FULL_MINUTES['w4-ceiling'] });
      }
      continue;
    }
    const minutes = quick ? 0.2 : FULL_MINUTES[workload] * (baseline !== undefined && BASELINE_WORKLOADS.includes(workload) ? 2 : 1);
    for (const store of stores) {
      steps.push({ workload, store, args: withBaseline(workload, ['--store', store, ...ARGS[mode][workload]]), minutes });
    }
  }
  return steps;
}

/** Parses a comma-separated list against the allowed values; the message names the option and the rule. */
export function parseList(option, value, allowed) {
  if (value === 'none') return [];
  const items = value.split(',').map((s) => s.trim()).filter((s) => s !== '');
  for (const item of items) {
    if (!allowed.includes(item)) throw new Error(`--${option} must list some of ${allowed.join(', ')} (or none), got ${item}`);
  }
  return allowed.filter((a) => items.includes(a));
}
