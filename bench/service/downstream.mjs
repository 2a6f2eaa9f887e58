// The downstream of the service benchmarks (../../../shared/WORKLOADS.md), run in its own process so that it
// never shares an event loop with the load generator, the service or a peer's workers.
//
//   flaky (W1): answers 503 to the first `failFirst` requests (default 2) carrying a given Idempotency-Key and
//               200 to the next; counts every request, every first success and every request after a success
//               (a duplicate).
//   ok (W2, W4, W5): answers 200 to everything and records, per Idempotency-Key, when its first request arrived;
//               `delayMs` (W5: 20) holds each answer that long, a slow but healthy target.
//   storm (W3): a target that goes down and comes back with a limited capacity. Every request fails (503, no
//               Retry-After) for `failForMs` (default 10,000) from the first request after the reset; then it serves
//               `capacityPerSecond` (default 500) requests per second — a token bucket of `capacityBurst` (default a
//               tenth of a second's worth) refilled at that rate, full at the recovery — and answers 429 with
//               `Retry-After: 1` to every request beyond that. Records every request's arrival and answer
//               (`timeline`).
//
// Times are epoch milliseconds with a fractional part (`performance.timeOrigin + performance.now()`), the same
// time base as retryd's system clock, so an arrival here can be compared with a task's `nextAttemptAt`.
//
// The parent drives it over IPC (see ./lib/downstream-client.mjs): { id, cmd, ...args } → { id, result };
// it also gets { event: 'reached', stats } once the configured number of first successes has been reached.

import { createServer } from 'node:http';

const epochNow = () => performance.timeOrigin + performance.now();

let mode = 'ok';
let failFirst = 2;
let expect = 0;
/** Requests per key. */
let requests = new Map();
/** First arrival per key (ok mode) or arrival of the first success (flaky mode), epoch ms. */
let firstSuccessAt = new Map();
let totalRequests = 0;
let duplicates = 0;
let noKey = 0;
let firstRequestAt = null;
let lastFirstSuccessAt = null;
let lastRequestAt = null;
/** Requests received up to and including the last first success: the attempts of the W1 window. */
let requestsAtLastFirstSuccess = 0;
let reached = false;
let delayMs = 0;
/** Storm mode (W3): the outage, the capacity after it, and every request's arrival and answer. */
let storm;
/** What a storm-mode request was answered: the outage's 503, a 429 over capacity, a first success, a duplicate. */
const ANSWER = { down: 0, throttled: 1, ok: 2, duplicate: 3 };
/** Waiters for a number of first successes among the keys with a prefix (W5): { prefix, expect, count, resolve }. */
let watches = [];

function reset(options = {}) {
  mode = options.mode ?? 'ok';
  delayMs = options.delayMs ?? 0;
  storm =
    mode === 'storm'
      ? {
          failForMs: options.failForMs ?? 10_000,
          capacityPerSecond: options.capacityPerSecond ?? 500,
          capacityBurst: options.capacityBurst ?? Math.max(1, Math.ceil((options.capacityPerSecond ?? 500) / 10)),
          startAt: null,
          tokens: 0,
          refilledAt: 0,
          times: [],
          answers: [],
        }
      : undefined;
  for (const w of watches) w.resolve({ reached: false, count: w.count });
  watches = [];
  failFirst = options.failFirst ?? 2;
  expect = options.expect ?? 0;
  requests = new Map();
  firstSuccessAt = new Map();
  totalRequests = 0;
  duplicates = 0;
  noKey = 0;
  firstRequestAt = null;
  lastFirstSuccessAt = null;
  lastRequestAt = null;
  requestsAtLastFirstSuccess = 0;
  reached = false;
}

function stats() {
  return {
    mode,
    requests: totalRequests,
    keys: requests.size,
    firstSuccesses: firstSuccessAt.size,
    duplicates,
    noKey,
    firstRequestAt,
    lastFirstSuccessAt,
    lastRequestAt,
    requestsAtLastFirstSuccess,
  };
}

const server = createServer((req, res) => {
  // Stamp on arrival of the headers: that is when the attempt reached the target.
  const at = epochNow();
  req.resume();
  req.on('end', () => {
    totalRequests += 1;
    firstRequestAt ??= at;
    lastRequestAt = at;
    const key = req.headers['idempotency-key'];
    if (typeof key !== 'string' || key === '') {
      noKey += 1;
      res.writeHead(400).end('missing Idempotency-Key');
      return;
    }
    const n = (requests.get(key) ?? 0) + 1;
    requests.set(key, n);
    if (storm !== undefined && !admitStorm(at, res, firstSuccessAt.has(key))) return;
    if (firstSuccessAt.has(key)) {
      duplicates += 1;
      res.writeHead(200, { 'idempotent-replayed': 'true' }).end('{"ok":true}');
      return;
    }
    if (mode === 'flaky' && n <= failFirst) {
      res.writeHead(503).end('busy');
      return;
    }
    firstSuccessAt.set(key, at);
    lastFirstSuccessAt = at;
    requestsAtLastFirstSuccess = totalRequests;
    if (watches.length > 0) noteWatched(key, at);
    // The arrival is the success as the target sees it; the answer leaves `delayMs` later (a slow target).
    if (delayMs > 0) setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'), delayMs);
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    if (!reached && expect > 0 && firstSuccessAt.size >= expect) {
      reached = true;
      process.send?.({ event: 'reached', stats: stats() });
    }
  });
});
// Clients keep connections open between bursts; Node's 5 s default would close them mid-run.
server.keepAliveTimeout = 120_000;
server.headersTimeout = 125_000;
server.requestTimeout = 0;

