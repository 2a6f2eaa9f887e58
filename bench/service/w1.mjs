// W1 — flaky downstream, fast retries (../../../shared/WORKLOADS.md): retryd, BullMQ and pg-boss side by side.
//
//   node bench/service/w1.mjs [--tasks 20000] [--only retryd,bullmq,pgboss,bare[,bare-store,bare-store-thread]] [--sync full|normal|both]
//                             [--rounds 1] [--store sqlite[,postgres,redis]] [--instances 1[,2,3]] [--concurrency N]
//                             [--cpu-prof DIR] [--baseline PATH/dist/cli/main.js] [--control] [--downstream flaky|ok|grpc]
//                             [--protection defaults|off|defaults,off] [--redis-aof everysec|always] [--json] [--json-file FILE]
//
// Every contender gets the same 20,000 tasks (own idempotency key, small JSON body), the same downstream
// (./downstream.mjs in its own process: 503, 503, then 200 per key) and the same HTTP client (undici).
// The enqueue is timed on its own; the dispatch starts once everything is enqueued (workers started after the
// enqueue for the peers; for retryd every task is due at one instant after the enqueue). Attempts/s is measured
// at the downstream, from the first request it receives to the 20,000th first success.
// References, not peers: `bare`, the same requests with nothing stored or scheduled (the machine's ceiling for them);
// `bare-store`, the bare loop with W1's store work as the engine does it, on each store of --store (SQLite:
// synchronous=FULL), on the loop's thread: the ceiling of a durable dispatcher on that store; `bare-store-thread`,
// the same on SQLite with the store on a thread of its own (not in the default list: what moving the store off the
// event loop would give). See lib/contenders/bare-store.mjs.
// --baseline <path to an older build's dist/cli/main.js> adds that build as one more retryd contender per store
// (`retryd (before)`, its own schema / key prefix), run beside the current build in the same run against the same
// downstream: in every round each before/after pair runs back to back (which goes first alternates by round), and
// the report adds after ÷ before. The current build is packages/server/dist, or RETRYD_CLI.
// --control adds the current build once more per store (`retryd (control)`, its own store), run in the same rounds as
// the pair, and the report adds after ÷ control: an A/A pair, whose ratios show how far this run's ratios move when
// nothing differs. On a shared 2-core machine a W1 round's ratio moves by more than a before/after verdict of a few
// percent (docs/benchmarks-history.md has the spreads measured), so such a verdict needs the control's spread beside it.
// Per-target protection (issue 9): --protection says how each retryd configuration runs. `defaults` (the default):
// as `retryd serve` starts, with the protections a user gets without asking (which must not starve a target that
// answers: W1's target answers every third request). `off`: `retryd serve --protection off` (on an older --baseline
// build without the flag, its target's protections turned off with `PUT /targets/{origin}`; without /targets, as it
// is). `defaults,off`: both, back to back in every round, each taking every place in turn, and the report adds
// defaults ÷ off, each round's and their median (aim: ≥ 0.95× attempts/s; the benchmark report runs W1 so, the
// defaults its headline). --baseline and --control run the first mode listed. `--downstream ok` is the variant for
// the protections' cost when they never trip: the downstream answers 200 to every request (20,000 attempts, the
// protections consulted on every claim), --protection defaulting to `defaults,off` there (aim: defaults ÷ off ≥ 0.90×).
// Redis as deployed (--redis-aof everysec|always): the machine's Redis (REDIS_URL) runs without persistence, which no
// deployment that keeps tasks should (docs/stores.md). With --redis-aof, W1 starts a redis-server of its own on a free
// loopback port (`--appendonly yes --appendfsync <policy> --save ""`, its AOF in a temporary directory on the disk of
// the SQLite figures, all of it removed at the end, on failure too) and runs the Redis contenders again on it, in the
// same rounds: retryd on Redis in each --protection mode (`retryd-redis-aof`, `retryd-redis-aof-protection-off`),
// BullMQ (`bullmq-aof`) and, with bare-store, the bare loop with the Redis store's work (`bare-store-redis-aof`).
// Their durability is read back from that server; their store server CPU is its process's alone (by pid), and the
// other Redis rows' leave it out. retryd on it is judged against BullMQ on it (the aim ≥ 1.5×), the rows on the
// machine's Redis against each other. --baseline and --control run on the machine's Redis only.
// W1 over gRPC (--downstream grpc): the same tasks and the same flaky behaviour (UNAVAILABLE, UNAVAILABLE, then OK per
// key) from ./grpc-downstream.mjs, each task a unary call of `/bench.W1/Charge` with its body's bytes as the message.
// retryd alone (no peer speaks gRPC): --only retryd; its ids end in -grpc. The benchmark report runs it as the `w1grpc`
// step, beside W1 over HTTP.
// Build the service first: npx tsc -b packages/server

