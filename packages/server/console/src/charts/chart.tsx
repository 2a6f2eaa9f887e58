// A chart drawn by uPlot (a small canvas charting library), sized to its container and redrawn when its data changes.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

/** The colours of the page's palette (styles.css), read when a chart is made: light or dark as the page is. */
export function palette(): Record<'text' | 'muted' | 'line' | 'accent' | 'good' | 'bad' | 'wait', string> {
  const style = getComputedStyle(document.documentElement);
  const read = (name: string) => style.getPropertyValue(`--${name}`).trim();
  return { text: read('text'), muted: read('muted'), line: read('line'), accent: read('accent'), good: read('good'), bad: read('bad'), wait: read('wait') };
}

/** Axes in the page's colours: time along x (seconds, as uPlot reads it), and a value axis for each y scale given. */
export function axes(yAxes: uPlot.Axis[] = [{}]): uPlot.Axis[] {
  const colours = palette();
  const styled = (axis: uPlot.Axis): uPlot.Axis => ({
    stroke: colours.muted,
    grid: { stroke: colours.line, width: 1 },
    ticks: { stroke: colours.line, width: 1 },
    ...axis,
  });
  return [styled({}), ...yAxes.map(styled)];
}

/** Epoch ms as uPlot's x (epoch seconds). */
export const seconds = (ms: number) => ms / 1_000;

const HEIGHT = 220;

/**
 * A uPlot chart of `data` (x first, then one array per series), as wide as its container. `label` names it for
 * screen readers; `children` is its text alternative (a summary or a table) shown beneath it.
 */
export function Chart(props: { label: string; options: Omit<uPlot.Options, 'width' | 'height'>; data: uPlot.AlignedData; height?: number; children?: ComponentChildren }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot>();
  const height = props.height ?? HEIGHT;
  // Made once (a new plot per data change would flicker and lose the cursor), fed new data after.
  useEffect(() => {
    const element = box.current;
    if (element === null) return;
    const made = new uPlot({ ...props.options, width: Math.max(200, element.clientWidth), height }, props.data, element);
    plot.current = made;
    // Follows the container: the console is usable from a phone's 390 px up.
    const resized = new ResizeObserver(() => made.setSize({ width: Math.max(200, element.clientWidth), height }));
    resized.observe(element);
    return () => {
      resized.disconnect();
      made.destroy();
      plot.current = undefined;
    };
  }, [props.options]);
  useEffect(() => plot.current?.setData(props.data), [props.data]);
  return (
    <figure class="chart">
      <div ref={box} role="img" aria-label={props.label} />
      {props.children !== undefined && <figcaption>{props.children}</figcaption>}
    </figure>
  );
}
