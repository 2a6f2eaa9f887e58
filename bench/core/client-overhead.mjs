#!/usr/bin/env node
// Overhead of @retryd/client on a first-try success, side by side in one run:
//   retryingFetch (createRetryingFetch) next to plain fetch, and axios with attachRetry next to plain axios,
// against one keep-alive node:http server on loopback that answers 200 at once.
//
//   npm run bench:client                                # 150 rounds of 200 calls per case (about 2 minutes)
//   npm run bench:client -- --rounds 3 --calls 50       # a smoke run
//   npm run bench:client -- --processes 6 --rounds 60   # six processes, the median of their ratios (about 5 minutes)
//   npm run bench:client -- --json                      # machine-readable results
//
// Every round runs each pair's two cases back to back (which goes first alternates), so drift on a shared machine
// hits both alike; many short rounds (200 calls, about 50 ms a case) so that a collection of the heap or a burst of
// other work spoils a few rounds, which the median leaves out, rather than every long one; a ratio is the median of
// the rounds' own ratios, and the figures of a case are its median round, in µs per call (sequential calls, each
// reading the whole response): wall time, and the process's CPU time (user + system, the server's share included,
// the same for every case), which other processes on a shared machine disturb far less than the wall time.
// Pairs: GET with no body; POST with a small JSON body, where plain fetch / axios send a fixed Idempotency-Key of 32
// characters and the retrying ones derive theirs (SHA-256 of method, URL and body, 32 hexadecimal characters), which
// is part of what they cost: the same request on the wire, byte for byte as long.
// The "stub" pairs make the same calls over a transport that answers at once without a socket (a `fetch` option
// returning a Response, an axios adapter returning a response): the difference is what the library itself costs.
// The "A/A" pair is a control: the plain fetch POST against a second copy of itself. Nothing differs but the call
// site, so its ratio shows how far a ratio moves on this machine when there is no difference to find.
import os from 'node:os';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRetryingFetch } from '@retryd/client';
import { attachRetry } from '@retryd/client/axios';
import axios from 'axios';

const arg = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const JSON_OUTPUT = process.argv.includes('--json');
const ROUNDS = arg('rounds', 150);
const CALLS = arg('calls', 200);
const PROCESSES = arg('processes', 1);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

// --processes N: the whole run N times, each in a process of its own, one after another; each pair's ratio is then
// the median of the processes' ratios. A ratio moves more from one process to the next (how V8 compiled that process)
// than within one, so a verdict on a few percent needs several.
if (PROCESSES > 1) {
  const { execFileSync } = await import('node:child_process');
  const runs = [];
  for (let i = 0; i < PROCESSES; i++) {
    const out = execFileSync(process.execPath, [import.meta.filename, '--json', '--rounds', String(ROUNDS), '--calls', String(CALLS)], { encoding: 'utf8' });
    runs.push(JSON.parse(out));
    if (!JSON_OUTPUT) console.error(`process ${i + 1} of ${PROCESSES} done`);
  }
  const pairs = runs[0].results.filter((r) => !r.plain).map((r) => {
    const of = (key) => runs.map((run) => run.results.find((x) => x.pair === r.pair && x.name === r.name)[key]);
    return { pair: r.pair, name: r.name, wallRatios: of('wallRatio'), cpuRatios: of('cpuRatio') };
  });
  if (JSON_OUTPUT) {
    console.log(JSON.stringify({ processes: PROCESSES, rounds: ROUNDS, calls: CALLS, machine: runs[0].machine, pairs }, null, 2));
  } else {
    const pct = (x) => `${x >= 1 ? '+' : ''}${((x - 1) * 100).toFixed(1)}%`;
    console.log(`client overhead on a first-try success: ${PROCESSES} processes × ${ROUNDS} rounds × ${CALLS} calls per case; per pair, the median of the processes' ratios and their range (${runs[0].machine})\n`);
    console.log('| pair | case | wall ÷ plain, median | range | CPU ÷ plain, median | range |');
    console.log('| --- | --- | ---: | --- | ---: | --- |');
    for (const p of pairs) {
      const range = (xs) => `${pct(Math.min(...xs))} to ${pct(Math.max(...xs))}`;
      console.log(`| ${p.pair} | ${p.name} | ${pct(median(p.wallRatios))} | ${range(p.wallRatios)} | ${pct(median(p.cpuRatios))} | ${range(p.cpuRatios)} |`);
    }
  }
  process.exit(0);
}