import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startDownstream } from './lib/downstream-client.mjs';
import { bareContender } from './lib/contenders/bare.mjs';
import { bareStoreContender } from './lib/contenders/bare-store.mjs';
import { inChild } from './lib/contenders/in-child.mjs';
import { bullmqContender } from './lib/contenders/bullmq.mjs';
import { pgbossContender } from './lib/contenders/pgboss.mjs';
import { retrydContender } from './lib/contenders/retryd.mjs';
import { cpuMsOfCommand, cpuMsOfPid } from './lib/contenders/call-downstream.mjs';
import { AOF_POLICIES, startAofRedis } from './lib/redis-aof-server.mjs';
import { fmt, machine as machineNow, median, printMachine, printTable, sleep, printDiskSync, writeJsonFile, messageOf, stackOf } from './lib/report.mjs';

const { values: args } = parseArgs({
  options: {
    tasks: { type: 'string', default: '20000' },
    only: { type: 'string' },
    sync: { type: 'string', default: 'full' },
    store: { type: 'string', default: 'sqlite' },
    concurrency: { type: 'string' },
    'cpu-prof': { type: 'string' },
    rounds: { type: 'string', default: '1' },
    instances: { type: 'string', default: '1' },
    baseline: { type: 'string' },
    control: { type: 'boolean', default: false },
    downstream: { type: 'string', default: 'flaky' },
    protection: { type: 'string' },
    'redis-aof': { type: 'string' },
    json: { type: 'boolean', default: false },
    'json-file': { type: 'string' },
  },
});
const ROUNDS = Number(args.rounds);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error(`--rounds must be a positive integer, got ${args.rounds}`);
const N = Number(args.tasks);
if (!Number.isInteger(N) || N < 1) throw new Error(`--tasks must be a positive integer, got ${args.tasks}`);
const only = new Set((args.only ?? 'retryd,bullmq,pgboss,bare').split(',').map((s) => s.trim()));
for (const o of only) if (!['retryd', 'bullmq', 'pgboss', 'bare', 'bare-store', 'bare-store-thread'].includes(o)) throw new Error(`--only: unknown contender ${o}`);
if (!['full', 'normal', 'both'].includes(args.sync)) throw new Error(`--sync must be full, normal or both, got ${args.sync}`);
const syncs = args.sync === 'both' ? ['full', 'normal'] : [args.sync];
if (!['flaky', 'ok', 'grpc'].includes(args.downstream)) throw new Error(`--downstream must be flaky, ok or grpc, got ${args.downstream}`);
const OK = args.downstream === 'ok';
/** W1 over gRPC: retryd's contenders only, against the gRPC downstream. */
const GRPC = args.downstream === 'grpc';
if (GRPC) for (const o of only) if (o !== 'retryd') throw new Error(`--downstream grpc runs retryd alone (no peer or reference speaks gRPC): --only retryd, got ${o}`);
if (GRPC && (args['redis-aof'] !== undefined || args.baseline !== undefined)) throw new Error('--downstream grpc runs without --redis-aof and --baseline');
/** The protection modes each retryd configuration runs in, in this order within a round (the first is the headline). */
const PROTECTIONS = [...new Set((args.protection ?? (OK ? 'defaults,off' : 'defaults')).split(',').map((s) => s.trim()))];
for (const p of PROTECTIONS) if (!['defaults', 'off'].includes(p)) throw new Error(`--protection must list defaults, off or both, got ${p}`);
/** Defaults ÷ off, attempts/s: the least the defaults may cost when W1's target answers (flaky) or never fails (ok). */
const PROTECTION_AIM = OK ? 0.9 : 0.95;
/** Requests per task: 503, 503, 200 (flaky) or one 200 (ok). */
const PER_TASK = OK ? 1 : 3;
const concurrency = args.concurrency === undefined ? undefined : Number(args.concurrency);
// --instances 1,2,3: retryd with that many `retryd serve` processes on the one store, each count a contender.
const instanceCounts = args.instances.split(',').map(Number);
for (const n of instanceCounts) if (!Number.isInteger(n) || n < 1) throw new Error(`--instances must list positive integers, got ${args.instances}`);
// --cpu-prof <dir>: profile the retryd service process (node --cpu-prof) during the run.
const nodeArgs = args['cpu-prof'] === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', args['cpu-prof']];

