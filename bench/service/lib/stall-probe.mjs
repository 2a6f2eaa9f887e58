// Preloaded into `retryd serve` by `w4.mjs --stalls` (`node --import`): records each time the service's event loop
// was held longer than 3 ms (a 1 ms interval timer that fired late) and every GC (its start, duration and kind), in
// epoch ms, and writes them to the file RETRYD_STALL_FILE names when the process exits. The timer costs the service
// some CPU of its own: a run with --stalls is for finding where the lag's tail comes from, not for CPU figures.

import { writeFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';

const file = process.env.RETRYD_STALL_FILE;
if (file !== undefined && file !== '') {
  const now = () => performance.timeOrigin + performance.now();
  /** [start, ms] of each stall. */
  const stalls = [];
  /** [start, ms, kind] of each GC (perf_hooks' NODE_PERFORMANCE_GC_* kind). */
  const gcs = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcs.push([performance.timeOrigin + e.startTime, e.duration, /** @type {any} */ (e).detail?.kind ?? null]);
  }).observe({ entryTypes: ['gc'] });
  let last = now();
  setInterval(() => {
    const t = now();
    if (t - last > 3) stalls.push([last, t - last]);
    last = t;
  }, 1).unref();
  process.on('exit', () => writeFileSync(file, JSON.stringify({ stalls, gcs })));
}