/**
 * Storm mode: answers a request that the outage or the capacity refuses (false), or lets it be served (true);
 * records it either way.
 */
function admitStorm(at, res, duplicate) {
  storm.startAt ??= at;
  storm.times.push(at - storm.startAt);
  const recoveredAt = storm.startAt + storm.failForMs;
  if (at < recoveredAt) {
    storm.answers.push(ANSWER.down);
    res.writeHead(503).end('down');
    return false;
  }
  if (storm.refilledAt < recoveredAt) {
    storm.tokens = storm.capacityBurst;
    storm.refilledAt = recoveredAt;
  }
  storm.tokens = Math.min(storm.capacityBurst, storm.tokens + ((at - storm.refilledAt) * storm.capacityPerSecond) / 1000);
  storm.refilledAt = at;
  if (storm.tokens < 1) {
    storm.answers.push(ANSWER.throttled);
    res.writeHead(429, { 'retry-after': '1' }).end('over capacity');
    return false;
  }
  storm.tokens -= 1;
  storm.answers.push(duplicate ? ANSWER.duplicate : ANSWER.ok);
  return true;
}

function noteWatched(key, at) {
  for (const w of watches) {
    if (!key.startsWith(w.prefix)) continue;
    w.count += 1;
    if (w.count >= w.expect) {
      watches = watches.filter((x) => x !== w);
      w.resolve({ reached: true, count: w.count, at });
    }
  }
}

/** Keys with a prefix (all when absent) whose first success arrived in [from, to] (epoch ms; open ends when absent). */
function* arrivalsMatching({ prefix, from = -Infinity, to = Infinity } = {}) {
  for (const entry of firstSuccessAt) {
    if (prefix !== undefined && !entry[0].startsWith(prefix)) continue;
    if (entry[1] >= from && entry[1] <= to) yield entry;
  }
}

const commands = {
  reset: (args) => (reset(args), stats()),
  stats: () => stats(),
  // [key, epoch ms] of the first success of every key (ok mode: the first arrival); `prefix`, `from`, `to` filter.
  arrivals: (args) => [...arrivalsMatching(args)],
  // How many keys' first successes match the same filter (W5: A's successes in a window).
  countArrivals: (args) => [...arrivalsMatching(args)].length,
  // Answers once `expect` first successes among the keys with `prefix` have arrived (counting those already in),
  // with the arrival time of the one that completed the count; answers { reached: false } at the next reset.
  watch: ({ prefix, expect }) => {
    let count = 0;
    let last = 0;
    for (const [, at] of arrivalsMatching({ prefix })) {
      count += 1;
      last = Math.max(last, at);
    }
    if (count >= expect) return { reached: true, count, at: last };
    return new Promise((resolve) => watches.push({ prefix, expect, count, resolve }));
  },
  // Storm mode: when the outage began (epoch ms) and ended, and every request's arrival (ms since the start) and answer
  // (0 the outage's 503, 1 a 429 over capacity, 2 a first success, 3 a duplicate), in arrival order.
  timeline: () =>
    storm === undefined
      ? undefined
      : {
          startAt: storm.startAt,
          recoveredAt: storm.startAt === null ? null : storm.startAt + storm.failForMs,
          capacityPerSecond: storm.capacityPerSecond,
          capacityBurst: storm.capacityBurst,
          times: storm.times.map((t) => Math.round(t * 100) / 100),
          answers: storm.answers,
        },
  exit: () => {
    setImmediate(() => {
      server.closeAllConnections();
      server.close(() => process.exit(0));
    });
    return true;
  },
};

process.on('message', (message) => {
  const { id, cmd, ...args } = message;
  const handler = commands[cmd];
  if (handler === undefined) process.send({ id, error: `unknown command ${cmd}` });
  else void Promise.resolve(handler(args)).then((result) => process.send({ id, result }));
});
process.on('disconnect', () => process.exit(0));

server.listen(0, '127.0.0.1', () => {
  process.send({ event: 'listening', port: server.address().port });
});
