// The downstream of the service benchmarks (../../../shared/WORKLOADS.md), run in its own process so that it
// never shares an event loop with the load generator, the service or a peer's workers.
//
//   flaky (W1, W7 a, W8): answers 503 to the first `failFirst` requests (default 2) carrying a given Idempotency-Key
//               and 200 to the next; counts every request, every first success and every request after a success
//               (a duplicate). Keys that start with `alwaysFail` (W8's tasks that exhaust; default none) get 503 every
//               time.
//   ok (W2, W4, W5): answers 200 to everything and records, per Idempotency-Key, when its first request arrived;
//               `delayMs` (W5: 20) holds each answer that long, a slow but healthy target.
//   storm (W3): a target that goes down and comes back with a limited capacity. Every request fails (503, no
//               Retry-After) for `failForMs` (default 10,000) from the first request after the reset; then it serves
//               `capacityPerSecond` (default 500) requests per second — a token bucket of `capacityBurst` (default a
//               tenth of a second's worth) refilled at that rate, full at the recovery — and answers 429 with
//               `Retry-After: 1` to every request beyond that. Records every request's arrival and answer
//               (`timeline`).
//   random (W7 b): answers 503 (no Retry-After) to a share `failShare` (default 0.5) of the requests, drawn by a
//               generator seeded with `seed` (default 1) at the reset, so that a run draws the same sequence every
//               time; 200 to the others, at once.
//   overload (W7 d): serves `capacityPerSecond` (default 500) requests per second — a token bucket of `capacityBurst`
//               (default a tenth of a second's worth), full at the first request — and answers 503 with no
//               Retry-After beyond that, as an overloaded server does.
//   dead (W7 f): answers 503 to every request.
//   slow (W7 e): a target whose latency grows with the requests in flight, and that never fails: it serves
//               `concurrency` (default 200) requests at once, each answered 200 `latencyMs` (default 200) after its
//               service began; the others wait in line, first come first served, so an answer takes `latencyMs` plus
//               the wait. A request whose client gave up (its connection closed before the answer) is counted as
//               abandoned, and leaves the line if it was still waiting. The timeline adds when each request's service
//               began and when it was answered (`startTimes`, `doneTimes`), the most requests in flight at once
//               (`peakInFlight`) and `abandoned`.
//   up (W7 g's good targets): answers 200 to every request at once, as ok does, but counted and recorded as every
//               mode but ok is.
//
// Every mode but ok counts as flaky does and records every request's arrival and answer (`timeline`); ok records
// none, since it serves the throughput workloads (W2's backlog is a million tasks), where that record would only
// cost memory. Every mode counts a request after a key's first success as a duplicate, whatever it answers it.
// With `firstRequests: true` at the reset (any mode), it also keeps when each key's first request arrived (W8: the
// dispatch lag of first attempts, where the first success is a retry's); off by default for the same reason.
//
// Times are epoch milliseconds with a fractional part (`performance.timeOrigin + performance.now()`), the same
// time base as retryd's system clock, so an arrival here can be compared with a task's `nextAttemptAt`.
//
// The parent drives it over IPC (see ./lib/downstream-client.mjs): { id, cmd, ...args } → { id, result };
// it also gets { event: 'reached', stats } once the configured number of first successes has been reached.

import { createServer } from 'node:http';
import { seededRandom } from '@retryd/core/testing';
import { parentSend } from './lib/message-calls.mjs';
import { slowLine } from './lib/slow-line.mjs';

const epochNow = () => performance.timeOrigin + performance.now();

let mode = 'ok';
let expect = 0;
/** Requests per key. */
let requests = new Map();
/** First arrival per key (ok mode) or arrival of the first success (the other modes), epoch ms. */
let firstSuccessAt = new Map();
/** Arrival of each key's first request, epoch ms, when the reset asked for it (`firstRequests: true`). */
let firstRequestOf;
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
/** What a request was answered: a 503, a 429 over capacity (storm), a first success, a duplicate. */
const ANSWER = { down: 0, throttled: 1, ok: 2, duplicate: 3 };
/** The answers that refuse a request: the modes' 503 and storm's 429 beyond capacity. */
const BUSY = { answer: ANSWER.down, status: 503, headers: {}, body: 'busy' };
const DOWN = { ...BUSY, body: 'down' };
const THROTTLED = { answer: ANSWER.throttled, status: 429, headers: { 'retry-after': '1' }, body: 'over capacity' };
/** @typedef {{ answer: number, status: number, headers: Record<string, string>, body: string }} Refusal */
/**
 * The mode's answer to a request before it is served: `(at, n, duplicate, key)` → a refusal ({@link BUSY},
 * {@link DOWN}, {@link THROTTLED}), or undefined to serve it (`n`: the requests of its key so far, this one included).
 *
 * @type {(at: number, n: number, duplicate: boolean, key: string) => Refusal | undefined}
 */
