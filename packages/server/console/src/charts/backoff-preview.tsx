// The delays a policy gives before each retry, with the range its jitter draws from: @retryd/core's own delay math
// (computeDelay with the lowest and highest draw), so the preview is what the service will do.
import { baseDelay, computeDelay, type RetryPolicy } from '@retryd/core';
import { useMemo } from 'preact/hooks';
import type uPlot from 'uplot';
import { duration } from '../ui.js';
import { Chart, axes, palette } from './chart.js';

/** Retries shown at most (a policy may allow thousands). */
const MOST_RETRIES = 50;
/** The highest draw `Math.random` can give. */
const HIGHEST = 1 - 2 ** -53;

/** One retry's delay: its base (no jitter) and the lowest and highest its jitter can draw, in ms. */
export interface DelayRange {
  retry: number;
  base: number;
  low: number;
  high: number;
}

/**
 * The delay before each retry of `policy` (at most {@link MOST_RETRIES}): each bound follows its own chain of
 * previous delays, as DECORRELATED jitter reads the delay before.
 */
export function delayRanges(policy: Pick<RetryPolicy, 'maxAttempts' | 'backoffType' | 'initialDelayMs' | 'multiplier' | 'maxDelayMs' | 'jitterType'>): DelayRange[] {
  const ranges: DelayRange[] = [];
  let low = 0;
  let high = 0;
  for (let retry = 1; retry < Math.min(policy.maxAttempts, MOST_RETRIES + 1); retry++) {
    low = computeDelay(policy, retry, low, () => 0);
    high = computeDelay(policy, retry, high, () => HIGHEST);
    ranges.push({ retry, base: baseDelay(policy, retry), low, high });
  }
  return ranges;
}

export function BackoffPreview({ policy }: { policy: RetryPolicy }) {
  const ranges = useMemo(() => delayRanges(policy), [JSON.stringify(policy)]);
  const options = useMemo((): Omit<uPlot.Options, 'width' | 'height'> => {
    const colours = palette();
    return {
      axes: [
        { ...axes()[0], label: 'retry', incrs: [1, 2, 5, 10, 20, 50] },
        { ...axes([{ label: 'delay', size: 70, values: (_plot, splits) => splits.map((ms) => duration(ms)) }])[1] },
      ],
      scales: { x: { time: false }, y: { range: (_plot, _min, max) => [0, Math.max(1, max * 1.05)] } },
      series: [
        { label: 'retry' },
        { label: 'lowest', stroke: colours.muted, width: 1, value: (_plot, v) => duration(v) },
        { label: 'highest', stroke: colours.muted, width: 1, value: (_plot, v) => duration(v) },
        { label: 'without jitter', stroke: colours.accent, width: 2, value: (_plot, v) => duration(v) },
      ],
      bands: [{ series: [2, 1], fill: `${colours.accent}33` }],
    };
  }, []);
  const data = useMemo((): uPlot.AlignedData => [ranges.map((r) => r.retry), ranges.map((r) => r.low), ranges.map((r) => r.high), ranges.map((r) => r.base)], [ranges]);
  if (ranges.length === 0) return <p>This policy makes one attempt and no retry.</p>;
  const most = ranges.reduce((sum, r) => sum + r.high, 0);
  return (
    <>
      <Chart label="Delay before each retry, with its jitter range" options={options} data={data}>
        {policy.jitterType === 'NONE' ? 'No jitter: each delay is exact.' : `${policy.jitterType} jitter: each delay is drawn in the shaded range.`} At most{' '}
        {duration(most)} of delays in all{policy.maxAttempts - 1 > MOST_RETRIES ? ` over the first ${MOST_RETRIES} retries` : ''}.
      </Chart>
      <details>
        <summary>Delays as a table</summary>
        <table class="backoff-table">
          <thead>
            <tr>
              <th scope="col" class="num">Retry</th>
              <th scope="col" class="num">Without jitter</th>
              <th scope="col" class="num">Lowest</th>
              <th scope="col" class="num">Highest</th>
            </tr>
          </thead>
          <tbody>
            {ranges.map((r) => (
              <tr key={r.retry}>
                <th scope="row" class="num">
                  {r.retry}
                </th>
                <td class="num">{duration(r.base)}</td>
                <td class="num">{duration(r.low)}</td>
                <td class="num">{duration(r.high)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </>
  );
}
