// An SVG chart of a downstream's requests over time (W3): one panel per run, the same axes in each, requests per bin
// stacked by their answer. Plain SVG, no dependency: it is read on GitHub and in an editor alike.

import { esc, tickStep } from './svg-text.mjs';

const COLOURS = { served: '#2e7d32', throttled: '#f39c12', down: '#c0392b' };
const LABELS = { served: '200 (served)', throttled: '429 over capacity', down: '503 (outage)' };

/** Requests per bin of `binMs`, by answer (0 down, 1 throttled, 2 and 3 served), from 0 to `endMs`. */
export function binRequests(times, answers, binMs, endMs) {
  const n = Math.max(1, Math.ceil(endMs / binMs));
  const bins = { down: new Array(n).fill(0), throttled: new Array(n).fill(0), served: new Array(n).fill(0) };
  for (let i = 0; i < times.length; i++) {
    const b = Math.min(n - 1, Math.floor(times[i] / binMs));
    const kind = answers[i] === 0 ? 'down' : answers[i] === 1 ? 'throttled' : 'served';
    bins[kind][b] += 1;
  }
  return bins;
}

/** The last request's time in ms (times sorted), or a binned panel's end. */
const panelEndMs = (p) => p.endMs ?? (p.times.length === 0 ? 0 : p.times[p.times.length - 1]);

/**
 * The chart's input with each panel's requests binned (`bins`, `endMs`) instead of one time and answer per request:
 * small enough to keep in a results file and draw again with {@link rateChartSvg}.
 */
export function binnedChart({ panels, binMs = 100, ...rest }) {
  const endMs = Math.max(...panels.map(panelEndMs)) + binMs;
  return {
    ...rest,
    binMs,
    panels: panels.map(({ times, answers, ...panel }) => ({ ...panel, endMs: panelEndMs({ times }), bins: binRequests(times, answers, binMs, endMs) })),
  };
}

/**
 * The chart. `panels`: `[{ title, times, answers, recoveredAtMs, limitPerSecond?, spans? }]` (times in ms since the
 * outage began; `spans`: `[{ state, fromMs, toMs }]`, the breaker's OPEN and HALF_OPEN periods, shaded; `allowedRate`:
 * `[{ ms, perSecond }]`, the rate adaptive throttling allowed, as polled). Every panel gets the same x range (the
 * longest run) and its own y range. A panel may come binned instead (`bins`, `endMs`; see {@link binnedChart}).
 */