let refuse = () => undefined;
/** Every request's arrival (ms since the first) and answer, and the mode's settings (every mode but ok); see `timeline`. */
let timeline;
/**
 * How an answer that is not a refusal leaves: `serve(res, write, i)` calls `write()` when it is to be sent (`i`: the
 * request's place in the timeline). At once, but in slow mode.
 *
 * @type {(res: import('node:http').ServerResponse, write: () => void, i: number) => void}
 */
let serve = (res, write) => write();
/** Waiters for a number of first successes among the keys with a prefix (W5): { prefix, expect, count, resolve }. */
let watches = [];

/**
 * A token bucket of `burst` tokens, full at `startAt` (epoch ms) and refilled at `ratePerSecond`: `take(at)` spends a
 * token if one is left. The capacity of storm's recovered target and of overload's.
 */
function tokenBucket(ratePerSecond, burst, startAt) {
  let tokens = burst;
  let refilledAt = startAt;
  return (at) => {
    tokens = Math.min(burst, tokens + ((at - refilledAt) * ratePerSecond) / 1000);
    refilledAt = at;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };
}

/** The capacity settings of storm and overload mode: `capacityPerSecond` (default 500), `capacityBurst` (a tenth of that). */
function capacityOf(options) {
  const capacityPerSecond = options.capacityPerSecond ?? 500;
  return { capacityPerSecond, capacityBurst: options.capacityBurst ?? Math.max(1, Math.ceil(capacityPerSecond / 10)) };
}

/** Storm mode: 503 for `failForMs` from the first request, then the capacity's bucket (full at the recovery) or a 429. */
function stormRefusal(options) {
  const settings = { failForMs: options.failForMs ?? 10_000, ...capacityOf(options) };
  let take;
  const refusal = (at) => {
    const recoveredAt = timeline.startAt + settings.failForMs;
    if (at < recoveredAt) return DOWN;
    take ??= tokenBucket(settings.capacityPerSecond, settings.capacityBurst, recoveredAt);
    return take(at) ? undefined : THROTTLED;
  };
  return { settings, refusal };
}

/** Overload mode: the capacity's bucket, full at the first request, and a 503 with no Retry-After beyond it. */
function overloadRefusal(options) {
  const settings = capacityOf(options);
  let take;
  const refusal = (at) => {
    take ??= tokenBucket(settings.capacityPerSecond, settings.capacityBurst, at);
    return take(at) ? undefined : BUSY;
  };
  return { settings, refusal };
}

/** Random mode: a 503 to a share `failShare` of the requests, drawn from a generator seeded with `seed`. */
function randomRefusal(options) {
  const settings = { failShare: options.failShare ?? 0.5, seed: options.seed ?? 1 };
  if (!(settings.failShare >= 0 && settings.failShare <= 1)) throw new Error(`failShare must be in [0, 1], got ${settings.failShare}`);
  const random = seededRandom(settings.seed);
  return { settings, refusal: () => (random() < settings.failShare ? BUSY : undefined) };
}

/**
 * Slow mode: `concurrency` requests served at once, each answered `latencyMs` after its service began; the rest wait in
 * line, first come first served (./lib/slow-line.mjs). The timeline keeps when each began and was answered.
 */
function slowService(options) {
  const settings = { concurrency: options.concurrency ?? 200, latencyMs: options.latencyMs ?? 200 };
  const since = () => epochNow() - timeline.startAt;
  const enter = slowLine(settings, {
    began: (i) => (timeline.startTimes[i] = since()),
    answered: (i) => (timeline.doneTimes[i] = since()),
    gaveUp: () => (timeline.abandoned += 1),
    held: (n) => (timeline.peakInFlight = Math.max(timeline.peakInFlight, n)),
  });
  const service = (res, write, i) => {
    timeline.startTimes[i] = null;
    timeline.doneTimes[i] = null;
    enter(res, write, i);
  };
  return { settings: { ...settings, startTimes: [], doneTimes: [], peakInFlight: 0, abandoned: 0 }, refusal: () => undefined, service };
}

/** Each mode's refusal and settings, from the reset's options (and slow mode's service). */
const MODES = {
  ok: () => ({ settings: {}, refusal: () => undefined }),
  up: () => ({ settings: {}, refusal: () => undefined }),
  flaky: (options) => {
    const failFirst = options.failFirst ?? 2;
    const alwaysFail = options.alwaysFail;
    if (alwaysFail !== undefined && (typeof alwaysFail !== 'string' || alwaysFail === '')) throw new Error(`alwaysFail must be a key prefix, got ${alwaysFail}`);
    const fails = alwaysFail === undefined ? () => false : (key) => key.startsWith(alwaysFail);
    // A duplicate is served: the key's first requests were refused, not every request.
    return {
      settings: { failFirst, alwaysFail: alwaysFail ?? null },
      refusal: (at, n, duplicate, key) => (!duplicate && (n <= failFirst || fails(key)) ? BUSY : undefined),
    };
  },
  storm: stormRefusal,
  random: randomRefusal,
  overload: overloadRefusal,
  dead: () => ({ settings: {}, refusal: () => BUSY }),
  slow: slowService,
};