const baseline = args.baseline === undefined ? undefined : resolve(args.baseline);
if (baseline !== undefined && !existsSync(baseline)) throw new Error(`--baseline: no such file ${baseline} (build it: cd <checkout> && npm run build)`);

// Contenders in groups: a retryd configuration and, with --baseline, the same configuration on the old build.
const groups = [];
// --store sqlite,postgres,redis runs retryd on each store, side by side (--sync applies to SQLite only).
const storeKinds = args.store.split(',').map((s) => s.trim());
// --redis-aof: the Redis contenders again, on a Redis of W1's own with AOF (see the header).
const AOF = args['redis-aof'];
if (AOF !== undefined) {
  if (!AOF_POLICIES.includes(AOF)) throw new Error(`--redis-aof must be one of ${AOF_POLICIES.join(', ')}, got ${AOF}`);
  const onRedis = storeKinds.includes('redis') && (only.has('retryd') || only.has('bare-store'));
  if (!onRedis && !only.has('bullmq')) throw new Error('--redis-aof runs the Redis contenders on a Redis with AOF: it needs --store redis (with retryd or bare-store in --only) or bullmq in --only');
}
const aofServer = AOF === undefined ? undefined : await startAofRedis({ appendfsync: AOF });
if (aofServer !== undefined) console.log(`Redis with AOF for W1: ${aofServer.url} (pid ${aofServer.pid}, ${aofServer.durability.label}, files in ${aofServer.dir})`);
/** The CPU of W1's own AOF server alone; and of the machine's other redis-server processes, for the other Redis rows. */
const aofCpuMs = aofServer === undefined ? undefined : () => cpuMsOfPid(aofServer.pid);
const redisCpuMs = aofServer === undefined ? undefined : () => cpuMsOfCommand('redis-server', { exceptPids: [aofServer.pid] });
if (only.has('retryd')) {
  for (const storeKind of storeKinds) {
    for (const sync of storeKind === 'sqlite' ? syncs : ['full']) {
      for (const instances of instanceCounts) {
        const common = { storeKind, sync, concurrency, nodeArgs, instances, grpc: GRPC, serverCpuMs: storeKind === 'redis' ? redisCpuMs : undefined };
        const group = PROTECTIONS.map((protection) => retrydContender({ ...common, protection }));
        // The build before and the control run as the headline configuration does (the first mode listed).
        if (baseline !== undefined) group.push(retrydContender({ ...common, cli: baseline, role: 'before', protection: PROTECTIONS[0] }));
        if (args.control) group.push(retrydContender({ ...common, role: 'control', protection: PROTECTIONS[0] }));
        groups.push(group);
      }
    }
  }
  if (aofServer !== undefined && storeKinds.includes('redis')) {
    for (const instances of instanceCounts) {
      const common = { storeKind: aofServer.url, concurrency, nodeArgs, instances, aof: AOF, serverCpuMs: aofCpuMs };
      groups.push(PROTECTIONS.map((protection) => retrydContender({ ...common, protection })));
    }
  }
}
if (only.has('bullmq')) groups.push([bullmqContender({ serverCpuMs: redisCpuMs })]);
if (only.has('bullmq') && aofServer !== undefined) groups.push([bullmqContender({ url: aofServer.url, aof: AOF, serverCpuMs: aofCpuMs })]);
if (only.has('pgboss')) groups.push([pgbossContender()]);
// The references run in processes of their own (see in-child.mjs).
if (only.has('bare')) groups.push([inChild(() => bareContender())]);
// bare-store: on each store of --store, the bare loop with that store's work (the ceiling of a durable dispatcher on it).
if (only.has('bare-store')) {
  for (const storeKind of storeKinds) groups.push([inChild(() => bareStoreContender({ storeKind, serverCpuMs: storeKind === 'redis' ? redisCpuMs : undefined }))]);
  if (aofServer !== undefined && storeKinds.includes('redis')) {
    groups.push([inChild((options) => bareStoreContender({ storeKind: 'redis', ...options, serverCpuMs: aofCpuMs }), { url: aofServer.url, aof: AOF })]);
  }
}
if (only.has('bare-store-thread')) groups.push([inChild(() => bareStoreContender({ threaded: true }))]);
const contenders = groups.flat();

