// W4's ceiling on this machine: the dispatch lag of a bare durable relay (./lib/bare-relay.mjs) under W4's load,
// measured exactly as W4 measures retryd (./lib/dispatch-lag.mjs), so that retryd's lag splits into what any durable
// relay pays here (a commit, loopback HTTP, three processes on the machine's cores) and what its scheduling adds.
//
//   node bench/service/w4-ceiling.mjs [--seconds 60] [--warmup 10] [--rate 2000] [--per-tick 20] [--rounds 1]
//                                     [--no-sync | --store sqlite|postgres|redis] [--throughput] [--json-file FILE]
//
// The relay parses each batch, appends it to a log file and fdatasyncs it, answers, and sends every task to the
// downstream at once; each answer is appended and fdatasync'd too. Commits are grouped per turn of the event loop, as
// retryd's SQLite store commits. No validation, idempotency, leases or retries: a floor that no product meets, but
// one that shows what the machine allows. --no-sync: the relay appends but never fdatasyncs (the ceiling for a store
// that commits nothing to disk, such as Redis without AOF).
// --store KIND: the relay does W4's store work on the current build's store of that kind instead of its log (a fresh
// store every round, as W4 gives retryd; lib/bare-relay.mjs says what it writes): the ceiling of a durable relay on that
// store, its commits, round trips and server included, which retryd's lag on the store splits against. The figures add
// the store server's CPU per task (PostgreSQL and Redis: every process of the server, as W1 reads it).
// `node --cpu-prof --cpu-prof-dir DIR bench/service/w4-ceiling.mjs …` profiles the relay too: it inherits the flags.
// --throughput: the relay's throughput instead of its lag: after the warm-up, the same number of tasks (--seconds ×
// --rate) sent as fast as the relay answers (W4's batches of --per-tick, 16 requests in flight), and the tasks/s that
// reached the downstream, from the first arrival to the last. What the machine sustains through the relay: the
// scarce-CPU run (`npm run bench -- --cpus N`) gives W4 the same share of it on every setting.
//
// --json-file FILE writes { machine, sync, store, rate, seconds, perTick, rounds: [{ lag, missing, cpuMsPerTask,
// storeCpuMsPerTask, lateTicks, ticks }], lag }: `store` null without --store; each round's dispatch lag in ms as
// summarize() gives it ({ n, min, p50, p99, max, mean }), the tasks that never arrived, the relay's CPU ms a task, its
// store server's (only with --store on a server), the batches sent > 2 ms late of those sent; the top-level `lag` is
// the round's with the median p99. With --throughput, rounds: [{ tasksPerSec, tasks, missing }] and, in place of
// `lag`, `tasksPerSec`: the median round's.

import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { startDownstream } from './lib/downstream-client.mjs';
import { lagsOf, sendDueNow } from './lib/dispatch-lag.mjs';
import { retrydStore } from './lib/contenders/retryd.mjs';
import { storeServerCpuMs } from './lib/contenders/call-downstream.mjs';
import { STORE_NAMES, fmt, printDiskSync, printMachine, summarize, writeJsonFile } from './lib/report.mjs';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    warmup: { type: 'string', default: '10' },
    rate: { type: 'string', default: '2000' },
    'per-tick': { type: 'string', default: '20' },
    rounds: { type: 'string', default: '1' },
    'no-sync': { type: 'boolean', default: false },
    store: { type: 'string' },
    throughput: { type: 'boolean', default: false },
    'json-file': { type: 'string' },
  },
});
const seconds = Number(args.seconds);
const rate = Number(args.rate);
const perTick = Number(args['per-tick']);
const tickMs = (1000 * perTick) / rate;
const total = Math.round(seconds * rate);
const ROUNDS = Number(args.rounds);
const sync = !args['no-sync'];
/** Batch requests kept in flight by --throughput: enough that the relay, not the sender, sets the pace. */
const THROUGHPUT_IN_FLIGHT = 16;
const storeKind = args.store;
if (storeKind !== undefined && STORE_NAMES[storeKind] === undefined) throw new Error(`--store must be sqlite, postgres or redis, got ${storeKind}`);
if (storeKind !== undefined && !sync) throw new Error('--no-sync and --store do not go together: with --store the store commits as it does for retryd');

const machine = printMachine('machine', { build: false });
machine.diskSync = await printDiskSync();
const relayKind =
  storeKind !== undefined
    ? `a bare relay with W4's work on the ${STORE_NAMES[storeKind]} store (hand-off insert, completions)`
    : sync
      ? 'a bare durable relay'
      : 'a bare relay that never fdatasyncs its log (--no-sync)';
console.log(
  args.throughput
    ? `W4 ceiling: the throughput of ${relayKind}: ${fmt(total)} tasks as fast as it answers (${perTick} a request, ${THROUGHPUT_IN_FLIGHT} requests in flight), after ${args.warmup} s of warm-up at ${fmt(rate)} tasks/s\n`
    : `W4 ceiling: ${relayKind}, ${fmt(rate)} tasks/s (${perTick} every ${tickMs} ms) for ${seconds} s, after ${args.warmup} s of warm-up\n`,
);

/**
 * Sends `total` tasks as W4's batches, `THROUGHPUT_IN_FLIGHT` requests at a time, each sent as soon as one is
 * answered; resolves once every batch is answered.
 */
async function saturate(relay, total, makeTask) {
  let next = 0;
  const sender = async () => {
    while (next < total) {
      const from = next;
      next = Math.min(total, next + perTick);
      await relay.enqueueBatch(Array.from({ length: next - from }, (_, j) => makeTask(from + j)));
    }
  };
  await Promise.all(Array.from({ length: THROUGHPUT_IN_FLIGHT }, sender));
}

