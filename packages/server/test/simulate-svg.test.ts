import { parse, validate } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { simulateAmplification } from '../src/simulate/amplification-model.js';
import { amplificationSvg, MECHANISM_STYLE } from '../src/simulate/amplification-report.js';
import { simulateContention } from '../src/simulate/contention-model.js';
import { contentionSvg, STRATEGY_STYLE } from '../src/simulate/contention-report.js';
import { lineChartSvg } from '../src/simulate/line-chart-svg.js';

// fast-xml-parser's validator checks well-formedness: one root, every tag closed and nested, attributes quoted,
// entities escaped.
function expectWellFormedSvg(svg: string): { svg: Record<string, unknown> } {
  expect(validate(svg)).toBe(true);
  const document = parse(svg, { ignoreAttributes: false, attributeNamePrefix: '' }) as { svg: Record<string, unknown> };
  expect(Object.keys(document)).toEqual(['svg']);
  expect(document.svg.xmlns).toBe('http://www.w3.org/2000/svg');
  return document;
}

describe('the simulation charts', () => {
  it('contention: a well-formed SVG with two panels, one line per strategy in each, and a legend naming every strategy', () => {
    const svg = contentionSvg(simulateContention({ clients: [10, 20, 30], runs: 3 }), { seed: 1, runs: 3 });
    expectWellFormedSvg(svg);
    expect(svg.match(/<polyline /g)).toHaveLength(2 * 5);
    for (const title of ['Mean calls (writes) per run', 'Mean completion time', 'calls (log scale)', 'seconds (log scale)', 'clients']) {
      expect(svg).toContain(`>${title}</text>`);
    }
    for (const style of Object.values(STRATEGY_STYLE)) expect(svg).toContain(`>${style.label}</text>`);
    expect(svg).not.toMatch(/NaN|Infinity|undefined/);
  });

  it('amplification: a well-formed SVG with a line per mechanism in each panel', () => {
    const svg = amplificationSvg(simulateAmplification({ durationMs: 2_000 }), { seed: 1, clients: 100, durationMs: 2_000 });
    expectWellFormedSvg(svg);
    expect(svg.match(/<polyline /g)).toHaveLength(2 * 4);
    for (const style of Object.values(MECHANISM_STYLE)) expect(svg).toContain(`>${style.label}</text>`);
    expect(svg).not.toMatch(/NaN|Infinity|undefined/);
  });

  it('escapes text, so any title or name keeps the document well-formed', () => {
    const svg = lineChartSvg({
      title: 'a < b & "c"',
      subtitle: "it's",
      panels: [{ title: '<g>', xLabel: 'x', yLabel: 'y', series: [{ name: 'A&B', color: '#000', points: [[0, 1], [1, 2]] }] }],
    });
    expectWellFormedSvg(svg);
    expect(svg).toContain('a &lt; b &amp; &quot;c&quot;');
  });

  it('draws a flat line, a single point and a log axis over one value without dividing by zero', () => {
    const svg = lineChartSvg({
      title: 't',
      subtitle: 's',
      panels: [
        { title: 'flat', xLabel: 'x', yLabel: 'y', series: [{ name: 'a', color: '#000', points: [[1, 5], [2, 5]] }] },
        { title: 'one', xLabel: 'x', yLabel: 'y', yScale: 'log', series: [{ name: 'a', color: '#000', points: [[3, 7]] }] },
      ],
    });
    expectWellFormedSvg(svg);
    expect(svg).not.toMatch(/NaN|Infinity/);
  });
});
