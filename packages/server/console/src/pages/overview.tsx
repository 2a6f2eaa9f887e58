// Overview: the service's numbers every 2 s (GET /console/stats, the /metrics counters as JSON) and its targets.
import { useRef } from 'preact/hooks';
import { api, type ConsoleStats, type Page, type TargetView, type TaskStatus } from '../api.js';
import { AttemptsChart } from '../charts/attempts-chart.js';
import { ErrorLine, PageTitle, StatusBadge, duration, time, useLoad } from '../ui.js';

const POLL_MS = 2_000;
const STATUSES: TaskStatus[] = ['PENDING', 'IN_FLIGHT', 'SUCCEEDED', 'FAILED', 'EXHAUSTED', 'CANCELLED'];

/** Two readings of the totals, the rates between them. */
interface Rates {
  seconds: number;
  attemptsPerSecond: Record<string, number>;
  /** Succeeded attempts over all attempts in the interval; null when there were none. */
  successRatio: number | null;
  /** Mean schedule lag of the interval's attempts, in ms; null when there were none. */
  lagMs: number | null;
}

function ratesBetween(before: ConsoleStats | undefined, now: ConsoleStats): Rates | undefined {
  if (before === undefined || now.at <= before.at) return undefined;
  const seconds = (now.at - before.at) / 1_000;
  const attemptsPerSecond: Record<string, number> = {};
  let all = 0;
  for (const [outcome, total] of Object.entries(now.attempts)) {
    const delta = Math.max(0, total - (before.attempts[outcome] ?? 0));
    attemptsPerSecond[outcome] = delta / seconds;
    all += delta;
  }
  const succeeded = Math.max(0, (now.attempts.succeeded ?? 0) - (before.attempts.succeeded ?? 0));
  const lagCount = now.scheduleLag.count - before.scheduleLag.count;
  const lagMs = lagCount > 0 ? ((now.scheduleLag.sumSeconds - before.scheduleLag.sumSeconds) / lagCount) * 1_000 : null;
  return { seconds, attemptsPerSecond, successRatio: all === 0 ? null : succeeded / all, lagMs };
}

function Stat({ label, value, note }: { label: string; value: string; note?: string }) {
  return (
    <div class="stat">
      <dt>{label}</dt>
      <dd>
        <span class="value">{value}</span>
        {note !== undefined && <span class="note">{note}</span>}
      </dd>
    </div>
  );
}

function Numbers() {
  const previous = useRef<ConsoleStats>();
  const rates = useRef<Rates>();
  const stats = useLoad(
    async () => {
      const now = await api<ConsoleStats>('GET', '/console/stats');
      rates.current = ratesBetween(previous.current, now) ?? rates.current;
      previous.current = now;
      return now;
    },
    [],
    POLL_MS,
  );
  const now = stats.data;
  if (now === undefined) return <ErrorLine error={stats.error} />;
  const rate = rates.current;
  const totalAttempts = Object.values(now.attempts).reduce((sum, n) => sum + n, 0);
  const overallRatio = totalAttempts === 0 ? null : (now.attempts.succeeded ?? 0) / totalAttempts;
  const ratio = rate?.successRatio ?? overallRatio;
  const lagMs = rate?.lagMs ?? (now.scheduleLag.count === 0 ? null : (now.scheduleLag.sumSeconds / now.scheduleLag.count) * 1_000);
  const outcomes = Object.keys(now.attempts).sort();
  return (
    <>
      <ErrorLine error={stats.error} />
      <section aria-labelledby="numbers-title">
        <h2 id="numbers-title">Now</h2>
        <p class="hint">Updated every 2 s; last read {time(now.at)}.</p>
        <dl class="stats">
          <Stat label="Success ratio" value={ratio === null ? '–' : `${(ratio * 100).toFixed(1)} %`} note={rate?.successRatio == null ? 'since start' : 'last 2 s'} />
          <Stat label="Attempts in flight" value={String(now.inFlight)} />
          <Stat label="Dead letters" value={String((now.tasks.FAILED ?? 0) + (now.tasks.EXHAUSTED ?? 0))} note={`${now.deadLetters} since start`} />
          <Stat label="Schedule lag" value={duration(lagMs)} note={rate?.lagMs == null ? 'mean since start' : 'mean, last 2 s'} />
        </dl>
      </section>
      <div class="columns">
        <section aria-labelledby="attempts-title">
          <h2 id="attempts-title">Attempts by outcome</h2>
          {outcomes.length === 0 ? (
            <p>No attempts yet.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Outcome</th>
                  <th scope="col" class="num">Per second</th>
                  <th scope="col" class="num">Since start</th>
                </tr>
              </thead>
              <tbody>
                {outcomes.map((outcome) => (
                  <tr key={outcome}>
                    <th scope="row">
                      <StatusBadge status={outcome} />
                    </th>
                    <td class="num">{(rate?.attemptsPerSecond[outcome] ?? 0).toFixed(1)}</td>
                    <td class="num" data-outcome={outcome}>
                      {now.attempts[outcome]}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
        <section aria-labelledby="depth-title">
          <h2 id="depth-title">Tasks by status</h2>
          <table>
            <thead>
              <tr>
                <th scope="col">Status</th>
                <th scope="col" class="num">Tasks</th>
              </tr>
            </thead>
            <tbody>
              {STATUSES.map((status) => (
                <tr key={status}>
                  <th scope="row">
                    <a href={`#/tasks?status=${status}`}>{status}</a>
                  </th>
                  <td class="num" data-status={status}>
                    {now.tasks[status] ?? '–'}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      </div>
    </>
  );
}

/** The targets and their health, as in the Targets page. */
export function TargetTable({ targets }: { targets: TargetView[] }) {
  if (targets.length === 0) return <p>No targets yet: a target appears once a task names it.</p>;
  return (
    <table>
      <thead>
        <tr>
          <th scope="col">Target</th>
          <th scope="col">Breaker</th>
          <th scope="col">Held until</th>
          <th scope="col" class="num">In flight</th>
          <th scope="col" class="num">Due tasks</th>
          <th scope="col" class="num">Allowed rate</th>
        </tr>
      </thead>
      <tbody>
        {targets.map((target) => (
          <tr key={target.targetKey}>
            <th scope="row">
              <a href={`#/targets/${encodeURIComponent(target.targetKey)}`}>{target.targetKey}</a>
            </th>
            <td>
              <StatusBadge status={target.breaker.state} />
            </td>
            <td>{time(target.heldUntil)}</td>
            <td class="num">{target.inFlight}</td>
            <td class="num">{target.dueTasks}</td>
            <td class="num">{target.allowedRatePerSecond === null ? 'unlimited' : `${target.allowedRatePerSecond.toFixed(1)}/s`}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function OverviewPage() {
  const targets = useLoad(() => api<Page<TargetView>>('GET', '/targets?limit=100'), [], POLL_MS);
  return (
    <>
      <PageTitle>Overview</PageTitle>
      <Numbers />
      <section aria-labelledby="history-title">
        <h2 id="history-title">Attempts per second, last hour</h2>
        <AttemptsChart />
      </section>
      <section aria-labelledby="targets-title">
        <h2 id="targets-title">Targets</h2>
        <ErrorLine error={targets.error} />
        {targets.data !== undefined && <TargetTable targets={targets.data.items} />}
      </section>
    </>
  );
}
