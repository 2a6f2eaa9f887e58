import { formatFixed, textTable } from '../terminal/text-table.js';
import { barChartSvg, formatRatio, type BarSeries } from './bar-chart-svg.js';
import type { W7Result } from './w7-model.js';
import { W7_ATTEMPT_TIMEOUT_MS, W7_CASES, W7_CONCURRENCY, W7_DESIGNS, W7_POLICY, W7_TIME_CAP_MS, W7Design } from './w7-workload.js';

/** How each design is named in the chart's legend and coloured (Okabe–Ito, as the other charts). */
export const DESIGN_STYLE: Readonly<Record<W7Design, { label: string; color: string }>> = Object.freeze({
  none: { label: 'none', color: '#000000' },
  landed: { label: 'landed (the defaults)', color: '#D55E00' },
  previous: { label: 'previous (the defaults before)', color: '#CC79A7' },
  sre: { label: 'sre (client-side throttling)', color: '#0072B2' },
  budget: { label: 'budget (retry budget alone)', color: '#E69F00' },
  'breaker-only': { label: 'breaker-only', color: '#009E73' },
});

/** What the report says about the run besides the results. */
export interface W7RunInfo {
  seed: number;
  tasks: number;
}

const p = W7_POLICY;
const POLICY_TEXT = `${p.backoffType} from ${p.initialDelayMs} ms ×${p.multiplier} up to ${p.maxDelayMs / 1000} s, ${p.maxAttempts} attempts, ${p.jitterType} jitter`;
const isDead = (r: W7Result) => W7_CASES.find((c) => c.id === r.case)?.downstream.kind === 'dead';

/** `64 in flight`, and the cases that run with another concurrency (`e: 256`) among `results`. */
function inFlightText(results: readonly W7Result[]): string {
  const others = W7_CASES.filter((c) => c.concurrency !== undefined && c.concurrency !== W7_CONCURRENCY && results.some((r) => r.case === c.id));
  return `${W7_CONCURRENCY} in flight${others.length === 0 ? '' : ` (${others.map((c) => `${c.id}: ${c.concurrency}`).join(', ')})`}`;
}

/** The terminal report: one row per case and design, `none` first in each case, with the aim met or not. */
export function w7Table(results: readonly W7Result[], info: W7RunInfo): string {
  const atLeast = (r: W7Result) => (r.finished ? '' : '≥ ');
  const ratio = (r: W7Result, value: number | null) => (value === null ? '–' : `${atLeast(r)}${formatRatio(value)}`);
  const aims = new Map<string, string[]>();
  for (const r of results) if (!(aims.get(r.aim)?.includes(r.case) ?? false)) aims.set(r.aim, [...(aims.get(r.aim) ?? []), r.case]);
  return [
    `W7 (partial failure) on a virtual clock: ${formatFixed(info.tasks, 0)} tasks a case, all due at 0, ${inFlightText(results)}; ` +
      `policy ${POLICY_TEXT}; seed ${info.seed}`,
    '',
    textTable(
      [
        'case', 'design', 'aim', 'succeeded', 'exhausted', 'pending', 'time (s)', 'calls', 'calls/task', 'busiest 100 ms', 'goodput/s',
        'timeouts', 'good lag p99 (s)', 'time ÷ none', 'calls ÷ none',
      ],
      results.map((r) => [
        r.case,
        r.design,
        r.met === null ? (r.design === W7Design.NONE ? 'reference' : '?') : r.met ? 'met' : 'NOT MET',
        formatFixed(r.succeeded, 0),
        formatFixed(r.exhausted, 0),
        formatFixed(r.pending, 0),
        `${atLeast(r)}${formatFixed(r.timeMs / 1000, 2)}`,
        formatFixed(r.calls, 0),
        formatFixed(r.callsPerTask, 2),
        formatFixed(r.busiest100ms, 0),
        r.goodputPerSecond === null ? '–' : formatFixed(r.goodputPerSecond, 0),
        formatFixed(r.timeouts, 0),
        r.goodLagP99Ms === null ? '–' : `${formatFixed(r.goodLagP99Ms / 1000, 2)} (${r.goodLagRatio === null ? '–' : formatRatio(r.goodLagRatio)})`,
        ratio(r, r.timeRatio),
        isDead(r) ? formatRatio(r.callsRatio ?? 0) : ratio(r, r.callsRatio),
      ]),
      3,
    ),
    '',
    `aims (WORKLOADS.md W7), beside none: ${[...aims].map(([aim, cases]) => `${cases.join(', ')}: ${aim}`).join('; ')}`,
    `time: until every task ended (succeeded, or used its ${p.maxAttempts} attempts); ≥: tasks still pending when the run stopped ` +
      `(f after its hour, the others at ${W7_TIME_CAP_MS / 1000} s), so at least that; goodput: first successes per second until all ` +
      `but a second of capacity had succeeded; timeouts: attempts unanswered after ${W7_ATTEMPT_TIMEOUT_MS / 1000} s (the service's ` +
      'default); good lag p99: the good targets\' tasks, from due to success (÷ none\'s with the bad target answering at once like them)',
    '',
  ].join('\n');
}

/** The chart: time ÷ none and calls ÷ none per case, one bar per design, on log axes from 1×. */
export function w7Svg(results: readonly W7Result[], info: W7RunInfo): string {
  const designs = W7_DESIGNS.filter((d) => d !== W7Design.NONE && results.some((r) => r.design === d));
  const panel = (title: string, cases: readonly string[], pick: (r: W7Result) => number | null) => ({
    title,
    yLabel: '÷ none (log scale)',
    groups: cases,
    baseline: 1,
    series: designs.map((design): BarSeries => {
      const rows = cases.map((c) => results.find((r) => r.case === c && r.design === design));
      return {
        name: DESIGN_STYLE[design].label,
        color: DESIGN_STYLE[design].color,
        values: rows.map((r) => (r === undefined ? null : pick(r))),
        lowerBounds: rows.map((r) => r !== undefined && !r.finished && !isDead(r)),
      };
    }),
  });
  const cases = [...new Set(results.map((r) => r.case))];
  return barChartSvg({
    title: 'W7: protection designs against partial failure, each beside none',
    subtitle:
      `retryd simulate w7: ${formatFixed(info.tasks, 0)} tasks a case, ${inFlightText(results)}, seed ${info.seed}; ` +
      `below 1× is better; an open bar: tasks still pending at ${W7_TIME_CAP_MS / 1000} s (at least that)`,
    panels: [
      panel('Time until every task ended ÷ none', cases.filter((c) => !results.some((r) => r.case === c && isDead(r))), (r) => r.timeRatio),
      panel('Calls ÷ none (f: in its hour)', cases, (r) => r.callsRatio),
    ],
  });
}
