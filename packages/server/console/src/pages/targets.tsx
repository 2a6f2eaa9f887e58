// Targets: each one's breaker, limits and held tasks; a breaker opened, closed or reset by hand.
import { useState } from 'preact/hooks';
import { api, query, type BreakerAction, type Page, type TargetView } from '../api.js';
import { ConfirmDialog, ErrorLine, PageTitle, StatusBadge, duration, time, useLoad } from '../ui.js';
import { TargetChart } from '../charts/target-chart.js';
import { TargetTable } from './overview.js';
import { TargetSettingsForm } from './target-settings.js';

const ACTIONS: Record<BreakerAction, { label: string; explains: string }> = {
  open: { label: 'Open breaker', explains: 'The target is held for its longest open period (no calls), then probed, as after any opening.' },
  close: { label: 'Close breaker', explains: 'The breaker closes at once and the tasks it held become due again.' },
  reset: { label: 'Reset breaker', explains: 'The breaker closes, and its failure counts and re-open backoff are cleared.' },
};

export function TargetsPage() {
  const [cursor, setCursor] = useState<string>();
  const targets = useLoad(() => api<Page<TargetView>>('GET', `/targets${query({ cursor, limit: 100 })}`), [cursor], 2_000);
  return (
    <>
      <PageTitle>Targets</PageTitle>
      <ErrorLine error={targets.error} />
      {targets.data !== undefined && <TargetTable targets={targets.data.items} />}
      {targets.data?.nextCursor !== undefined && (
        <div class="pager">
          <button type="button" onClick={() => setCursor(targets.data?.nextCursor)}>
            Next page
          </button>
        </div>
      )}
    </>
  );
}

const limit = (value: number | null, unit = '') => (value === null ? 'none' : `${value}${unit}`);

export function TargetPage({ targetKey }: { targetKey: string }) {
  const path = `/targets/${encodeURIComponent(targetKey)}`;
  const target = useLoad(() => api<TargetView>('GET', path), [targetKey], 2_000);
  const [asking, setAsking] = useState<BreakerAction>();
  const [error, setError] = useState<Error>();
  const act = async () => {
    const action = asking;
    setAsking(undefined);
    if (action === undefined) return;
    try {
      await api('POST', `${path}/breaker`, { action });
      setError(undefined);
    } catch (failure) {
      setError(failure as Error);
    }
    target.reload();
  };
  const view = target.data;
  return (
    <>
      <PageTitle>
        Target <span class="mono">{targetKey}</span>
      </PageTitle>
      <p>
        <a href="#/targets">All targets</a>
      </p>
      <ErrorLine error={target.error} />
      <ErrorLine error={error} />
      {view !== undefined && (
        <div class="columns">
          <section aria-labelledby="breaker-title">
            <h2 id="breaker-title">Breaker</h2>
            <dl class="facts">
              <dt>State</dt>
              <dd>
                <StatusBadge status={view.breaker.state} />
              </dd>
              <dt>Open until</dt>
              <dd>{time(view.breaker.openUntil)}</dd>
              <dt>Re-openings in a row</dt>
              <dd>{view.breaker.reopenCount}</dd>
            </dl>
            <div class="actions">
              {(Object.keys(ACTIONS) as BreakerAction[]).map((action) => (
                <button type="button" key={action} class={action === 'open' ? 'danger' : ''} onClick={() => setAsking(action)}>
                  {ACTIONS[action].label}
                </button>
              ))}
            </div>
          </section>
          <section aria-labelledby="gate-title">
            <h2 id="gate-title">Held tasks and limits</h2>
            <dl class="facts">
              <dt>Held until</dt>
              <dd>{time(view.heldUntil)}</dd>
              <dt>Throttled until</dt>
              <dd>{time(view.throttledUntil)}</dd>
              <dt>Due tasks</dt>
              <dd>{view.dueTasks}</dd>
              <dt>Next due</dt>
              <dd>{time(view.nextDueAt)}</dd>
              <dt>In flight</dt>
              <dd>{view.inFlight}</dd>
              <dt>Rate limit</dt>
              <dd>
                {limit(view.limits.ratePerSecond, '/s')} (burst {limit(view.limits.burst)})
              </dd>
              <dt>Most in flight</dt>
              <dd>{limit(view.limits.maxInFlight)}</dd>
              <dt>Allowed rate now</dt>
              <dd>{view.allowedRatePerSecond === null ? 'unlimited' : `${view.allowedRatePerSecond.toFixed(1)}/s`}</dd>
              <dt>Breaker opens after</dt>
              <dd>
                {view.settings.breaker.enabled ? `${view.settings.breaker.consecutiveFailures} failures in a row` : 'never (disabled)'}
              </dd>
              <dt>Open period</dt>
              <dd>{duration(view.settings.breaker.openDurationMs)}</dd>
            </dl>
          </section>
        </div>
      )}
      {view !== undefined && (
        <section aria-labelledby="settings-title">
          <h2 id="settings-title">Settings</h2>
          <p class="hint">Changes reach every instance at once; the fields left as they are keep their value.</p>
          <TargetSettingsForm key={targetKey} target={view} onSaved={() => target.reload()} />
        </section>
      )}
      <section aria-labelledby="target-history-title">
        <h2 id="target-history-title">Breaker and allowed rate, last hour</h2>
        <TargetChart targetKey={targetKey} />
      </section>
      <ConfirmDialog
        open={asking !== undefined}
        title={asking === undefined ? '' : `${ACTIONS[asking].label} of ${targetKey}?`}
        confirmLabel={asking === undefined ? 'OK' : ACTIONS[asking].label}
        onConfirm={() => void act()}
        onCancel={() => setAsking(undefined)}
      >
        <p>{asking === undefined ? '' : ACTIONS[asking].explains}</p>
      </ConfirmDialog>
    </>
  );
}