const machine = printMachine('machine', { baseline });
machine.diskSync = await printDiskSync();
const protectionText = PROTECTIONS.map((p) => (p === 'defaults' ? 'with its default protections' : 'with --protection off')).join(' and ');
console.log(
  OK
    ? `W1, --downstream ok: ${fmt(N)} tasks, 200 at once, expecting ${fmt(N)} attempts per contender; retryd ${protectionText}\n`
    : GRPC
      ? `W1 over gRPC: ${fmt(N)} tasks, UNAVAILABLE ×2 then OK per key, expecting ${fmt(3 * N)} attempts per contender; retryd ${protectionText}\n`
      : `W1: ${fmt(N)} tasks, 503 ×2 then 200 per key, expecting ${fmt(3 * N)} attempts per contender; retryd ${protectionText}\n`,
);

const runId = Date.now().toString(36);
const body = (i) => JSON.stringify({ orderId: i, amountCents: 1250, currency: 'EUR', note: 'w1' });

const ds = await startDownstream({ grpc: GRPC });
/** One W1 run of one contender. */
async function runOnce(c) {
  const tasks = Array.from({ length: N }, (_, i) => ({ key: `w1-${runId}-${c.id}-${i}`, body: body(i) }));
  await ds.reset(OK ? { mode: 'ok', expect: N } : { mode: 'flaky', failFirst: 2, expect: N });
  const r = { id: c.id };
  try {
    await c.setup();
    r.name = c.name;
    r.durability = c.durability;
    if (c.build) r.build = c.build;
    const enq = await c.enqueue(tasks, ds.url);
    // The enqueue may say more about the contender (what it did about its target's protections).
    r.name = c.name;
    r.enqueuePerSec = N / (enq.ms / 1000);
    r.enqueueNote = enq.note;
    await c.startWorkers(ds.url);
    const cpu0 = await c.cpuMs();
    const storeCpu0 = await c.storeCpuMs?.();
    const reached = await ds.waitReached({ stallMs: 30_000 });
    r.attempts = reached.requestsAtLastFirstSuccess;
    r.windowMs = reached.lastFirstSuccessAt - reached.firstRequestAt;
    r.attemptsPerSec = r.attempts / (r.windowMs / 1000);
    // The CPU is read once every task is recorded, before the contender checks what it recorded: that check (retryd's
    // reads every task back through its API) is the benchmark's, not the workload's.
    const readCpu = async () => ({ cpu: await c.cpuMs(), store: await c.storeCpuMs?.() });
    /** @type {Promise<{ cpu: number, store: number | undefined }> | undefined} */
    let settledCpu;
    const recorded = await c.waitRecorded(N, () => (settledCpu = readCpu()));
    const { cpu: cpu1, store: storeCpu1 } = await (settledCpu ?? readCpu());
    r.recordedMs = recorded.at - reached.firstRequestAt; // both epoch ms
    r.recorded = recorded;
    r.cpuMsPerAttempt = (cpu1 - cpu0) / r.attempts;
    if (storeCpu0 !== undefined) r.storeCpuMsPerAttempt = (storeCpu1 - storeCpu0) / r.attempts;
    // Late duplicates would arrive after the last success: give them a moment.
    await sleep(1000);
    const s = await ds.stats();
    r.requests = s.requests;
    r.firstSuccesses = s.firstSuccesses;
    r.duplicates = s.duplicates;
    r.pass = s.firstSuccesses === N && s.duplicates === 0 && s.requests === PER_TASK * N && recorded.ok;
  } catch (error) {
    r.error = messageOf(error);
    r.pass = false;
    console.error(`${c.name ?? c.id}: ${stackOf(error)}`);
    if (c.diagnose) console.error(`${c.name ?? c.id} state: ${await c.diagnose().catch((e) => e.message)}`);
  } finally {
    const t = await c.teardown().catch((e) => ({ error: e.message }));
    if (t.storeBytes !== undefined) r.storeBytes = t.storeBytes;
  }
  console.log(
    `${r.name ?? r.id}${r.build ? ` [build ${r.build}]` : ''}: enqueue ${fmt(r.enqueuePerSec)} tasks/s${r.enqueueNote ? ` (${r.enqueueNote})` : ''}, ` +
      `${fmt(r.attempts)} attempts in ${fmt(r.windowMs)} ms = ${fmt(r.attemptsPerSec)} attempts/s, ` +
      `all recorded after ${fmt(r.recordedMs)} ms (${r.recorded?.detail ?? '-'}), ` +
      `downstream ${fmt(r.requests)} requests / ${fmt(r.firstSuccesses)} first successes / ${fmt(r.duplicates)} duplicates → ${r.pass ? 'PASS' : 'FAIL'}` +
      `${r.error ? ` (${r.error})` : ''}`,
  );
  return r;
}

