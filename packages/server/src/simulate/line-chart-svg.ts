// A small line-chart writer: the simulations need a few panels of a few lines each, which a page of SVG draws
// plainly, where a charting library would pull in a browser or a DOM.

/** One line: its name (in the legend), colour, whether it is dashed, and its points. */
export interface ChartSeries {
  name: string;
  color: string;
  dashed?: boolean;
  points: readonly (readonly [x: number, y: number])[];
}

/** One panel: a plot with its own axes. Every panel of a chart shows the same series. */
export interface ChartPanel {
  title: string;
  xLabel: string;
  yLabel: string;
  /** `log`: a logarithmic y axis, for lines that differ by orders of magnitude. Default `linear`. */
  yScale?: 'linear' | 'log';
  /** Lowest y shown on a linear axis: 0 unless given (a lower bound that makes small differences visible). */
  yMin?: number;
  /** Formats a tick label. Default: the number with thousands separators. */
  formatY?: (value: number) => string;
  formatX?: (value: number) => string;
  series: readonly ChartSeries[];
}

/** A chart: a title, a line under it, panels side by side, and one legend for all of them. */
export interface Chart<Panel> {
  title: string;
  subtitle: string;
  panels: readonly Panel[];
}

/** A chart of lines. */
export type LineChart = Chart<ChartPanel>;

const PANEL_WIDTH = 470;
const PANEL_HEIGHT = 330;
const MARGIN = { left: 72, right: 18, top: 34, bottom: 52 };
// The title and subtitle above the panels, and the legend below them.
const HEADER = 64;
const LEGEND = 44;

/**
 * Writes `chart` as a standalone SVG document (UTF-8, with its own font and background), readable in a browser,
 * an editor's preview or a Markdown page.
 *
 * @example
 * ```ts
 * writeFileSync('chart.svg', lineChartSvg({ title: 'Calls', subtitle: 'seed 1', panels: [panel] }));
 * ```
 */
export function lineChartSvg(chart: LineChart): string {
  return chartSvg(chart, PANEL_WIDTH, PANEL_HEIGHT, panelSvg, (width, y) => legendSvg(chart.panels[0]?.series ?? [], width, y));
}

/**
 * A chart's SVG document, whatever its panels draw: its own font and white background, the title and subtitle centred
 * above, the panels side by side (`drawPanel` gets each one's left edge and top), then the legend (`drawLegend` gets the
 * document's width and the legend's middle line).
 */
export function chartSvg<P>(
  chart: Chart<P>,
  panelWidth: number,
  panelHeight: number,
  drawPanel: (panel: P, left: number, top: number) => string,
  drawLegend: (width: number, y: number) => string,
): string {
  const width = panelWidth * chart.panels.length;
  const height = HEADER + panelHeight + LEGEND;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif" font-size="12">`,
    `<title>${escapeXml(chart.title)}</title>`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${width / 2}" y="26" text-anchor="middle" font-size="17" font-weight="600">${escapeXml(chart.title)}</text>`,
    `<text x="${width / 2}" y="47" text-anchor="middle" fill="#555555">${escapeXml(chart.subtitle)}</text>`,
  ];
  chart.panels.forEach((panel, i) => parts.push(drawPanel(panel, i * panelWidth, HEADER)));
  parts.push(drawLegend(width, HEADER + panelHeight + 22));
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

function panelSvg(panel: ChartPanel, left: number, top: number): string {
  const x0 = left + MARGIN.left;
  const x1 = left + PANEL_WIDTH - MARGIN.right;
  const y0 = top + PANEL_HEIGHT - MARGIN.bottom;
  const y1 = top + MARGIN.top;
  const xs = panel.series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = panel.series.flatMap((s) => s.points.map((p) => p[1]));
  const xAxis = linearAxis(Math.min(...xs), Math.max(...xs), false);
  const yAxis = panel.yScale === 'log' ? logAxis(Math.min(...ys), Math.max(...ys)) : linearAxis(panel.yMin ?? 0, Math.max(...ys), true);
  const px = (x: number) => x0 + ((x - xAxis.min) / (xAxis.max - xAxis.min || 1)) * (x1 - x0);
  const py = (y: number) => y0 - ((yAxis.map(y) - yAxis.map(yAxis.min)) / (yAxis.map(yAxis.max) - yAxis.map(yAxis.min) || 1)) * (y0 - y1);
  const fx = panel.formatX ?? formatNumber;
  const fy = panel.formatY ?? formatNumber;
  const out: string[] = [`<g>`, `<text x="${(x0 + x1) / 2}" y="${top + 18}" text-anchor="middle" font-size="14" font-weight="600">${escapeXml(panel.title)}</text>`];
  for (const tick of yAxis.ticks) {
    const y = round(py(tick));
    out.push(`<line x1="${x0}" y1="${y}" x2="${x1}" y2="${y}" stroke="#e4e4e4"/>`);
    out.push(`<text x="${x0 - 6}" y="${y + 4}" text-anchor="end" fill="#333333">${escapeXml(fy(tick))}</text>`);
  }
  for (const tick of xAxis.ticks) {
    const x = round(px(tick));
    out.push(`<line x1="${x}" y1="${y0}" x2="${x}" y2="${y0 + 5}" stroke="#333333"/>`);
    out.push(`<text x="${x}" y="${y0 + 18}" text-anchor="middle" fill="#333333">${escapeXml(fx(tick))}</text>`);
  }
  out.push(`<line x1="${x0}" y1="${y0}" x2="${x1}" y2="${y0}" stroke="#333333"/>`);
  out.push(`<line x1="${x0}" y1="${y0}" x2="${x0}" y2="${y1}" stroke="#333333"/>`);
  out.push(`<text x="${(x0 + x1) / 2}" y="${y0 + 38}" text-anchor="middle">${escapeXml(panel.xLabel)}</text>`);
  const yMid = (y0 + y1) / 2;
  out.push(`<text x="${left + 16}" y="${yMid}" text-anchor="middle" transform="rotate(-90 ${left + 16} ${yMid})">${escapeXml(panel.yLabel)}</text>`);
  for (const series of panel.series) {
    const points = series.points.map(([x, y]) => `${round(px(x))},${round(py(y))}`).join(' ');
    const dash = series.dashed ? ' stroke-dasharray="7 4"' : '';
    out.push(`<polyline fill="none" stroke="${series.color}" stroke-width="2.2"${dash} points="${points}"><title>${escapeXml(series.name)}</title></polyline>`);
    for (const [x, y] of series.points) {
      out.push(`<circle cx="${round(px(x))}" cy="${round(py(y))}" r="2.6" fill="${series.color}"/>`);
    }
  }
  out.push('</g>');
  return out.join('\n');
}