/** CPU ms a process has used so far (user + system). */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** The relay's process, on its log file (`place` undefined) or on the store at `place` (from `retrydStore`). */
async function startRelay(logFile, place) {
  const argv = place !== undefined ? ['--store', place.kind, place.url] : sync ? [logFile] : [logFile, 'nosync'];
  const child = fork(join(import.meta.dirname, 'lib', 'bare-relay.mjs'), argv, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise((resolve, reject) => {
    child.on('message', (/** @type {any} */ m) => m.event === 'listening' && resolve(m.port));
    child.once('exit', (code) => reject(new Error(`the relay exited with ${code}`)));
  });
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 8, keepAliveTimeout: 60_000 });
  return {
    pid: child.pid,
    async enqueueBatch(tasks) {
      const res = await pool.request({ method: 'POST', path: '/retry-tasks/batch', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tasks }) });
      return (/** @type {{ results: { task: object }[] }} */ (await res.body.json())).results.map((r) => r.task);
    },
    async stop() {
      await pool.close();
      // Gone before its store is dropped.
      const exited = child.exitCode !== null || child.signalCode !== null ? undefined : new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Each round's figures, for --json-file. */
const rounds = [];
const ds = await startDownstream();
const target = `${ds.url}/w4`;
try {
  for (let round = 0; round < ROUNDS; round++) {
    const dir = mkdtempSync(join(tmpdir(), 'retryd-w4-ceiling-'));
    const place = storeKind === undefined ? undefined : await retrydStore(storeKind, { name: 'w4_ceiling' });
    const relay = await startRelay(join(dir, 'relay.log'), place);
    try {
      const makeTask = (prefix) => (i) => ({
        targetUrl: target,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ orderId: i, amountCents: 1250, currency: 'EUR', note: 'w4' }),
        idempotencyKey: `${prefix}-${i}`,
      });
      const warm = Math.round(Number(args.warmup) * rate);
      if (warm > 0) {
        await ds.reset({ mode: 'ok', expect: warm });
        await sendDueNow(relay, { total: warm, makeTask: makeTask(`ceiling-${round}-warmup`), perTick, tickMs });
        await ds.waitReached({ stallMs: 30_000 });
      }
      await ds.reset({ mode: 'ok', expect: total });
      if (args.throughput) {
        await saturate(relay, total, makeTask(`ceiling-${round}`));
        await ds.waitReached({ stallMs: 30_000 });
        const times = [...(await ds.arrivals({ prefix: `ceiling-${round}-` })).values()];
        const spanMs = Math.max(...times) - Math.min(...times);
        const tasksPerSec = spanMs > 0 ? ((times.length - 1) * 1000) / spanMs : undefined;
        rounds.push({ tasksPerSec, tasks: times.length, missing: total - times.length });
        console.log(`bare relay throughput${ROUNDS > 1 ? ` round ${round + 1}` : ''}: ${fmt(times.length)} of ${fmt(total)} tasks arrived at ${fmt(tasksPerSec)} tasks/s`);
        continue;
      }
      const cpu0 = cpuMs(relay.pid);
      const storeCpu0 = storeKind === undefined ? undefined : await storeServerCpuMs(storeKind);
      const sent = await sendDueNow(relay, { total, makeTask: makeTask(`ceiling-${round}`), perTick, tickMs });
      await ds.waitReached({ stallMs: 30_000 });
      const cpu = cpuMs(relay.pid) - cpu0;
      const storeCpu1 = storeKind === undefined ? undefined : await storeServerCpuMs(storeKind);
      const storeCpu = storeCpu0 === undefined || storeCpu1 === undefined ? undefined : storeCpu1 - storeCpu0;
      const { lags, missing } = lagsOf(sent.created, await ds.arrivals());
      const lag = summarize(lags);
      const storeCpuMsPerTask = storeCpu === undefined ? undefined : storeCpu / total;
      rounds.push({ lag, missing, cpuMsPerTask: cpu / total, storeCpuMsPerTask, lateTicks: sent.schedule.lateTicks, ticks: sent.schedule.ticks });
      const kind = storeKind !== undefined ? `${STORE_NAMES[storeKind]} store's work` : sync ? 'fdatasync' : 'no fdatasync';
      console.log(
        `bare relay (${kind})${ROUNDS > 1 ? ` round ${round + 1}` : ''}: sent ${fmt(total)} tasks at ${fmt(total / (sent.ms / 1000))} tasks/s ` +
          `(${sent.schedule.lateTicks} of ${fmt(sent.schedule.ticks)} batches sent > 2 ms late); enqueue round trip p50 ` +
          `${fmt(sent.latency.p50, 2)} ms, p99 ${fmt(sent.latency.p99, 2)} ms; lag p50 ${fmt(lag.p50, 2)} / p99 ${fmt(lag.p99, 2)} / ` +
          `max ${fmt(lag.max, 1)} ms; ${fmt(missing)} never arrived; CPU ${fmt(cpu / total, 3)} ms per task` +
          `${storeCpuMsPerTask === undefined ? '' : `, store server CPU ${fmt(storeCpuMsPerTask, 3)} ms per task`}`,
      );
    } finally {
      await relay.stop();
      rmSync(dir, { recursive: true, force: true });
      await place?.cleanup();
    }
  }
} finally {
  await ds.close();
}

// The median round stands for the run (the upper middle of an even count): by throughput, or by lag p99.
const median = (key) => [...rounds].sort((a, b) => key(a) - key(b))[Math.floor(rounds.length / 2)];
const figures = args.throughput ? { tasksPerSec: median((r) => r.tasksPerSec ?? 0)?.tasksPerSec } : { lag: median((r) => r.lag.p99)?.lag };
writeJsonFile(args['json-file'], { machine, sync, store: storeKind ?? null, rate, seconds, perTick, rounds, ...figures });