/** @type {Map<string, any>} The figures (a list) of each contender's rounds, by id. */
const runs = new Map(contenders.map((c) => [c.id, []]));
try {
  for (let round = 0; round < ROUNDS; round++) {
    if (ROUNDS > 1) console.log(`— round ${round + 1} of ${ROUNDS} (load average ${machineNow().load})`);
    // Rotate the order every round, so drift on a shared machine hits every contender alike; a configuration's
    // builds (after, before, control) run back to back, each taking every place in turn (with two: alternating).
    const order = groups.flatMap((_, i) => {
      const group = groups[(i + round) % groups.length];
      const shift = round % group.length;
      return [...group.slice(shift), ...group.slice(0, shift)];
    });
    for (const c of order) runs.get(c.id).push(await runOnce(c));
  }
} finally {
  await ds.close();
  await aofServer?.stop();
}

/** @typedef {typeof results[number]} Row A contender's figures: its median round, and every round's. */
// Per contender: the median round by attempts/s, with the spread of the rounds.
const results = contenders.map((c) => {
  const rs = runs.get(c.id);
  const first = rs.find((r) => r.name !== undefined) ?? rs[0];
  const ok = rs.filter((r) => r.attemptsPerSec !== undefined);
  const pick = (k) => median(ok.map((r) => r[k]));
  return {
    id: c.id,
    role: c.role,
    pairId: c.pairId,
    protectionPairId: c.protectionPairId,
    protection: c.protection,
    name: first.name,
    durability: first.durability,
    rounds: rs.length,
    attemptsPerSec: pick('attemptsPerSec'),
    attemptsPerSecMin: Math.min(...ok.map((r) => r.attemptsPerSec)),
    attemptsPerSecMax: Math.max(...ok.map((r) => r.attemptsPerSec)),
    enqueuePerSec: pick('enqueuePerSec'),
    attempts: pick('attempts'),
    windowMs: pick('windowMs'),
    recordedMs: pick('recordedMs'),
    cpuMsPerAttempt: pick('cpuMsPerAttempt'),
    storeCpuMsPerAttempt: ok.some((r) => r.storeCpuMsPerAttempt !== undefined) ? pick('storeCpuMsPerAttempt') : undefined,
    firstSuccesses: Math.min(...rs.map((r) => r.firstSuccesses ?? 0)),
    duplicates: Math.max(...rs.map((r) => r.duplicates ?? 0)),
    pass: rs.every((r) => r.pass),
    runs: rs,
  };
});

console.log('');
printMachine('load after the run');
console.log('');
if (ROUNDS > 1) console.log(`median of ${ROUNDS} rounds (order rotated every round); attempts/s range in brackets\n`);
printTable(
  ['contender', 'durability', 'enqueue (tasks/s)', 'attempts/s', 'attempts', 'dispatch → last success (ms)', 'all recorded (ms)', 'CPU ms / attempt', 'store server CPU ms / attempt', 'first successes', 'duplicates', 'check'],
  results.map((r) => [
    r.name ?? r.id,
    r.durability ?? '',
    fmt(r.enqueuePerSec),
    ROUNDS > 1 ? `${fmt(r.attemptsPerSec)} [${fmt(r.attemptsPerSecMin)}–${fmt(r.attemptsPerSecMax)}]` : fmt(r.attemptsPerSec),
    fmt(r.attempts),
    fmt(r.windowMs),
    fmt(r.recordedMs),
    fmt(r.cpuMsPerAttempt, 3),
    r.storeCpuMsPerAttempt === undefined ? '' : fmt(r.storeCpuMsPerAttempt, 3),
    fmt(r.firstSuccesses),
    fmt(r.duplicates),
    r.pass ? 'PASS' : 'FAIL',
  ]),
);

