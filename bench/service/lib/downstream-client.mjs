// Starts ../downstream.mjs in a child process and talks to it over IPC.

import { fork } from 'node:child_process';
import { join } from 'node:path';

const SCRIPT = join(import.meta.dirname, '..', 'downstream.mjs');
/** The gRPC counterpart (W1 over gRPC): flaky and ok modes, the same commands but arrivals, timelines and watches. */
const GRPC_SCRIPT = join(import.meta.dirname, '..', 'grpc-downstream.mjs');

/**
 * A downstream in its own process: ../downstream.mjs, or with `grpc` ../grpc-downstream.mjs (W1 over gRPC).
 *
 * @example
 * const ds = await startDownstream();
 * await ds.reset({ mode: 'flaky', failFirst: 2, expect: 20_000 });
 * const stats = await ds.waitReached(120_000);
 */
export async function startDownstream({ grpc = false } = {}) {
  const child = fork(grpc ? GRPC_SCRIPT : SCRIPT, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const pending = new Map();
  let nextId = 1;
  let reachedWaiter;
  let reachedStats;
  child.on('message', (/** @type {any} */ message) => {
    if (message.event === 'reached') {
      reachedStats = message.stats;
      reachedWaiter?.(message.stats);
      return;
    }
    if (message.id === undefined) return;
    const p = pending.get(message.id);
    pending.delete(message.id);
    if (message.error !== undefined) p?.reject(new Error(message.error));
    else p?.resolve(message.result);
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const port = await new Promise((resolve, reject) => {
    const onMessage = (/** @type {any} */ m) => {
      if (m.event === 'listening') {
        child.off('message', onMessage);
        resolve(m.port);
      }
    };
    child.on('message', onMessage);
    void exited.then((code) => reject(new Error(`downstream exited with ${code} before listening`)));
  });
  const call = (cmd, args = {}) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      child.send({ id, cmd, ...args });
    });

  return {
    /** `http://127.0.0.1:<port>`; with `grpc`, the target's origin `grpc://127.0.0.1:<port>`. */
    url: `${grpc ? 'grpc' : 'http'}://127.0.0.1:${port}`,
    pid: child.pid,
    /**
     * Forgets every count and arrival; sets the mode (`flaky` | `ok` | `storm` | `random` | `overload` | `dead` |
     * `slow` | `up`), the first successes to wait for, `delayMs` (ok mode: how long each answer is held; default 0), and
     * `firstRequests` (true: keep each key's first request, for {@link firstRequests}), and the mode's own: flaky
     * `failFirst` and `alwaysFail` (a key prefix refused every time); storm `failForMs`, `capacityPerSecond` and
     * `capacityBurst`; random `failShare` and `seed`; overload `capacityPerSecond` and `capacityBurst`; slow `concurrency` and `latencyMs` (see
     * ../downstream.mjs). Rejects an unknown mode.
     */
    async reset(options) {
      reachedStats = undefined;
      return call('reset', options);
    },
    stats: () => call('stats'),
    /**
     * Map of Idempotency-Key → epoch ms of its first success (ok mode: first arrival); `{ prefix, from, to }`
     * keeps the keys with that prefix whose first success arrived in [from, to].
     */
    async arrivals(filter = {}) {
      return new Map(await call('arrivals', filter));
    },
    /**
     * Every mode but ok: `{ startAt, times, answers, ...the mode's settings }`, every request's arrival in ms since the
     * first (storm: since the outage began; it adds `recoveredAt`) and its answer (0 a 503, 1 a 429, 2 a first success,
     * 3 a duplicate served); slow mode adds `startTimes`, `doneTimes`, `peakInFlight` and `abandoned`; undefined in ok mode.
     */
    timeline: () => call('timeline'),
    /**
     * `[key, epoch ms]` of each key's first request (whatever it was answered) that arrived in [from, to), with
     * `prefix` when given; only after a reset with `firstRequests: true`.
     */
    firstRequests: (filter = {}) => call('firstRequests', filter),
    /** How many keys match `{ prefix, from, to }` as in {@link arrivals}, counted in the downstream. */
    countArrivals: (filter = {}) => call('countArrivals', filter),
    /**
     * Resolves with `{ reached: true, count, at }` once `expect` keys with `prefix` have had their first success (`at`:
     * the arrival that completed the count), or with `{ reached: false, count }` after `timeoutMs` (or a reset).
     */
    async watch(prefix, expect, { timeoutMs = Infinity } = {}) {
      let timer;
      const timeout = new Promise((resolve) => {
        if (Number.isFinite(timeoutMs)) timer = setTimeout(() => resolve(undefined), timeoutMs);
      });
      const answer = await Promise.race([call('watch', { prefix, expect }), timeout]);
      clearTimeout(timer);
      if (answer !== undefined) return answer;
      return { reached: false, count: await call('countArrivals', { prefix }) };
    },
    /**
     * Resolves with the stats once `expect` first successes arrived. Rejects when nothing new arrived for
     * `stallMs` (a contender that lost tasks would otherwise hang the run), or after `timeoutMs` overall.
     */
    async waitReached({ stallMs = 30_000, timeoutMs = 30 * 60_000 } = {}) {
      if (reachedStats !== undefined) return reachedStats;
      const started = Date.now();
      let last = -1;
      let lastChange = Date.now();
      return new Promise((resolve, reject) => {
        const timer = setInterval(async () => {
          const s = await call('stats');
          if (s.requests !== last) {
            last = s.requests;
            lastChange = Date.now();
          }
          if (Date.now() - lastChange > stallMs || Date.now() - started > timeoutMs) {
            clearInterval(timer);
            reachedWaiter = undefined;
            const err = /** @type {Error & { stats?: object }} */ (new Error(
              `downstream stalled: ${s.firstSuccesses} first successes, ${s.requests} requests, nothing new for ${stallMs} ms`,
            ));
            err.stats = s;
            reject(err);
          }
        }, 1000);
        reachedWaiter = (stats) => {
          clearInterval(timer);
          reachedWaiter = undefined;
          resolve(stats);
        };
      });
    },
    async close() {
      if (child.exitCode !== null) return;
      await call('exit').catch(() => undefined);
      await exited;
    },
  };
}

/**
 * Requests in the busiest window of `windowMs` that starts at a request at or after `fromMs`, from a timeline's
 * `times` (sorted).
 *
 * @example
 * peakInWindow([0, 10, 20, 150], 0, 100); // 3
 */
export function peakInWindow(times, fromMs, windowMs) {
  let best = 0;
  let j = 0;
  for (let i = 0; i < times.length; i++) {
    if (times[i] < fromMs) continue;
    if (j < i) j = i;
    while (j < times.length && times[j] < times[i] + windowMs) j++;
    best = Math.max(best, j - i);
  }
  return best;
}
