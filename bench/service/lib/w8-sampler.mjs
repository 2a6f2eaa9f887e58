// W8's figures every 10 s (../w8.mjs): the store's size, the service's RSS, the dispatch lag of the first attempts
// that reached the downstream in the window, and the tasks the service purged per second (its /metrics).

import { request } from 'undici';
import { sleep, summarize } from './report.mjs';
import { withPostgres } from './servers.mjs';

/**
 * Arrivals newer than this are left to the next window: a task's first attempt may reach the downstream before its
 * enqueue's answer (which carries its `nextAttemptAt`) is back here, and the two clocks (epoch ms here, the downstream's
 * `performance.timeOrigin + performance.now()`) may drift a little apart over a long run.
 */
const LAG_MARGIN_MS = 1000;

/**
 * What "the store's size" is, per store kind, and how to read it: SQLite the database file and its -wal (allocated
 * bytes); PostgreSQL `pg_total_relation_size` of the run schema's `tasks` and `attempts` (their indexes and TOAST
 * included); Redis the server's `used_memory` (the server is dedicated to the run, so the other keys are a constant).
 */
export function storeSizer(store) {
  if (store.kind === 'sqlite') {
    return {
      what: 'SQLite database file + its -wal',
      bytes: async () => {
        const s = await store.size();
        return s.db + s.wal;
      },
    };
  }
  if (store.kind === 'postgres') {
    const url = new URL(store.url);
    const schema = url.searchParams.get('schema');
    // The service's own parameter; the pg driver would send it to the server as a setting.
    url.searchParams.delete('schema');
    const sql =
      'SELECT (coalesce(pg_total_relation_size(to_regclass($1::text)), 0) + coalesce(pg_total_relation_size(to_regclass($2::text)), 0))::bigint AS n';
    const names = [`"${schema}".tasks`, `"${schema}".attempts`];
    return {
      what: `PostgreSQL pg_total_relation_size of ${schema}.tasks + ${schema}.attempts (indexes and TOAST included)`,
      bytes: () => withPostgres(async (c) => Number((await c.query(sql, names)).rows[0].n), url.toString()),
    };
  }
  return { what: 'Redis used_memory (the whole server, dedicated to the run)', bytes: async () => (await store.size()).total };
}

/** `retry_tasks_purged_total` by `status`, summed over its other labels, from the service's `GET /metrics`. */
export async function purgedTotals(serviceUrl) {
  const res = await request(`${serviceUrl}/metrics`);
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`GET /metrics → ${res.statusCode}: ${text.slice(0, 200)}`);
  const totals = {};
  for (const m of text.matchAll(/^retry_tasks_purged_total\{([^}]*)\}\s+(\S+)$/gm)) {
    const status = /status="([^"]*)"/.exec(m[1])?.[1] ?? 'unknown';
    totals[status] = (totals[status] ?? 0) + Number(m[2]);
  }
  return totals;
}

const sumOf = (totals) => Object.values(totals).reduce((a, b) => a + b, 0);

/**
 * The dispatch lag of first attempts, as W4 measures it (the arrival of a task's first request at the downstream −
 * the `nextAttemptAt` its enqueue answered), window by window: `due[i]` is filled as enqueues answer (task i's
 * key ends in `-i`); `collect(to)` takes the first requests that arrived since the previous collect and before `to`
 * (epoch ms; undefined: all so far) and returns their lags' summary. Arrivals whose enqueue had not answered yet wait
 * for the next collect. `overall()` summarises every lag collected.
 */
export function lagTracker(ds, { prefix, total }) {
  const due = new Float64Array(total).fill(NaN);
  const all = [];
  let waiting = [];
  let from;
  return {
    due,
    async collect(to) {
      const entries = await ds.firstRequests({ prefix, ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) });
      if (to !== undefined) from = to;
      const lags = [];
      const pending = waiting;
      waiting = [];
      for (const [key, at] of entries) pending.push([Number(key.slice(key.lastIndexOf('-') + 1)), at]);
      for (const [i, at] of pending) {
        if (Number.isNaN(due[i])) waiting.push([i, at]);
        else lags.push(at - due[i]);
      }
      for (const lag of lags) all.push(lag);
      return summarize(lags);
    },
    overall: () => summarize(all),
    all: () => all,
    /** First requests seen whose enqueue never answered (only after the last collect). */
    unmatched: () => waiting.length,
  };
}

/**
 * Every `everyMs` from `startedAt` (a `performance.now()`), `count` times: the store's size, the service's RSS, the
 * window's first-attempt lag and the purges per second since the previous sample. `onRow(row)` is told of each as it
 * is taken (progress on the console). A first row, `atS` 0, is taken at once, before any load.
 *
 * The purge works in passes, one every `--purge-interval` after the previous pass ended (10 s plus the pass's own
 * time), so a 10 s window nearly always holds one whole pass, a little more than 10 s of tasks, and now and then a
 * pass split with the next window: a window's purges per second swing around the rate; their mean is the figure.
 */
export async function sampleEvery({ service, sizer, lag, startedAt, everyMs = 10_000, count, onRow }) {
  const rows = [];
  let purged0 = await purgedTotals(service.url);
  let t0 = performance.now();
  const first = { atS: 0, bytes: await sizer.bytes(), rssMiB: (await service.memory()).rssMiB, lag: summarize([]), purgedPerSec: 0, purged: {} };
  rows.push(first);
  onRow?.(first);
  for (let k = 1; k <= count; k++) {
    const wait = startedAt + k * everyMs - performance.now();
    if (wait > 0) await sleep(wait);
    const now = performance.now();
    const [bytes, memory, purged] = await Promise.all([sizer.bytes(), service.memory(), purgedTotals(service.url)]);
    const windowLag = await lag.collect(Date.now() - LAG_MARGIN_MS);
    const delta = Object.fromEntries(Object.entries(purged).map(([s, n]) => [s, n - (purged0[s] ?? 0)]));
    const row = { atS: (now - startedAt) / 1000, bytes, rssMiB: memory.rssMiB, lag: windowLag, purgedPerSec: sumOf(delta) / ((now - t0) / 1000), purged: delta };
    purged0 = purged;
    t0 = now;
    rows.push(row);
    onRow?.(row);
  }
  return { rows, purgedTotal: purged0 };
}
