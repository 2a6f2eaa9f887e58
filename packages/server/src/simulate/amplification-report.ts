import {
  AMPLIFICATION_MECHANISMS,
  AMPLIFICATION_REQUESTS_PER_SECOND,
  type AmplificationMechanism,
  type AmplificationResult,
} from './amplification-model.js';
import { lineChartSvg, type ChartSeries } from './line-chart-svg.js';
import { formatFixed, formatPercent, textTable } from '../terminal/text-table.js';

/** How each mechanism is named and drawn. */
export const MECHANISM_STYLE: Readonly<Record<AmplificationMechanism, { label: string; color: string; dashed: boolean }>> = Object.freeze({
  'no-retries': { label: 'no retries', color: '#000000', dashed: true },
  retries: { label: '3 retries', color: '#D55E00', dashed: false },
  'retry-budget': { label: '3 retries + retry budget', color: '#0072B2', dashed: false },
  'circuit-breaker': { label: '3 retries + circuit breaker', color: '#009E73', dashed: false },
});

/** What the report says about the run besides the results. */
export interface AmplificationRunInfo {
  seed: number;
  clients: number;
  durationMs: number;
}

/** The terminal report: one row per failure rate and mechanism. */
export function amplificationTable(results: readonly AmplificationResult[], info: AmplificationRunInfo): string {
  return [
    `Amplification: ${info.clients} clients × ${AMPLIFICATION_REQUESTS_PER_SECOND} requests/s (Poisson) for ${formatFixed(info.durationMs / 1000, 0)} s against a server failing at random; seed ${info.seed}`,
    '',
    textTable(
      ['failure', 'mechanism', 'requests', 'calls', 'amplification', 'calls/request', 'success'],
      results.map((r) => [
        formatPercent(r.failureRate, 0),
        r.mechanism,
        formatFixed(r.requests, 0),
        formatFixed(r.calls, 0),
        `${formatFixed(r.amplification, 3)}×`,
        `${formatFixed(r.callsPerRequest, 3)}×`,
        formatPercent(r.successRate, 2),
      ]),
      2,
    ),
    '',
    'amplification = calls ÷ first calls; calls/request = calls ÷ requests (a breaker refuses some first calls); success = requests that succeeded',
    '',
  ].join('\n');
}

/** The chart: amplification and success rate against the failure rate, one line per mechanism. */
export function amplificationSvg(results: readonly AmplificationResult[], info: AmplificationRunInfo): string {
  const series = (pick: (r: AmplificationResult) => number): ChartSeries[] =>
    AMPLIFICATION_MECHANISMS.filter((m) => results.some((r) => r.mechanism === m)).map((mechanism) => ({
      name: MECHANISM_STYLE[mechanism].label,
      color: MECHANISM_STYLE[mechanism].color,
      dashed: MECHANISM_STYLE[mechanism].dashed,
      points: results.filter((r) => r.mechanism === mechanism).map((r) => [r.failureRate * 100, pick(r)] as const),
    }));
  const percent = (value: number) => `${value}%`;
  return lineChartSvg({
    title: 'Retries against a failing server: load and success',
    subtitle: `retryd simulate amplification: ${info.clients} clients × ${AMPLIFICATION_REQUESTS_PER_SECOND} requests/s for ${formatFixed(info.durationMs / 1000, 0)} s; seed ${info.seed}`,
    panels: [
      {
        title: 'Load amplification (calls ÷ first calls)',
        xLabel: 'server failure rate',
        yLabel: 'amplification (×)',
        yMin: 0,
        formatX: percent,
        series: series((r) => r.amplification),
      },
      {
        title: 'Requests that succeeded',
        xLabel: 'server failure rate',
        yLabel: 'success rate',
        formatX: percent,
        formatY: percent,
        series: series((r) => r.successRate * 100),
      },
    ],
  });
}
