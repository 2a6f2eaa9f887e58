// Two small SVG charts for the report, hand-written like bench/service/lib/rate-chart.mjs: plain SVG that GitHub and
// an editor show alike, with no browser and no dependency to render it.

import { esc, tickStep } from '../service/lib/svg-text.mjs';

const COLOURS = { retryd: '#1f4e9c', peer: '#e67e22', ceiling: '#7f8c8d' };
const SERIES = ['#1f4e9c', '#c0392b', '#2e7d32', '#8e44ad', '#e67e22'];
const num = (n, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits });

/**
 * Horizontal bars, one per contender: `bars: [{ label, value, kind: 'retryd'|'peer'|'ceiling', min?, max? }]`;
 * `min`/`max` (the range over rounds) draw as a whisker.
 */
export function barChartSvg({ title, unit, bars }) {
  const width = 960;
  const barH = 26;
  const gap = 10;
  const margin = { left: 380, right: 90, top: 56, bottom: 44 };
  const plotW = width - margin.left - margin.right;
  const height = margin.top + bars.length * (barH + gap) + margin.bottom;
  const top = Math.max(1, ...bars.map((b) => Math.max(b.value ?? 0, b.max ?? 0)));
  const step = tickStep(top, 6);
  const xMax = Math.ceil(top / step) * step;
  const x = (v) => margin.left + (Math.max(0, v) / xMax) * plotW;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${esc(title)}</text>`,
  ];
  let lx = margin.left;
  for (const [kind, label] of [['retryd', 'retryd'], ['peer', 'peer'], ['ceiling', 'ceiling (not a peer)']]) {
    out.push(`<rect x="${lx}" y="32" width="12" height="12" fill="${COLOURS[kind]}"/><text x="${lx + 16}" y="42">${esc(label)}</text>`);
    lx += 150;
  }
  const plotBottom = height - margin.bottom;
  for (let v = 0; v <= xMax + 1e-9; v += step) {
    out.push(`<line x1="${x(v)}" y1="${margin.top}" x2="${x(v)}" y2="${plotBottom}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${x(v)}" y="${plotBottom + 16}" text-anchor="middle">${num(v)}</text>`);
  }
  out.push(`<text x="${margin.left + plotW / 2}" y="${plotBottom + 34}" text-anchor="middle">${esc(unit)}</text>`);
  bars.forEach((b, i) => {
    const y = margin.top + i * (barH + gap) + gap / 2;
    out.push(`<text x="${margin.left - 8}" y="${y + barH / 2 + 4}" text-anchor="end">${esc(b.label)}</text>`);
    if (!Number.isFinite(b.value)) {
      out.push(`<text x="${margin.left + 4}" y="${y + barH / 2 + 4}" fill="#c0392b">no figure</text>`);
      return;
    }
    out.push(`<rect x="${margin.left}" y="${y}" width="${(x(b.value) - margin.left).toFixed(1)}" height="${barH}" fill="${COLOURS[b.kind] ?? COLOURS.peer}"/>`);
    if (Number.isFinite(b.min) && Number.isFinite(b.max) && b.max > b.min) {
      const cy = y + barH / 2;
      out.push(`<path d="M${x(b.min).toFixed(1)},${cy}H${x(b.max).toFixed(1)}M${x(b.min).toFixed(1)},${cy - 6}V${cy + 6}M${x(b.max).toFixed(1)},${cy - 6}V${cy + 6}" stroke="#222" stroke-width="1.5" fill="none"/>`);
    }
    out.push(`<text x="${(Math.max(x(b.value), Number.isFinite(b.max) ? x(b.max) : 0) + 6).toFixed(1)}" y="${y + barH / 2 + 4}">${num(b.value)}</text>`);
  });
  out.push(`<line x1="${margin.left}" y1="${margin.top}" x2="${margin.left}" y2="${plotBottom}" stroke="#333"/>`);
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/**
 * Lines over categories on a log scale (a distribution: one line per series through its percentiles).
 * `series: [{ name, values }]`, `values[i]` at `xLabels[i]`; values ≤ 0 are left out (no log of them).
 */
export function logLineChartSvg({ title, xLabels, yLabel, series }) {
  const width = 960;
  const height = 420;
  const margin = { left: 80, right: 200, top: 48, bottom: 50 };
  const plotW = width - margin.left - margin.right;
  const plotH = height - margin.top - margin.bottom;
  const all = series.flatMap((s) => s.values).filter((v) => Number.isFinite(v) && v > 0);
  const lo = 10 ** Math.floor(Math.log10(Math.min(...all, 1)));
  const hi = 10 ** Math.ceil(Math.log10(Math.max(...all, 10)));
  const x = (i) => margin.left + (xLabels.length === 1 ? plotW / 2 : (i / (xLabels.length - 1)) * plotW);
  const y = (v) => margin.top + plotH - ((Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * plotH;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${esc(title)}</text>`,
  ];
  for (let decade = lo; decade <= hi * 1.0001; decade *= 10) {
    out.push(`<line x1="${margin.left}" y1="${y(decade).toFixed(1)}" x2="${margin.left + plotW}" y2="${y(decade).toFixed(1)}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${margin.left - 6}" y="${(y(decade) + 4).toFixed(1)}" text-anchor="end">${num(decade, 3)}</text>`);
  }
  xLabels.forEach((label, i) => out.push(`<text x="${x(i).toFixed(1)}" y="${margin.top + plotH + 18}" text-anchor="middle">${esc(label)}</text>`));
  out.push(`<text transform="translate(${margin.left - 56} ${margin.top + plotH / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>`);
  out.push(`<text x="${margin.left + plotW / 2}" y="${height - 10}" text-anchor="middle">percentile</text>`);
  series.forEach((s, k) => {
    const colour = SERIES[k % SERIES.length];
    const points = s.values.map((v, i) => [i, v]).filter(([, v]) => Number.isFinite(v) && v > 0);
    if (points.length > 0) {
      out.push(`<path d="${points.map(([i, v], n) => `${n === 0 ? 'M' : 'L'}${x(i).toFixed(1)},${y(v).toFixed(1)}`).join('')}" fill="none" stroke="${colour}" stroke-width="2"/>`);
      for (const [i, v] of points) out.push(`<circle cx="${x(i).toFixed(1)}" cy="${y(v).toFixed(1)}" r="3" fill="${colour}"/>`);
    }
    const ly = margin.top + 10 + k * 20;
    out.push(`<line x1="${margin.left + plotW + 16}" y1="${ly}" x2="${margin.left + plotW + 40}" y2="${ly}" stroke="${colour}" stroke-width="2"/>`);
    out.push(`<text x="${margin.left + plotW + 46}" y="${ly + 4}">${esc(s.name)}</text>`);
  });
  out.push(`<line x1="${margin.left}" y1="${margin.top + plotH}" x2="${margin.left + plotW}" y2="${margin.top + plotH}" stroke="#333"/>`);
  out.push(`<line x1="${margin.left}" y1="${margin.top}" x2="${margin.left}" y2="${margin.top + plotH}" stroke="#333"/>`);
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
