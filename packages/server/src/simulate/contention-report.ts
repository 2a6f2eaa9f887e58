import { CONTENTION_STRATEGIES, type ContentionStrategy } from './contention-strategies.js';
import type { ContentionResult } from './contention-model.js';
import { lineChartSvg, type ChartSeries } from './line-chart-svg.js';
import { formatFixed, textTable } from '../terminal/text-table.js';

/** How each strategy is named and drawn: the two without jitter dashed, the jittered ones solid. */
export const STRATEGY_STYLE: Readonly<Record<ContentionStrategy, { label: string; color: string; dashed: boolean }>> = Object.freeze({
  none: { label: 'no backoff', color: '#000000', dashed: true },
  exponential: { label: 'exponential, no jitter', color: '#D55E00', dashed: true },
  full: { label: 'full jitter', color: '#0072B2', dashed: false },
  equal: { label: 'equal jitter', color: '#E69F00', dashed: false },
  decorrelated: { label: 'decorrelated jitter', color: '#009E73', dashed: false },
});

/** What the report says about the run besides the results. */
export interface ContentionRunInfo {
  seed: number;
  runs: number;
}

/**
 * The terminal report: mean calls, then mean completion time, one row per client count and one column per
 * strategy.
 */
export function contentionTable(results: readonly ContentionResult[], info: ContentionRunInfo): string {
  const strategies = strategiesIn(results);
  const clients = [...new Set(results.map((r) => r.clients))];
  const cell = (strategy: ContentionStrategy, n: number) => results.find((r) => r.strategy === strategy && r.clients === n);
  const table = (pick: (r: ContentionResult) => string) =>
    textTable(
      ['clients', ...strategies],
      clients.map((n) => [String(n), ...strategies.map((s) => { const r = cell(s, n); return r === undefined ? '' : pick(r); })]),
    );
  return [
    `Contention (optimistic concurrency, AWS "Exponential Backoff And Jitter"): ${info.runs} runs each, seed ${info.seed}`,
    '',
    'Mean calls (conditional writes) per run: fewer is less load',
    table((r) => formatFixed(r.meanCalls, 1)),
    '',
    'Mean completion time (ms): until every client has written',
    table((r) => formatFixed(r.meanTimeMs, 0)),
    '',
  ].join('\n');
}

/** The chart: mean calls and mean completion time against clients, one line per strategy, log y axes. */
export function contentionSvg(results: readonly ContentionResult[], info: ContentionRunInfo): string {
  const series = (pick: (r: ContentionResult) => number): ChartSeries[] =>
    strategiesIn(results).map((strategy) => ({
      name: STRATEGY_STYLE[strategy].label,
      color: STRATEGY_STYLE[strategy].color,
      dashed: STRATEGY_STYLE[strategy].dashed,
      points: results.filter((r) => r.strategy === strategy).map((r) => [r.clients, pick(r)] as const),
    }));
  return lineChartSvg({
    title: 'Backoff under contention: N clients, one row, conditional writes',
    subtitle: `retryd simulate contention: base 5 ms, cap 2 s, network |Normal(10, 2)| ms; mean of ${info.runs} runs, seed ${info.seed}; lower is better`,
    panels: [
      { title: 'Mean calls (writes) per run', xLabel: 'clients', yLabel: 'calls (log scale)', yScale: 'log', formatY: compact, series: series((r) => r.meanCalls) },
      {
        title: 'Mean completion time',
        xLabel: 'clients',
        yLabel: 'seconds (log scale)',
        yScale: 'log',
        formatY: compact,
        series: series((r) => r.meanTimeMs / 1000),
      },
    ],
  });
}

function strategiesIn(results: readonly ContentionResult[]): ContentionStrategy[] {
  return CONTENTION_STRATEGIES.filter((s) => results.some((r) => r.strategy === s));
}

/** `0.2`, `5`, `2k`, `10k`: short tick labels. */
function compact(value: number): string {
  return value >= 1000 ? `${value / 1000}k` : String(value);
}
