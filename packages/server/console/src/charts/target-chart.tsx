// A target's breaker state and allowed rate over this instance's last hour (GET /console/history?targetKey=…).
import { useMemo } from 'preact/hooks';
import uPlot from 'uplot';
import { api, query, type ConsoleHistory } from '../api.js';
import { ErrorLine, useLoad } from '../ui.js';
import { Chart, axes, palette, seconds } from './chart.js';

const STATES = ['CLOSED', 'HALF_OPEN', 'OPEN'] as const;

export function TargetChart({ targetKey }: { targetKey: string }) {
  const history = useLoad(() => api<ConsoleHistory>('GET', `/console/history${query({ targetKey })}`), [targetKey], 5_000);
  // Each tenant's target of this key has its own series; the console's key sees the default tenant's first.
  const target = history.data?.targets.find((t) => t.tenantId === 'default') ?? history.data?.targets[0];
  const options = useMemo((): Omit<uPlot.Options, 'width' | 'height'> => {
    const colours = palette();
    return {
      axes: axes([
        { scale: 'rate', label: 'allowed / s', size: 60 },
        { scale: 'breaker', side: 1, size: 90, grid: { show: false }, splits: () => [0, 1, 2], values: (_plot, splits) => splits.map((s) => STATES[s] ?? '') },
      ]),
      scales: { rate: { range: (_plot, _min, max) => [0, Math.max(1, max * 1.1)] }, breaker: { range: [-0.2, 2.2] } },
      series: [
        {},
        { label: 'allowed rate', scale: 'rate', stroke: colours.accent, width: 2, value: (_plot, v) => (v === null ? 'no limit' : `${v.toFixed(1)}/s`) },
        {
          label: 'breaker',
          scale: 'breaker',
          stroke: colours.bad,
          width: 2,
          paths: uPlot.paths.stepped!({ align: 1 }),
          value: (_plot, v) => (v === null ? '–' : (STATES[v] ?? '')),
        },
      ],
    };
  }, []);
  const view = history.data;
  const data = useMemo((): uPlot.AlignedData | undefined => {
    if (view === undefined) return undefined;
    const levels = target?.breaker.map((state) => (state === null ? null : STATES.indexOf(state))) ?? view.at.map(() => null);
    return [view.at.map(seconds), target?.allowedRatePerSecond ?? view.at.map(() => null), levels];
  }, [view]);
  if (view === undefined || data === undefined) return <ErrorLine error={history.error} />;
  const current = target?.breaker.at(-1) ?? null;
  const changes = target === undefined ? 0 : target.breaker.filter((state, i) => i > 0 && state !== null && state !== target.breaker[i - 1]).length;
  return (
    <>
      <ErrorLine error={history.error} />
      {target === undefined ? (
        <p>This instance has not called this target in the last hour.</p>
      ) : (
        <Chart label={`Breaker state and allowed rate of ${targetKey}, last hour`} options={options} data={data}>
          This instance's view, sampled every {view.intervalMs / 1_000} s: the breaker is <span data-breaker-now>{current ?? 'unknown'}</span> now and changed
          state {changes} {changes === 1 ? 'time' : 'times'}; no rate line where the target had no rate limit.
        </Chart>
      )}
    </>
  );
}
