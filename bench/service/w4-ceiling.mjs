// W4's ceiling on this machine: the dispatch lag of a bare durable relay (./lib/bare-relay.mjs) under W4's load,
// measured exactly as W4 measures retryd (./lib/dispatch-lag.mjs), so that retryd's lag splits into what any durable
// relay pays here (a commit, loopback HTTP, three processes on the machine's cores) and what its scheduling adds.
//
//   node bench/service/w4-ceiling.mjs [--seconds 60] [--warmup 10] [--rate 2000] [--per-tick 20] [--rounds 1]
//                                     [--no-sync] [--json-file FILE]
//
// The relay parses each batch, appends it to a log file and fdatasyncs it, answers, and sends every task to the
// downstream at once; each answer is appended and fdatasync'd too. Commits are grouped per turn of the event loop, as
// retryd's SQLite store commits. No validation, idempotency, leases or retries: a floor that no product meets, but
// one that shows what the machine allows. --no-sync: the relay appends but never fdatasyncs (the ceiling for a store
// that commits nothing to disk, such as Redis without AOF).
//
// --json-file FILE writes { machine, sync, rate, seconds, perTick, rounds: [{ lag, missing, cpuMsPerTask, lateTicks,
// ticks }], lag }: each round's dispatch lag in ms as summarize() gives it ({ n, min, p50, p99, max, mean }), the tasks
// that never arrived, the relay's CPU ms a task, the batches sent > 2 ms late of those sent; the top-level `lag` is
// the round's with the median p99.

import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { startDownstream } from './lib/downstream-client.mjs';
import { lagsOf, sendDueNow } from './lib/dispatch-lag.mjs';
import { fmt, printDiskSync, printMachine, summarize, writeJsonFile } from './lib/report.mjs';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    warmup: { type: 'string', default: '10' },
    rate: { type: 'string', default: '2000' },
    'per-tick': { type: 'string', default: '20' },
    rounds: { type: 'string', default: '1' },
    'no-sync': { type: 'boolean', default: false },
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

const machine = printMachine('machine', { build: false });
machine.diskSync = await printDiskSync();
const relayKind = sync ? 'a bare durable relay' : 'a bare relay that never fdatasyncs its log (--no-sync)';
console.log(`W4 ceiling: ${relayKind}, ${fmt(rate)} tasks/s (${perTick} every ${tickMs} ms) for ${seconds} s, after ${args.warmup} s of warm-up\n`);

/** CPU ms a process has used so far (user + system). */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function startRelay(logFile) {
  const argv = sync ? [logFile] : [logFile, 'nosync'];
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
      child.kill('SIGTERM');
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
    const relay = await startRelay(join(dir, 'relay.log'));
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
      const cpu0 = cpuMs(relay.pid);
      const sent = await sendDueNow(relay, { total, makeTask: makeTask(`ceiling-${round}`), perTick, tickMs });
      await ds.waitReached({ stallMs: 30_000 });
      const cpu = cpuMs(relay.pid) - cpu0;
      const { lags, missing } = lagsOf(sent.created, await ds.arrivals());
      const lag = summarize(lags);
      rounds.push({ lag, missing, cpuMsPerTask: cpu / total, lateTicks: sent.schedule.lateTicks, ticks: sent.schedule.ticks });
      console.log(
        `bare relay (${sync ? 'fdatasync' : 'no fdatasync'})${ROUNDS > 1 ? ` round ${round + 1}` : ''}: sent ${fmt(total)} tasks at ${fmt(total / (sent.ms / 1000))} tasks/s ` +
          `(${sent.schedule.lateTicks} of ${fmt(sent.schedule.ticks)} batches sent > 2 ms late); enqueue round trip p50 ` +
          `${fmt(sent.latency.p50, 2)} ms, p99 ${fmt(sent.latency.p99, 2)} ms; lag p50 ${fmt(lag.p50, 2)} / p99 ${fmt(lag.p99, 2)} / ` +
          `max ${fmt(lag.max, 1)} ms; ${fmt(missing)} never arrived; CPU ${fmt(cpu / total, 3)} ms per task`,
      );
    } finally {
      await relay.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }
} finally {
  await ds.close();
}

// The round with the median p99 (the upper middle of an even count) stands for the run.
const byP99 = [...rounds].sort((a, b) => a.lag.p99 - b.lag.p99);
writeJsonFile(args['json-file'], {
  machine,
  sync,
  rate,
  seconds,
  perTick,
  rounds,
  lag: byP99[Math.floor(byP99.length / 2)]?.lag,
});