const peers = results.filter((r) => !r.id.startsWith('retryd') && r.id !== 'bare');
// The bare loop is a ceiling, not a peer: every contender's share of it, peers included.
const bare = results.find((r) => r.id === 'bare');
if (bare !== undefined && bare.attemptsPerSec > 0) {
  console.log('');
  printTable(
    ['share of the machine\'s ceiling (attempts/s ÷ bare undici loop)', 'share'],
    results.filter((r) => r !== bare).map((r) => [r.name ?? r.id, `${Math.round((100 * r.attemptsPerSec) / bare.attemptsPerSec)} %`]),
  );
}
const ours = results.filter((r) => r.id.startsWith('retryd'));
if (ours.length > 0 && peers.length > 0) {
  console.log('');
  printTable(
    ['ratio', ...peers.map((p) => `÷ ${p.name ?? p.id}: attempts/s`), ...peers.map((p) => `÷ ${p.name ?? p.id}: enqueue`)],
    ours.map((o) => [
      o.name ?? o.id,
      ...peers.map((p) => `${(o.attemptsPerSec / p.attemptsPerSec).toFixed(2)}×`),
      ...peers.map((p) => `${(o.enqueuePerSec / p.enqueuePerSec).toFixed(2)}×`),
    ]),
  );
  // The aims of the issues: SQLite ≥ 2× BullMQ (issue 3); PostgreSQL ≥ 3× pg-boss and Redis ≥ 1.5× BullMQ (issue 4).
  const aims = { sqlite: ['bullmq', 2], postgres: ['pgboss', 3], redis: ['bullmq', 1.5] };
  for (const o of OK ? [] : ours) {
    const [peerId, factor] = aims[o.id.replace(/^retryd-/, '').replace(/-.*$/, '')] ?? [];
    // On W1's own AOF server, retryd is judged against the peer on that server.
    const peer = peers.find((p) => p.id === (/^retryd-redis-aof/.test(o.id) ? `${peerId}-aof` : peerId));
    if (peer === undefined) continue;
    const ratio = o.attemptsPerSec / peer.attemptsPerSec;
    // Round by round: each round runs every contender once, so its ratio compares runs made minutes apart.
    const perRound = o.runs.map((r, i) => r.attemptsPerSec / peer.runs[i]?.attemptsPerSec).filter(Number.isFinite);
    const rounds = perRound.length > 1 ? `; per round ${perRound.map((x) => `${x.toFixed(2)}×`).join(', ')}` : '';
    console.log(`aim W1 ≥ ${factor}× ${peer.name} — ${o.name}: ${ratio.toFixed(2)}× (medians)${rounds} → ${ratio >= factor ? 'MET' : 'MISSED'}`);
  }
}
// After ÷ before (and after ÷ control) of the same configuration, from the same run.
const pairs = /** @type {[Row, Row][]} */ (
  results
    .filter((r) => r.role === 'before' || r.role === 'control')
    .map((other) => [results.find((r) => r.role === 'after' && r.pairId === other.pairId), other])
    .filter(([after]) => after !== undefined)
);
if (pairs.length > 0) {
  console.log('');
  const beforeNote = baseline === undefined ? '' : `; before = --baseline ${baseline} (${machine.baselineBuild.hash})`;
  console.log(`after = ${process.env.RETRYD_CLI ?? 'packages/server/dist'} (${machine.build.hash})${beforeNote}${args.control ? '; control = the after build again' : ''}`);
  printTable(
    ['after ÷ before (or control)', 'attempts/s after', 'attempts/s other', 'attempts/s ratio', 'per round', 'enqueue ratio', 'CPU ms / attempt ratio', 'store server CPU ratio', 'check'],
    pairs.map(([a, b]) => {
      // Round by round: the two builds ran back to back in each round.
      const perRound = a.runs.map((r, i) => r.attemptsPerSec / b.runs[i]?.attemptsPerSec).filter(Number.isFinite);
      return [
        `${(a.name ?? a.id).replace(/^retryd \((.*)\)$/, '$1')}${b.role === 'control' ? ' — A/A: ÷ control' : ''}`,
        fmt(a.attemptsPerSec),
        fmt(b.attemptsPerSec),
        `${(a.attemptsPerSec / b.attemptsPerSec).toFixed(2)}×`,
        perRound.map((x) => `${x.toFixed(2)}×`).join(', '),
        `${(a.enqueuePerSec / b.enqueuePerSec).toFixed(2)}×`,
        `${(a.cpuMsPerAttempt / b.cpuMsPerAttempt).toFixed(2)}×`,
        a.storeCpuMsPerAttempt === undefined || b.storeCpuMsPerAttempt === undefined ? '' : `${(a.storeCpuMsPerAttempt / b.storeCpuMsPerAttempt).toFixed(2)}×`,
        `${a.pass ? 'PASS' : 'FAIL'} / ${b.pass ? 'PASS' : 'FAIL'}`,
      ];
    }),
  );
}
// The default protections against none (--protection defaults,off): the same configuration, the same build, one run.
const protectionPairs = /** @type {[Row, Row][]} */ (
  results
    .filter((r) => r.protection === 'off' && r.protectionPairId !== undefined)
    .map((off) => [results.find((r) => r.protection === 'defaults' && r.protectionPairId === off.protectionPairId), off])
    .filter(([defaults]) => defaults !== undefined)
);
if (protectionPairs.length > 0) {
  console.log('');
  printTable(
    ['default protections ÷ off', 'attempts/s defaults', 'attempts/s off', 'attempts/s ratio (median of the rounds)', 'per round', 'of the medians', 'CPU ms / attempt ratio', `aim ≥ ${PROTECTION_AIM.toFixed(2)}×`, 'check'],
    protectionPairs.map(([defaults, off]) => {
      // Round by round: the two ran back to back in each round, so the median of those ratios is the one judged.
      const perRound = defaults.runs.map((r, i) => r.attemptsPerSec / off.runs[i]?.attemptsPerSec).filter(Number.isFinite);
      const ratio = perRound.length === 0 ? NaN : median(perRound);
      return [
        defaults.protectionPairId,
        fmt(defaults.attemptsPerSec),
        fmt(off.attemptsPerSec),
        `${ratio.toFixed(2)}×`,
        perRound.map((x) => `${x.toFixed(2)}×`).join(', '),
        `${(defaults.attemptsPerSec / off.attemptsPerSec).toFixed(2)}×`,
        `${(defaults.cpuMsPerAttempt / off.cpuMsPerAttempt).toFixed(2)}×`,
        ratio >= PROTECTION_AIM ? 'MET' : 'MISSED',
        `${defaults.pass ? 'PASS' : 'FAIL'} / ${off.pass ? 'PASS' : 'FAIL'}`,
      ];
    }),
  );
}
console.log(`\nCPU ms / attempt: retryd = the service process (its store's server apart: store server CPU); BullMQ = bench process + redis-server; pg-boss = bench process + every postgres process (other users of those servers count too).`);
if (aofServer !== undefined) console.log(`The rows on W1's own AOF server (pid ${aofServer.pid}) count that process's CPU alone; the other Redis rows every other redis-server's.`);
// The AOF server as it ran (its directory is gone by now).
const redisAof = aofServer === undefined ? undefined : { appendfsync: AOF, url: aofServer.url, pid: aofServer.pid, dir: aofServer.dir, durability: aofServer.durability.label };
const output = { machine, tasks: N, rounds: ROUNDS, downstream: args.downstream, protections: PROTECTIONS, protectionAim: PROTECTION_AIM, ...(redisAof === undefined ? {} : { redisAof }), results };
if (args.json) console.log(JSON.stringify(output, null, 2));
writeJsonFile(args['json-file'], output);
// A peer's client may keep a handle open (pg-boss timers, undici sockets): the figures are printed, so exit.
process.exit(results.every((r) => r.pass) ? 0 : 1);