let served = 0;
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    served++;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
const base = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}`;

const retryingFetch = createRetryingFetch();
const plainAxios = axios.create({ baseURL: base });
const retryingAxios = axios.create({ baseURL: base });
attachRetry(retryingAxios);
/** @type {typeof fetch} A fetch that answers at once, with no network: the library's own cost alone. */
const stubFetch = async () => new Response('{"ok":true}', { status: 200 });
const stubRetryingFetch = createRetryingFetch({ fetch: stubFetch });
const stubAdapter = async (config) => ({ data: '{"ok":true}', status: 200, statusText: 'OK', headers: {}, config, request: {} });
const stubAxios = axios.create({ baseURL: base, adapter: stubAdapter });
const stubRetryingAxios = axios.create({ baseURL: base, adapter: stubAdapter });
attachRetry(stubRetryingAxios);
const body = JSON.stringify({ sku: 'A-1', qty: 2, note: 'a small JSON body' });
const jsonHeaders = { 'content-type': 'application/json' };
// As long as a derived key (deriveIdempotencyKey: 32 hexadecimal characters), so both requests are the same size.
const FIXED_KEY = '0123456789abcdef0123456789abcdef';

const cases = [
  { pair: 'fetch GET', name: 'fetch', plain: true, call: async () => (await fetch(`${base}/get`)).text() },
  { pair: 'fetch GET', name: 'retryingFetch', call: async () => (await retryingFetch(`${base}/get`)).text() },
  {
    pair: 'fetch POST',
    name: 'fetch (fixed key)',
    plain: true,
    call: async () => (await fetch(`${base}/post`, { method: 'POST', headers: { ...jsonHeaders, 'idempotency-key': FIXED_KEY }, body })).text(),
  },
  { pair: 'fetch POST', name: 'retryingFetch (derived key)', call: async () => (await retryingFetch(`${base}/post`, { method: 'POST', headers: jsonHeaders, body })).text() },
  { pair: 'axios GET', name: 'axios', plain: true, call: () => plainAxios.get('/get') },
  { pair: 'axios GET', name: 'axios + attachRetry', call: () => retryingAxios.get('/get') },
  { pair: 'axios POST', name: 'axios (fixed key)', plain: true, call: () => plainAxios.post('/post', body, { headers: { ...jsonHeaders, 'idempotency-key': FIXED_KEY } }) },
  { pair: 'axios POST', name: 'axios + attachRetry (derived key)', call: () => retryingAxios.post('/post', body, { headers: jsonHeaders }) },
  { pair: 'A/A fetch POST', name: 'fetch (fixed key)', plain: true, call: async () => (await fetch(`${base}/post`, { method: 'POST', headers: { ...jsonHeaders, 'idempotency-key': FIXED_KEY }, body })).text() },
  { pair: 'A/A fetch POST', name: 'the same, a second copy', call: async () => (await fetch(`${base}/post`, { method: 'POST', headers: { ...jsonHeaders, 'idempotency-key': FIXED_KEY }, body })).text() },
  { pair: 'stub fetch POST', name: 'stub fetch (fixed key)', plain: true, stub: true, call: async () => (await stubFetch(`${base}/post`, { method: 'POST', headers: { ...jsonHeaders, 'idempotency-key': FIXED_KEY }, body })).text() },
  { pair: 'stub fetch POST', name: 'retryingFetch (derived key)', stub: true, call: async () => (await stubRetryingFetch(`${base}/post`, { method: 'POST', headers: jsonHeaders, body })).text() },
  { pair: 'stub axios POST', name: 'axios (fixed key)', plain: true, stub: true, call: () => stubAxios.post('/post', body, { headers: { ...jsonHeaders, 'idempotency-key': FIXED_KEY } }) },
  { pair: 'stub axios POST', name: 'axios + attachRetry (derived key)', stub: true, call: () => stubRetryingAxios.post('/post', body, { headers: jsonHeaders }) },
];

// The main thread's own time on a CPU and runnable but off it, in ns (Linux): the process's CPU time also counts V8's
// helper threads (the collector's, the compiler's), so only these tell whether the thread that runs the calls sat
// waiting, and whether for I/O or for a CPU that another process had.
const SCHEDSTAT = `/proc/self/task/${process.pid}/schedstat`;
const mainThread = () => {
  try {
    const [run, queued] = readFileSync(SCHEDSTAT, 'utf8').split(' ').map(Number);
    return { run, queued };
  } catch {
    return { run: Number.NaN, queued: Number.NaN };
  }
};

async function runCase(c, calls) {
  const before = served;
  const main0 = mainThread();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) await c.call();
  const wall = ((performance.now() - t0) * 1e3) / calls;
  const cpu = process.cpuUsage(cpu0);
  const main1 = mainThread();
  const main = (main1.run - main0.run) / 1e3 / calls;
  const queued = (main1.queued - main0.queued) / 1e3 / calls;
  if (served - before !== (c.stub ? 0 : calls)) throw new Error(`${c.name}: ${served - before} requests for ${calls} calls (a retry on a first-try success?)`);
  return { wall, cpu: (cpu.user + cpu.system) / calls, main, queued };
}
for (const c of cases) await runCase(c, 500); // warm-up: JIT, sockets
// Paired rounds: a pair's two cases run back to back (which goes first alternates by round), so a drift of the
// machine hits both alike, and each round gives its own ratio; a case's figures are its median round, a pair's
// ratios the median of its rounds' ratios. Pairs take turns in a rotated order.
const pairs = [...new Set(cases.map((c) => c.pair))];
/** @type {{ wall: number, cpu: number, main: number, queued: number }[][]} Each case's rounds. */
const rounds = cases.map(() => []);
/** @type {{ wall: number[], cpu: number[] }[]} Each case's ratios to its pair's plain side, round by round. */
const ratios = cases.map(() => ({ wall: [], cpu: [] }));
for (let round = 0; round < ROUNDS; round++) {
  for (let k = 0; k < pairs.length; k++) {
    const pair = pairs[(k + round) % pairs.length];
    const plain = cases.findIndex((c) => c.pair === pair && c.plain);
    const other = cases.findIndex((c) => c.pair === pair && !c.plain);
    const order = round % 2 === 0 ? [plain, other] : [other, plain];
    const got = {};
    for (const i of order) rounds[i].push((got[i] = await runCase(cases[i], CALLS)));
    ratios[other].wall.push(got[other].wall / got[plain].wall);
    ratios[other].cpu.push(got[other].cpu / got[plain].cpu);
  }
}
server.close();

const results = cases.map((c, i) => ({
  pair: c.pair,
  name: c.name,
  plain: c.plain === true,
  wallUs: median(rounds[i].map((r) => r.wall)),
  cpuUs: median(rounds[i].map((r) => r.cpu)),
  mainThreadUs: median(rounds[i].map((r) => r.main)),
  queuedUs: median(rounds[i].map((r) => r.queued)),
  idleUs: median(rounds[i].map((r) => r.wall - r.main - r.queued)),
  ...(c.plain ? {} : { wallRatio: median(ratios[i].wall), cpuRatio: median(ratios[i].cpu) }),
}));
const machine = `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, load ${os.loadavg()[0].toFixed(1)}`;
if (JSON_OUTPUT) {
  console.log(JSON.stringify({ rounds: ROUNDS, calls: CALLS, machine, results }, null, 2));
} else {
  console.log(`client overhead on a first-try success: ${ROUNDS} rounds × ${CALLS} sequential calls per case, median round, ratios the median of each round's (${machine})\n`);
  const ratio = (x) => (x === undefined ? '' : `${x.toFixed(3)} (${x >= 1 ? '+' : ''}${((x - 1) * 100).toFixed(1)}%)`);
  console.log('| pair | case | wall µs/call | ÷ plain | CPU µs/call | ÷ plain |');
  console.log('| --- | --- | ---: | ---: | ---: | ---: |');
  for (const r of results) {
    console.log(`| ${r.pair} | ${r.name} | ${r.wallUs.toFixed(1)} | ${ratio(r.wallRatio)} | ${r.cpuUs.toFixed(1)} | ${ratio(r.cpuRatio)} |`);
  }
  if (results.every((r) => Number.isFinite(r.mainThreadUs))) {
    console.log('\nThe main thread per call (µs, median round): on a CPU; runnable while another process had the CPU; idle (the rest of');
    console.log('the wall time: waiting for I/O or a timer). A wrapper that made its calls wait would show in the last.');
    for (const r of results.filter((x) => !x.pair.startsWith('stub'))) {
      console.log(`- ${r.pair}, ${r.name}: ${r.mainThreadUs.toFixed(1)} on a CPU, ${r.queuedUs.toFixed(1)} runnable, ${r.idleUs.toFixed(1)} idle`);
    }
  }
  console.log('\nWhat the library adds per call (CPU µs, median round): the stub pairs\' difference.');
  for (const r of results.filter((x) => x.pair.startsWith('stub') && !x.plain)) {
    // Every stub pair has its plain side.
    const peer = /** @type {typeof r} */ (results.find((p) => p.plain && p.pair === r.pair));
    console.log(`- ${r.pair}: ${(r.cpuUs - peer.cpuUs).toFixed(1)} µs`);
  }
}
