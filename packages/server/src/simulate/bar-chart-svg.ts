import { chartSvg, escapeXml, legendRowSvg, logAxis, type Chart } from './line-chart-svg.js';

// Grouped bars of ratios on a log axis, growing up or down from a baseline (1×: "the same as the reference"), so that
// twice as much and half as much stand equally far from it. The W7 model's chart; the line charts are line-chart-svg.ts.

/** One series: a bar in every group (null: none there), each optionally a lower bound (drawn open: "at least this"). */
export interface BarSeries {
  name: string;
  color: string;
  values: readonly (number | null)[];
  lowerBounds?: readonly boolean[];
}

/** One panel: groups along x, one bar per series in each. */
export interface BarPanel {
  title: string;
  yLabel: string;
  groups: readonly string[];
  series: readonly BarSeries[];
  /** Where bars start, on the log axis. */
  baseline: number;
  formatY?: (value: number) => string;
}

/** A chart of bars: its legend names the first panel's series. */
export type BarChart = Chart<BarPanel>;

const PANEL_WIDTH = 560;
const PANEL_HEIGHT = 360;
const MARGIN = { left: 72, right: 18, top: 34, bottom: 40 };

/**
 * Writes `chart` as a standalone SVG document, like `lineChartSvg`: grouped bars on a log axis from `baseline`.
 *
 * @example
 * ```ts
 * barChartSvg({ title: 'Time ÷ none', subtitle: 'seed 1', panels: [{ title: 't', yLabel: '×', groups: ['a1'], baseline: 1, series }] });
 * ```
 */
export function barChartSvg(chart: BarChart): string {
  return chartSvg(chart, PANEL_WIDTH, PANEL_HEIGHT, panelSvg, (width, y) => legendSvg(chart.panels[0]?.series ?? [], width, y));
}

function panelSvg(panel: BarPanel, left: number, top: number): string {
  const x0 = left + MARGIN.left;
  const x1 = left + PANEL_WIDTH - MARGIN.right;
  const y0 = top + PANEL_HEIGHT - MARGIN.bottom;
  const y1 = top + MARGIN.top;
  const values = panel.series.flatMap((s) => s.values.filter((v): v is number => v !== null && v > 0));
  const axis = logAxis(Math.min(panel.baseline, ...values), Math.max(panel.baseline, ...values));
  const low = axis.map(axis.min);
  const span = axis.map(axis.max) - low || 1;
  const py = (y: number) => round(y0 - ((axis.map(y) - low) / span) * (y0 - y1));
  const fy = panel.formatY ?? ((v: number) => `${v}×`);
  const groupWidth = (x1 - x0) / Math.max(1, panel.groups.length);
  const barWidth = (groupWidth * 0.8) / Math.max(1, panel.series.length);
  const out: string[] = [`<g>`, `<text x="${(x0 + x1) / 2}" y="${top + 18}" text-anchor="middle" font-size="14" font-weight="600">${escapeXml(panel.title)}</text>`];
  for (const tick of axis.ticks) {
    const y = py(tick);
    out.push(`<line x1="${x0}" y1="${y}" x2="${x1}" y2="${y}" stroke="#e4e4e4"/>`);
    out.push(`<text x="${x0 - 6}" y="${y + 4}" text-anchor="end" fill="#333333">${escapeXml(fy(tick))}</text>`);
  }
  const base = py(panel.baseline);
  panel.groups.forEach((group, g) => {
    const gx = x0 + g * groupWidth;
    out.push(`<text x="${round(gx + groupWidth / 2)}" y="${y0 + 18}" text-anchor="middle" fill="#333333">${escapeXml(group)}</text>`);
    panel.series.forEach((series, s) => {
      const value = series.values[g];
      if (value === null || value === undefined || !(value > 0)) return;
      const x = round(gx + groupWidth * 0.1 + s * barWidth);
      const y = py(value);
      const open = series.lowerBounds?.[g] === true;
      const paint = open ? `fill="#ffffff" stroke="${series.color}" stroke-width="1.5" stroke-dasharray="4 2"` : `fill="${series.color}"`;
      const label = `${series.name}, ${group}: ${open ? 'at least ' : ''}${formatRatio(value)}`;
      out.push(
        `<rect x="${x}" y="${Math.min(y, base)}" width="${round(barWidth - 2)}" height="${round(Math.max(1, Math.abs(base - y)))}" ${paint}><title>${escapeXml(label)}</title></rect>`,
      );
    });
  });
  out.push(`<line x1="${x0}" y1="${base}" x2="${x1}" y2="${base}" stroke="#333333" stroke-width="1.5"/>`);
  out.push(`<line x1="${x0}" y1="${y0}" x2="${x0}" y2="${y1}" stroke="#333333"/>`);
  const yMid = (y0 + y1) / 2;
  out.push(`<text x="${left + 16}" y="${yMid}" text-anchor="middle" transform="rotate(-90 ${left + 16} ${yMid})">${escapeXml(panel.yLabel)}</text>`);
  out.push('</g>');
  return out.join('\n');
}

function legendSvg(series: readonly BarSeries[], width: number, y: number): string {
  const entries = series.map((s) => ({
    name: s.name,
    swatchWidth: 12,
    swatch: (x: number) => `<rect x="${round(x)}" y="${y - 6}" width="12" height="12" fill="${s.color}"/>`,
  }));
  return legendRowSvg(entries, width, y);
}

/** A ratio as tables and labels show it: `1.08×`; two significant digits below 0.1 (`0.0023×`). */
export function formatRatio(value: number): string {
  return `${value < 0.1 ? value.toPrecision(2) : value.toFixed(2)}×`;
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
