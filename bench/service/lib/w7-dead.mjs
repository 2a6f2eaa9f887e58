// W7 f (a target dead for an hour, ../../../../shared/WORKLOADS.md): the service runs a minute of it, and the rest of the
// hour is projected from how its breaker spaces its probes by then. Needs the build: npm run build

import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CURRENT_DIST } from './report.mjs';

/**
 * The breaker's default growth of its open period per failed probe and its longest period, as the measured build has
 * them (`DEFAULT_TARGET_SETTINGS.breaker`: `openBackoffMultiplier`, `maxOpenDurationMs`), with equal jitter: a period
 * is drawn between half its length and all of it, three quarters on average.
 */
const { DEFAULT_TARGET_SETTINGS } = await import(pathToFileURL(join(CURRENT_DIST, 'protection', 'target-settings.js')).href);
const GROWTH = DEFAULT_TARGET_SETTINGS.breaker.openBackoffMultiplier;
const MAX_PERIOD_MS = DEFAULT_TARGET_SETTINGS.breaker.maxOpenDurationMs;
const MEAN_DRAW = 0.75;

/**
 * The calls a dead target would get in `hourMs` (default an hour) from a run of `runMs` whose requests arrived at
 * `times` (ms from the first, ascending): the run's calls, then one probe per open period for the rest of the hour, each
 * period 1.2 times the last up to 5 minutes, starting from the period the run's last gap between calls shows. Null when
 * the run ended with fewer than two calls, or its calls did not thin out into probes (no breaker: every task retried).
 */
export function projectedHourCalls(times, runMs, hourMs = 3_600_000) {
  if (times.length < 2) return null;
  const lastGap = times[times.length - 1] - times[times.length - 2];
  // Calls a second or less apart at the end are retries, not probes of an open breaker: nothing to project from.
  if (lastGap < 1_000) return null;
  let period = Math.min(MAX_PERIOD_MS, lastGap / MEAN_DRAW);
  let at = times[times.length - 1];
  let calls = times.length;
  const end = Math.max(runMs, at) + (hourMs - runMs);
  for (;;) {
    period = Math.min(MAX_PERIOD_MS, period * GROWTH);
    at += period * MEAN_DRAW;
    if (at > end) return calls;
    calls++;
  }
}