export function rateChartSvg({ title, panels, binMs = 100 }) {
  const width = 960;
  const panelHeight = 260;
  const margin = { left: 70, right: 20, top: 56, bottom: 46 };
  const gap = 64;
  const plotW = width - margin.left - margin.right;
  const endMs = Math.max(...panels.map(panelEndMs)) + binMs;
  const binned = panels.map((p) => p.bins ?? binRequests(p.times, p.answers, binMs, endMs));
  // Each panel its own y range: a storm's thousands per second would flatten a limited run to a line at the bottom.
  const yRanges = panels.map((p, i) => {
    const b = binned[i];
    const yMax = Math.max(
      1,
      ...b.served.map((s, k) => s + b.throttled[k] + b.down[k]),
      p.limitPerSecond ? (p.limitPerSecond * binMs) / 1000 : 0,
    );
    const step = tickStep(yMax, 5);
    return { step, top: Math.ceil(yMax / step) * step };
  });
  const xStepS = tickStep(endMs / 1000, 12);
  const height = margin.top + panels.length * panelHeight + (panels.length - 1) * gap + margin.bottom;
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`);
  out.push(`<text x="${width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${esc(title)}</text>`);
  // Legend.
  let lx = margin.left;
  for (const [kind, w] of /** @type {[string, number][]} */ ([['served', 110], ['throttled', 135], ['down', 110]])) {
    out.push(`<rect x="${lx}" y="32" width="12" height="12" fill="${COLOURS[kind]}"/>`);
    out.push(`<text x="${lx + 16}" y="42">${esc(LABELS[kind])}</text>`);
    lx += w;
  }
  out.push(`<line x1="${lx}" y1="38" x2="${lx + 24}" y2="38" stroke="#1f4e9c" stroke-width="2" stroke-dasharray="6 3"/>`);
  out.push(`<text x="${lx + 30}" y="42">configured rate limit</text>`);
  lx += 170;
  out.push(`<line x1="${lx}" y1="38" x2="${lx + 24}" y2="38" stroke="#555" stroke-dasharray="2 3"/>`);
  out.push(`<text x="${lx + 30}" y="42">recovery</text>`);
  lx += 100;
  out.push(`<rect x="${lx}" y="32" width="12" height="12" fill="#c0392b" fill-opacity="0.15"/>`);
  out.push(`<text x="${lx + 16}" y="42">breaker open</text>`);
  lx += 110;
  out.push(`<line x1="${lx}" y1="38" x2="${lx + 24}" y2="38" stroke="#8e44ad" stroke-width="1.5"/>`);
  out.push(`<text x="${lx + 30}" y="42">allowed rate</text>`);

  panels.forEach((panel, index) => {
    const top = margin.top + index * (panelHeight + gap) + 18;
    const h = panelHeight - 18;
    const x = (ms) => margin.left + (ms / endMs) * plotW;
    const { step: yStep, top: yTop } = yRanges[index];
    const y = (v) => top + h - (Math.min(v, yTop) / yTop) * h;
    const bins = binned[index];
    out.push(`<text x="${margin.left}" y="${top - 6}" font-size="13" font-weight="bold">${esc(panel.title)}</text>`);
    // Grid and y axis.
    for (let v = 0; v <= yTop + 1e-9; v += yStep) {
      out.push(`<line x1="${margin.left}" y1="${y(v)}" x2="${margin.left + plotW}" y2="${y(v)}" stroke="#e5e5e5"/>`);
      out.push(`<text x="${margin.left - 6}" y="${y(v) + 4}" text-anchor="end">${v}</text>`);
    }
    out.push(
      `<text transform="translate(${margin.left - 48} ${top + h / 2}) rotate(-90)" text-anchor="middle">requests per ${binMs} ms</text>`,
    );
    // The breaker's open and half-open periods, behind the requests.
    for (const span of panel.spans ?? []) {
      const fill = span.state === 'OPEN' ? '#c0392b' : '#f1c40f';
      out.push(`<rect x="${x(span.fromMs).toFixed(1)}" y="${top}" width="${Math.max(1, x(span.toMs) - x(span.fromMs)).toFixed(1)}" height="${h}" fill="${fill}" fill-opacity="0.10"/>`);
    }
    // Stacked step areas, drawn top layer first: total (outage colour), then throttled + served, then served.
    const layers = [
      ['down', bins.served.map((s, i) => s + bins.throttled[i] + bins.down[i])],
      ['throttled', bins.served.map((s, i) => s + bins.throttled[i])],
      ['served', bins.served],
    ];
    for (const [kind, heights] of layers) {
      let d = `M${x(0).toFixed(1)},${y(0).toFixed(1)}`;
      heights.forEach((v, i) => {
        d += `L${x(i * binMs).toFixed(1)},${y(v).toFixed(1)}L${x((i + 1) * binMs).toFixed(1)},${y(v).toFixed(1)}`;
      });
      d += `L${x(heights.length * binMs).toFixed(1)},${y(0).toFixed(1)}Z`;
      out.push(`<path d="${d}" fill="${COLOURS[kind]}" stroke="none"/>`);
    }
    // The rate adaptive throttling allowed, as polled (per second, drawn per bin).
    if (panel.allowedRate?.length > 0) {
      let d = '';
      panel.allowedRate.forEach((point, i) => {
        const next = panel.allowedRate[i + 1]?.ms ?? endMs;
        if (point.perSecond === null) return;
        const v = (point.perSecond * binMs) / 1000;
        d += `M${x(Math.max(0, point.ms)).toFixed(1)},${y(v).toFixed(1)}H${x(Math.min(endMs, next)).toFixed(1)}`;
      });
      if (d !== '') out.push(`<path d="${d}" fill="none" stroke="#8e44ad" stroke-width="1.5"/>`);
    }
    if (panel.limitPerSecond) {
      const v = (panel.limitPerSecond * binMs) / 1000;
      out.push(`<line x1="${margin.left}" y1="${y(v)}" x2="${margin.left + plotW}" y2="${y(v)}" stroke="#1f4e9c" stroke-width="2" stroke-dasharray="6 3"/>`);
      // Under the line when it runs along the top of the panel, where the title is.
      const labelY = y(v) - top < 16 ? y(v) + 15 : y(v) - 5;
      out.push(`<text x="${margin.left + plotW - 4}" y="${labelY}" text-anchor="end" fill="#1f4e9c">${panel.limitPerSecond}/s = ${v} per ${binMs} ms</text>`);
    }
    if (panel.recoveredAtMs !== null && panel.recoveredAtMs !== undefined) {
      out.push(`<line x1="${x(panel.recoveredAtMs)}" y1="${top}" x2="${x(panel.recoveredAtMs)}" y2="${top + h}" stroke="#555" stroke-dasharray="2 3"/>`);
    }
    // x axis.
    out.push(`<line x1="${margin.left}" y1="${top + h}" x2="${margin.left + plotW}" y2="${top + h}" stroke="#333"/>`);
    out.push(`<line x1="${margin.left}" y1="${top}" x2="${margin.left}" y2="${top + h}" stroke="#333"/>`);
    for (let s = 0; s * 1000 <= endMs; s += xStepS) {
      out.push(`<line x1="${x(s * 1000)}" y1="${top + h}" x2="${x(s * 1000)}" y2="${top + h + 4}" stroke="#333"/>`);
      out.push(`<text x="${x(s * 1000)}" y="${top + h + 17}" text-anchor="middle">${s}</text>`);
    }
    out.push(`<text x="${margin.left + plotW / 2}" y="${top + h + 34}" text-anchor="middle">seconds since the outage began (the first request)</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