function legendSvg(series: readonly ChartSeries[], width: number, y: number): string {
  return legendRowSvg(
    series.map((s) => ({
      name: s.name,
      swatchWidth: 28,
      swatch: (x: number) =>
        `<line x1="${round(x)}" y1="${y}" x2="${round(x + 28)}" y2="${y}" stroke="${s.color}" stroke-width="2.6"${s.dashed ? ' stroke-dasharray="7 4"' : ''}/>`,
    })),
    width,
    y,
  );
}

/** One legend entry: its name, and its swatch (a line, a square) drawn from `x`, `swatchWidth` px wide. */
export interface LegendEntry {
  name: string;
  swatchWidth: number;
  swatch: (x: number) => string;
}

/** A legend: the entries in one row centred in `width`, on the line `y`. */
export function legendRowSvg(entries: readonly LegendEntry[], width: number, y: number): string {
  // No text metrics without a renderer: about 7 px per character at 12 px covers the usual sans-serif faces.
  const widths = entries.map((e) => e.swatchWidth + 6 + 7 * e.name.length + 26);
  let x = Math.max(8, (width - widths.reduce((a, b) => a + b, 0)) / 2);
  const items = entries.map((e, i) => {
    const item = `${e.swatch(x)}<text x="${round(x + e.swatchWidth + 6)}" y="${y + 4}">${escapeXml(e.name)}</text>`;
    x += widths[i] as number;
    return item;
  });
  return ['<g>', ...items, '</g>'].join('\n');
}

/** An axis: its range, its ticks, and the map from a value to a linear position (identity, or log10). */
export interface Axis {
  min: number;
  max: number;
  ticks: number[];
  map: (value: number) => number;
}

/** A linear axis from `low` to `high`, widened to round ticks (1, 2 or 5 × 10^k apart) when `nice`. */
function linearAxis(low: number, high: number, nice: boolean): Axis {
  if (!(high > low)) high = low + 1;
  const raw = (high - low) / 6;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].find((m) => m * magnitude >= raw) ?? 10) * magnitude;
  const min = nice ? Math.floor(low / step) * step : low;
  const max = nice ? Math.ceil(high / step) * step : high;
  const ticks: number[] = [];
  for (let t = Math.ceil(min / step) * step; t <= max + step * 1e-9; t += step) ticks.push(Number(t.toPrecision(12)));
  return { min, max, ticks, map: (v) => v };
}

/** A log axis ticked at 1, 2 and 5 × 10^k, from the tick at or below `low` to the one at or above `high`. */
export function logAxis(low: number, high: number): Axis {
  const floor = 10 ** Math.floor(Math.log10(Math.max(low, Number.MIN_VALUE)));
  const candidates: number[] = [];
  for (let decade = floor; candidates.length === 0 || (candidates.at(-1) as number) < high; decade *= 10) {
    for (const m of [1, 2, 5]) candidates.push(Number((m * decade).toPrecision(12)));
  }
  const min = candidates.filter((t) => t <= low).at(-1) ?? floor;
  const max = candidates.find((t) => t >= high) ?? (candidates.at(-1) as number);
  const ticks = candidates.filter((t) => t >= min && t <= max);
  return { min, max, ticks, map: (v) => Math.log10(Math.max(v, min)) };
}

/** `1,234`; `0.5`; `2.5k` style is left to callers that want it. */
function formatNumber(value: number): string {
  return value.toLocaleString('en-US', { maximumFractionDigits: 3 });
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

/** Escapes the five characters XML reserves. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c] as string);
}
