// The CPU the benchmarks' own downstream spends per request, the share of this machine's two cores that W1's target
// takes beside the service and the store's server. The sizing model (docs/scaling.md) needs it to reproduce the W1
// figures measured here: in a deployment the target runs elsewhere, but on this machine it competes for the same cores.
//
//   npm run bench -- probe downstream-cost [--tasks 20000] [--rounds 3] [--json-file FILE]
//
// Each round starts nothing new: one downstream (./downstream.mjs, flaky mode, 503 twice then 200 per key, as in W1)
// serves --tasks keys to 200 loops in this process (the bare undici loop of W1's reference). Figures: the downstream
// process's CPU (utime + stime from /proc, so its GC and libuv threads count) per request, and this process's CPU per
// request (the HTTP client's side of the same exchange); medians over the rounds.
//
// --json-file FILE writes { machine, tasks, rounds, downstreamCpuMsPerRequest, clientCpuMsPerRequest,
// requestsPerSec, perRound: [...] }.

import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { startDownstream } from './lib/downstream-client.mjs';
import { ownCpuMs } from './lib/contenders/call-downstream.mjs';
import { fmt, printMachine } from './lib/report.mjs';
import { cpuMsOf } from './lib/retryd-service.mjs';

const { values: args } = parseArgs({
  options: {
    tasks: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '3' },
    'json-file': { type: 'string' },
  },
});
const TASKS = Number(args.tasks);
const ROUNDS = Number(args.rounds);
const LOOPS = 200;
const FAIL_FIRST = 2;

const machine = printMachine('machine', { build: false });
const ds = await startDownstream();
const agent = new Agent({ connections: LOOPS });
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** One round: every key POSTed until its 200, 200 at once; the CPU of both processes over the round. */
async function round(index) {
  await ds.reset({ mode: 'flaky', failFirst: FAIL_FIRST, expect: TASKS });
  const target = `${ds.url}/w1`;
  let next = 0;
  const loop = async () => {
    while (next < TASKS) {
      const key = `cost-${index}-${next++}`;
      for (;;) {
        const res = await request(target, {
          method: 'POST',
          dispatcher: agent,
          headers: { 'content-type': 'application/json', 'idempotency-key': key },
          body: JSON.stringify({ orderId: next, amountCents: 1250, currency: 'EUR', note: 'w1' }),
        });
        await res.body.text();
        if (res.statusCode >= 200 && res.statusCode < 300) break;
      }
    }
  };
  const ds0 = await cpuMsOf(ds.pid);
  const own0 = ownCpuMs();
  const started = performance.now();
  await Promise.all(Array.from({ length: LOOPS }, loop));
  const ms = performance.now() - started;
  const ds1 = await cpuMsOf(ds.pid);
  const own1 = ownCpuMs();
  const { requests } = await ds.stats();
  const r = {
    requests,
    requestsPerSec: requests / (ms / 1000),
    downstreamCpuMsPerRequest: (ds1 - ds0) / requests,
    clientCpuMsPerRequest: (own1 - own0) / requests,
  };
  console.log(
    `round ${index + 1}: ${fmt(requests)} requests, ${fmt(r.requestsPerSec)}/s, downstream ${r.downstreamCpuMsPerRequest.toFixed(4)} CPU ms/request, ` +
      `client ${r.clientCpuMsPerRequest.toFixed(4)}`,
  );
  return r;
}

const perRound = [];
try {
  for (let i = 0; i < ROUNDS; i++) perRound.push(await round(i));
} finally {
  await agent.close();
  await ds.close();
}
const result = {
  machine,
  tasks: TASKS,
  rounds: ROUNDS,
  downstreamCpuMsPerRequest: median(perRound.map((r) => r.downstreamCpuMsPerRequest)),
  clientCpuMsPerRequest: median(perRound.map((r) => r.clientCpuMsPerRequest)),
  requestsPerSec: median(perRound.map((r) => r.requestsPerSec)),
  perRound,
};
console.log(
  `\nmedian of ${ROUNDS}: downstream ${result.downstreamCpuMsPerRequest.toFixed(4)} CPU ms/request, client ${result.clientCpuMsPerRequest.toFixed(4)}, ` +
    `${fmt(result.requestsPerSec)} requests/s`,
);
if (args['json-file'] !== undefined) writeFileSync(args['json-file'], `${JSON.stringify(result, null, 2)}\n`);