function reset(options = {}) {
  const makeMode = MODES[options.mode ?? 'ok'];
  if (makeMode === undefined) throw new Error(`unknown mode ${options.mode} (${Object.keys(MODES).join(', ')})`);
  // Made before anything is forgotten: a reset refused for a bad option leaves the previous mode as it was.
  const { settings, refusal, service } = makeMode(options);
  mode = options.mode ?? 'ok';
  delayMs = options.delayMs ?? 0;
  refuse = refusal;
  serve = service ?? ((res, write) => write());
  timeline = mode === 'ok' ? undefined : { ...settings, startAt: null, times: [], answers: [] };
  for (const w of watches) w.resolve({ reached: false, count: w.count });
  watches = [];
  expect = options.expect ?? 0;
  requests = new Map();
  firstSuccessAt = new Map();
  firstRequestOf = options.firstRequests === true ? new Map() : undefined;
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
    if (n === 1) firstRequestOf?.set(key, at);
    const duplicate = firstSuccessAt.has(key);
    if (duplicate) duplicates += 1;
    if (timeline !== undefined) timeline.startAt ??= at;
    const refusal = refuse(at, n, duplicate, key);
    record(at, refusal?.answer ?? (duplicate ? ANSWER.duplicate : ANSWER.ok));
    if (refusal !== undefined) {
      res.writeHead(refusal.status, refusal.headers).end(refusal.body);
      return;
    }
    // Slow mode's line takes every request it serves: a duplicate waits as a first request does.
    const i = timeline === undefined ? -1 : timeline.times.length - 1;
    if (duplicate) {
      serve(res, () => res.writeHead(200, { 'idempotent-replayed': 'true' }).end('{"ok":true}'), i);
      return;
    }
    firstSuccessAt.set(key, at);
    lastFirstSuccessAt = at;
    requestsAtLastFirstSuccess = totalRequests;
    if (watches.length > 0) noteWatched(key, at);
    // The arrival is the success as the target sees it; the answer leaves `delayMs` later (a slow target).
    const write = () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    if (delayMs > 0) setTimeout(write, delayMs);
    else serve(res, write, i);
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

/** Notes a request's arrival and answer in the timeline (every mode but ok). */
function record(at, answer) {
  if (timeline === undefined) return;
  timeline.times.push(at - timeline.startAt);
  timeline.answers.push(answer);
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

/** A time of the timeline to a hundredth of a ms (null stays null). */
const round = (t) => (t === null ? null : Math.round(t * 100) / 100);

/**
 * Keys with a prefix (all when absent) whose first success arrived in [from, to] (epoch ms; open ends when absent).
 *
 * @param {{ prefix?: string | undefined, from?: number | undefined, to?: number | undefined }} [filter]
 */
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
  // [key, epoch ms] of the first request of every key with `prefix` (all when absent) that arrived in [from, to)
  // (open ends when absent); only after a reset with `firstRequests: true`.
  firstRequests: ({ prefix, from = -Infinity, to = Infinity }) => {
    if (firstRequestOf === undefined) throw new Error('firstRequests: reset with { firstRequests: true } first');
    const out = [];
    for (const entry of firstRequestOf) {
      if ((prefix === undefined || entry[0].startsWith(prefix)) && entry[1] >= from && entry[1] < to) out.push(entry);
    }
    return out;
  },
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
  // Every mode but ok: when the first request arrived (epoch ms), the mode's settings, and every request's arrival (ms
  // since the first) and answer (0 a 503, 1 a 429 over capacity, 2 a first success, 3 a duplicate), in arrival order;
  // storm mode adds when the outage ended (`recoveredAt`); slow mode when each request's service began and when it was
  // answered (`startTimes`, `doneTimes`, ms since the first arrival; null when its client gave up first), `peakInFlight`
  // and `abandoned`. Undefined in ok mode.
  timeline: () =>
    timeline === undefined
      ? undefined
      : {
          ...timeline,
          ...(mode === 'storm' ? { recoveredAt: timeline.startAt === null ? null : timeline.startAt + timeline.failForMs } : {}),
          times: timeline.times.map(round),
          ...(mode === 'slow' ? { startTimes: timeline.startTimes.map(round), doneTimes: timeline.doneTimes.map(round) } : {}),
        },
  exit: () => {
    setImmediate(() => {
      server.closeAllConnections();
      server.close(() => process.exit(0));
    });
    return true;
  },
};

const send = parentSend();
process.on('message', (/** @type {any} */ message) => {
  const { id, cmd, ...args } = message;
  const handler = commands[cmd];
  if (handler === undefined) send({ id, error: `unknown command ${cmd}` });
  // A bad reset (an unknown mode) answers its caller with the error instead of ending this process.
  else
    void Promise.resolve()
      .then(() => handler(args))
      .then(
        (result) => send({ id, result }),
        (error) => send({ id, error: error.message }),
      );
});
process.on('disconnect', () => process.exit(0));

server.listen(0, '127.0.0.1', () => {
  send({ event: 'listening', port: /** @type {import('node:net').AddressInfo} */ (server.address()).port });
});
