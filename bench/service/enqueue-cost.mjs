// The service's CPU per enqueued task, for builds side by side: what the API's enqueue path costs (parsing, checks,
// the idempotency fingerprint, the secrets step, the insert), without dispatch competing for the CPU.
//
//   node bench/service/enqueue-cost.mjs [--store sqlite|postgres|redis] [--tasks 40000] [--rounds 3]
//        [--baseline PATH/dist/cli/main.js] [--cpu-prof DIR] [--full] [--node-flags "--max-semi-space-size=64"]
//
// Each run starts `retryd serve --role api` (no workers) on a fresh store (SQLite: a new file, synchronous=FULL;
// PostgreSQL, Redis: a schema or key prefix of their own, emptied before and after) and sends --tasks
// tasks due in an hour through POST /retry-tasks/batch, 1,000 a request, 4 requests in flight, each task with its own
// idempotency key, two headers and a small JSON body, as W1's, with `Prefer: return=minimal` (ids back, as a caller
// loading a backlog asks; --full: whole tasks back, as before that preference existed). Figures: tasks/s, and the service's CPU time
// (utime + stime from /proc) per task, which moves less than the rate on a shared machine. With --baseline the
// builds alternate run by run, the order rotated every round; the figures are medians over the rounds.
// With --cpu-prof, each service writes a V8 CPU profile into DIR (read it with cpu-profile-top.mjs). --node-flags
// are given to the service's node (both builds), e.g. `--max-semi-space-size=64` (a larger young generation).
// The build is packages/server/dist or RETRYD_CLI. Build it first: npm run build

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { CLI } from './lib/retryd-service.mjs';
import { retrydStore } from './lib/contenders/retryd.mjs';
import { fmt, printMachine, printTable } from './lib/report.mjs';

const { values: args } = parseArgs({
  options: {
    tasks: { type: 'string', default: '40000' },
    rounds: { type: 'string', default: '3' },
    baseline: { type: 'string' },
    'cpu-prof': { type: 'string' },
    full: { type: 'boolean', default: false },
    store: { type: 'string', default: 'sqlite' },
    'node-flags': { type: 'string', default: '' },
  },
});
const TASKS = Number(args.tasks);
const ROUNDS = Number(args.rounds);
const PER_REQUEST = 1000;
const PREFER = { 'content-type': 'application/json', ...(args.full ? {} : { prefer: 'return=minimal' }) };
const IN_FLIGHT = 4;
const builds = [{ label: 'retryd', cli: CLI }];
if (args.baseline !== undefined) builds.push({ label: 'retryd (before)', cli: resolve(args.baseline) });
printMachine('machine', { baseline: args.baseline });
console.log(`store: ${args.store}; service node flags: ${args['node-flags'] || 'none'}; answers: ${args.full ? 'whole tasks' : 'Prefer: return=minimal'}`);

/** CPU ms the process has used so far (user + system). */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function run(cli) {
  const store = await retrydStore(args.store, { name: 'enqueue-cost' });
  const profile = args['cpu-prof'] === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', resolve(args['cpu-prof'])];
  const nodeFlags = args['node-flags'].split(' ').filter((flag) => flag !== '');
  const child = spawn(process.execPath, [...nodeFlags, ...profile, cli, 'serve', '--port', '0', '--role', 'api', '--store', store.url, '--allow-targets', '127.0.0.1/32'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const url = await new Promise((done, fail) => {
      let out = '';
      child.on('exit', (code) => fail(new Error(`retryd exited with ${code}: ${out}`)));
      child.stdout.on('data', (chunk) => {
        out += chunk;
        const found = out.match(/"url":"([^"]+)"/);
        if (found !== null) done(found[1]);
      });
    });
    const policy = { maxAttempts: 5, backoffType: 'EXPONENTIAL', initialDelayMs: 1, multiplier: 2, maxDelayMs: 10, jitterType: 'FULL' };
    const notBefore = Date.now() + 3_600_000;
    let next = 0;
    const send = async () => {
      while (next < TASKS) {
        const first = next;
        next += PER_REQUEST;
        const tasks = Array.from({ length: Math.min(PER_REQUEST, TASKS - first) }, (_, i) => ({
          // Never called (due in an hour); an address, so that no name is resolved at creation.
          targetUrl: `http://127.0.0.1:9/hooks/${first + i}`,
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-request': `r${first + i}` },
          body: { order: first + i, amount: 1299, currency: 'EUR' },
          idempotencyKey: `enqueue-cost-${first + i}`,
          policy,
          notBefore,
        }));
        const res = await fetch(`${url}/retry-tasks/batch`, { method: 'POST', headers: PREFER, body: JSON.stringify({ tasks }) });
        if (res.status >= 300) throw new Error(`batch answered ${res.status}: ${await res.text()}`);
        await res.arrayBuffer();
      }
    };
    const cpuBefore = cpuMs(child.pid);
    const started = performance.now();
    await Promise.all(Array.from({ length: IN_FLIGHT }, send));
    const seconds = (performance.now() - started) / 1000;
    return { perSecond: TASKS / seconds, cpuUsPerTask: ((cpuMs(child.pid) - cpuBefore) * 1000) / TASKS };
  } finally {
    child.removeAllListeners('exit');
    child.kill('SIGTERM');
    await new Promise((done) => (child.exitCode === null ? child.on('exit', done) : done()));
    await store.cleanup();
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const results = new Map(builds.map((b) => [b.label, []]));
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? builds : [...builds].reverse();
  for (const build of order) {
    const result = await run(build.cli);
    results.get(build.label).push(result);
    console.log(`${build.label} round ${round + 1}: ${fmt(result.perSecond)} tasks/s, ${result.cpuUsPerTask.toFixed(1)} µs CPU per task`);
  }
}
console.log('');
const rows = builds.map((b) => {
  const r = results.get(b.label);
  return [b.label, fmt(median(r.map((x) => x.perSecond))), median(r.map((x) => x.cpuUsPerTask)).toFixed(1)];
});
printTable(['build', 'tasks/s (median)', 'µs CPU per task (median)'], rows);
if (builds.length === 2) {
  const [after, before] = builds.map((b) => median(results.get(b.label).map((x) => x.cpuUsPerTask)));
  console.log(`\nCPU per task after ÷ before: ${(after / before).toFixed(2)}×`);
}
