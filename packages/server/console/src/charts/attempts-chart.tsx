// The overview's chart: attempts per second by outcome over this instance's last hour (GET /console/history).
import { useMemo } from 'preact/hooks';
import type uPlot from 'uplot';
import { api, type ConsoleHistory } from '../api.js';
import { ErrorLine, useLoad } from '../ui.js';
import { Chart, axes, palette, seconds } from './chart.js';

/** Every 5 s: the chart's last point is "now", the rates since the last 10 s sample. */
const POLL_MS = 5_000;

/** An outcome's colour: good, waiting or bad, as its badge. */
function colourOf(outcome: string, colours: ReturnType<typeof palette>): string {
  if (outcome === 'succeeded') return colours.good;
  if (outcome === 'retry_scheduled') return colours.wait;
  if (outcome === 'failed' || outcome === 'exhausted') return colours.bad;
  if (outcome === 'lease_expired') return colours.accent;
  return colours.muted;
}

export function AttemptsChart() {
  const history = useLoad(() => api<ConsoleHistory>('GET', '/console/history'), [], POLL_MS);
  const outcomes = Object.keys(history.data?.attemptsPerSecond ?? {}).sort();
  const names = outcomes.join(',');
  const options = useMemo((): Omit<uPlot.Options, 'width' | 'height'> => {
    const colours = palette();
    return {
      axes: axes([{ label: 'attempts / s', size: 60 }]),
      scales: { y: { range: (_plot, _min, max) => [0, Math.max(1, max)] } },
      series: [{}, ...outcomes.map((outcome) => ({ label: outcome, stroke: colourOf(outcome, colours), width: 2, value: (_plot: uPlot, v: number | null) => (v === null ? '–' : v.toFixed(2)) }))],
    };
  }, [names]);
  const view = history.data;
  const data = useMemo((): uPlot.AlignedData | undefined => {
    if (view === undefined) return undefined;
    return [view.at.map(seconds), ...outcomes.map((outcome) => view.attemptsPerSecond[outcome] ?? [])];
  }, [view]);
  if (view === undefined || data === undefined) return <ErrorLine error={history.error} />;
  const minutes = Math.round((view.at.length * view.intervalMs) / 60_000);
  return (
    <>
      <ErrorLine error={history.error} />
      {outcomes.length === 0 ? (
        <p>No attempts yet.</p>
      ) : (
        <Chart label="Attempts per second by outcome, last hour" options={options} data={data}>
          This instance, sampled every {view.intervalMs / 1_000} s; {minutes < 60 ? `the last ${minutes} min (since it started)` : 'the last hour'}.
        </Chart>
      )}
    </>
  );
}
