// A task's attempts on a time axis, with what it waited for between them: its backoff, a retry budget's delay, and
// the time it was due but not yet running (its target held by a breaker or a Retry-After, paced, or no free worker).
import { useMemo } from 'preact/hooks';
import type uPlot from 'uplot';
import type { AttemptView, TaskView } from '../api.js';
import { Chart, axes, palette, seconds } from './chart.js';

/** The chart's rows, top to bottom. */
const LANES = ['attempt', 'backoff or Retry-After', 'retry budget', 'due, held or queued'] as const;
type Lane = 0 | 1 | 2 | 3;

/** A stretch of time on a lane, in epoch ms. */
interface Segment {
  lane: Lane;
  from: number;
  to: number;
}

/** The stretches the attempt log and the task tell of, oldest first. */
export function taskSegments(task: TaskView, attempts: AttemptView[], now: number): Segment[] {
  const segments: Segment[] = [];
  attempts.forEach((attempt, i) => {
    // Due times are reckoned on the wall clock's whole milliseconds, a duration on the monotonic clock's fractions:
    // floored, an attempt's end sits on the clock its backoff was counted from (else a 50 ms backoff shows as 49).
    const ended = Math.floor(attempt.startedAt + attempt.durationMs);
    segments.push({ lane: 0, from: attempt.startedAt, to: ended });
    if (attempt.nextAttemptAt === null) return;
    const backoffEnd = attempt.delayedBy !== null && attempt.backoffAt !== null ? attempt.backoffAt : attempt.nextAttemptAt;
    if (backoffEnd > ended) segments.push({ lane: 1, from: ended, to: backoffEnd });
    if (attempt.nextAttemptAt > backoffEnd) segments.push({ lane: 2, from: Math.max(ended, backoffEnd), to: attempt.nextAttemptAt });
    const next = attempts[i + 1];
    // Due but not started: the next attempt began later than its due time, or the task is still waiting now.
    const started = next?.startedAt ?? (task.status === 'PENDING' && task.nextAttemptAt === attempt.nextAttemptAt ? Math.max(now, task.waiting?.until ?? now) : undefined);
    if (started !== undefined && started > attempt.nextAttemptAt) segments.push({ lane: 3, from: attempt.nextAttemptAt, to: started });
  });
  return segments;
}

/** uPlot's columns: x at every segment's ends (and just after, so a lane's line breaks there), a lane's y inside its segments. */
function columns(segments: Segment[]): uPlot.AlignedData {
  const xs = [...new Set(segments.flatMap(({ from, to }) => [from, to, to + 1]))].sort((a, b) => a - b);
  const ys = LANES.map((_, lane) => xs.map((x) => (segments.some((s) => s.lane === lane && x >= s.from && x <= s.to) ? LANES.length - 1 - lane : null)));
  return [xs.map(seconds), ...ys];
}

export function TaskChart({ task, attempts }: { task: TaskView; attempts: AttemptView[] }) {
  const options = useMemo((): Omit<uPlot.Options, 'width' | 'height'> => {
    const colours = palette();
    const strokes = [colours.accent, colours.muted, colours.wait, colours.bad];
    return {
      axes: axes([{ size: 150, splits: () => LANES.map((_, i) => i), values: (_plot, splits) => splits.map((s) => LANES[LANES.length - 1 - s] ?? '') }]),
      scales: { y: { range: [-0.5, LANES.length - 0.5] } },
      cursor: { drag: { x: true, y: false } },
      series: [
        {},
        ...LANES.map((label, lane) => ({
          label,
          stroke: strokes[lane]!,
          width: lane === 0 ? 10 : 6,
          points: { show: lane === 0, size: 10, fill: strokes[lane]! },
          value: (_plot: uPlot, v: number | null) => (v === null ? '' : 'yes'),
        })),
      ],
      legend: { show: true, live: false },
    };
  }, []);
  const now = Date.now();
  const segments = taskSegments(task, attempts, now);
  const data = useMemo(() => columns(segments), [JSON.stringify(segments)]);
  if (attempts.length === 0) return null;
  const waited = (lane: Lane) => segments.filter((s) => s.lane === lane).reduce((sum, s) => sum + s.to - s.from, 0);
  return (
    <Chart label="The task's attempts and waits on a time axis" options={options} data={data} height={200}>
      {attempts.length} {attempts.length === 1 ? 'attempt' : 'attempts'}; waited {Math.round(waited(1))} ms in backoff, {Math.round(waited(2))} ms for the
      retry budget, {Math.round(waited(3))} ms due but held or queued.
    </Chart>
  );
}
