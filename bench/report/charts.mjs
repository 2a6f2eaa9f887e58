// The report's charts, from a results file: W1 attempts/s per contender, W4's dispatch lag distribution per store,
// and W3's request rate over time per store. File name → SVG text; the writer puts them under docs/bench/.

import { rateChartSvg } from '../service/lib/rate-chart.mjs';
import { STORE_NAMES, w1Figures, w3Figures, w4Figures } from './figures.mjs';
import { barChartSvg, logLineChartSvg } from './svg-charts.mjs';

const PERCENTILE_LABELS = { 50: 'p50', 75: 'p75', 90: 'p90', 95: 'p95', 99: 'p99', 99.9: 'p99.9', 100: 'max' };

/** `{ 'w1-attempts.svg': svg, … }`; a workload not in the results has no chart. */
export function renderCharts(results) {
  const charts = {};
  // The date of the run that measured the step: a step taken over from an earlier run (--merge) keeps its own.
  const tag = (step) => `${results.quick ? 'QUICK smoke run, not figures to quote' : 'full run'}, ${(step?.from?.startedAt ?? results.startedAt).slice(0, 10)}`;
  const w1 = w1Figures(results);
  if (w1.contenders.length > 0 || w1.bare !== undefined) {
    const bars = w1.contenders.map((c) => ({ label: c.label, value: c.attemptsPerSec, min: c.range[0], max: c.range[1], kind: c.kind }));
    for (const ref of [...Object.values(w1.bareStores), w1.bare].filter((r) => r !== undefined)) {
      bars.push({ label: ref.name, value: ref.attemptsPerSec, min: ref.range[0], max: ref.range[1], kind: 'ceiling' });
    }
    charts['w1-attempts.svg'] = barChartSvg({
      title: `W1: attempts/s, ${(w1.tasks ?? 0).toLocaleString('en-US')} tasks, median of ${w1.rounds ?? 1} round(s) (${tag(w1.step)})`,
      unit: 'attempts/s (whiskers: range over the rounds)',
      bars,
    });
  }
  const w4 = w4Figures(results).filter((w) => w.lagCurve !== undefined);
  if (w4.length > 0) {
    charts['w4-lag.svg'] = logLineChartSvg({
      title: `W4: dispatch lag distribution, ${(w4[0].rate ?? 0).toLocaleString('en-US')} tasks/s for ${w4[0].seconds} s (${tag(w4[0].step)})`,
      xLabels: w4[0].lagCurve.map(([p]) => PERCENTILE_LABELS[p] ?? `p${p}`),
      yLabel: 'dispatch lag (ms, log scale)',
      series: w4.map((w) => ({ name: `retryd, ${STORE_NAMES[w.store] ?? w.store}`, values: w.lagCurve.map(([, v]) => v) })),
    });
  }
  for (const w of w3Figures(results)) {
    if (w.chart === undefined || w.chart.panels.length === 0) continue;
        // W3's own title has its date already.
    charts[`w3-rate-${w.store}.svg`] = rateChartSvg({ ...w.chart, title: `${w.chart.title}${results.quick ? ' (QUICK smoke run)' : ''}` });
  }
  return charts;
}
