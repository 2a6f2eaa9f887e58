// Dead letters (GET /dead-letters): why each task ended, what the target last answered, filtered by status, policy
// and target; replay one, every one shown, or every one matching the filter (POST /dead-letters/replay, page after
// page), and cancel a replay that should not run after all (a dead letter itself can only be replayed: FAILED and
// EXHAUSTED allow no other move).
import { useState } from 'preact/hooks';
import { ApiError, api, query, type Page, type TaskSummaryView, type TaskView } from '../api.js';
import { ActionReport, ConfirmDialog, describeFilter, ErrorLine, PageTitle, StatusBadge, TaskIdHeader, time, useLoad } from '../ui.js';
import { hashParams } from './tasks.js';

type Asking = { action: 'replay'; tasks: TaskSummaryView[] } | { action: 'replay-matching' } | { action: 'cancel'; task: TaskSummaryView };

/** One page of POST /dead-letters/replay. */
interface BulkReplayPage {
  results: { taskId: string; result: 'replayed' | 'already_live' | 'error'; error?: { detail?: string; title?: string } }[];
  replayed: number;
  nextCursor?: string;
}

/** Most pages one "replay all matching" asks for before it stops and says so: a bound on one click. */
const MAX_BULK_PAGES = 100;

const taskPath = (taskId: string) => `/retry-tasks/${encodeURIComponent(taskId)}`;

export function DeadLettersPage() {
  const params = hashParams();
  const filter = { status: params.get('status') ?? '', policyId: params.get('policyId') ?? '', targetKey: params.get('targetKey') ?? '' };
  const filtered = filter.status !== '' || filter.policyId !== '' || filter.targetKey !== '';
  const [cursor, setCursor] = useState<string>();
  const letters = useLoad(
    () => api<Page<TaskSummaryView>>('GET', `/dead-letters${query({ ...filter, cursor, limit: 50 })}`),
    [filter.status, filter.policyId, filter.targetKey, cursor],
  );
  const [progress, setProgress] = useState<string>();
  const [replayed, setReplayed] = useState<TaskView[]>([]);
  const [asking, setAsking] = useState<Asking>();
  const [errors, setErrors] = useState<Error[]>([]);
  const [busy, setBusy] = useState(false);

  const confirm = async () => {
    const question = asking;
    setAsking(undefined);
    if (question === undefined) return;
    setBusy(true);
    const failures: Error[] = [];
    if (question.action === 'replay-matching') {
      // Page after page until the filter matches nothing more: replayed tasks leave the dead letters, so each runs once.
      const body = Object.fromEntries(Object.entries(filter).filter(([, value]) => value !== ''));
      let next: string | undefined;
      let replayedCount = 0;
      let pages = 0;
      try {
        do {
          const page: BulkReplayPage = await api<BulkReplayPage>('POST', '/dead-letters/replay', { ...body, limit: 200, ...(next === undefined ? {} : { cursor: next }) });
          replayedCount += page.replayed;
          for (const entry of page.results) {
            if (entry.result === 'error') failures.push(new Error(`${entry.taskId}: ${entry.error?.detail ?? entry.error?.title ?? 'not replayed'}`));
          }
          next = page.nextCursor;
          pages += 1;
          setProgress(`Replayed ${replayedCount}${next === undefined ? '' : '…'}`);
        } while (next !== undefined && pages < MAX_BULK_PAGES);
        if (next !== undefined) failures.push(new Error(`Stopped after ${replayedCount} tasks: more match. Replay all matching again to go on.`));
      } catch (error) {
        failures.push(error as Error);
      }
      setProgress(`Replayed ${replayedCount} matching task${replayedCount === 1 ? '' : 's'}.`);
    } else if (question.action === 'replay') {
      const done: TaskView[] = [];
      // One at a time: a replay-all of a long page must not trip the tenant's request rate.
      for (const task of question.tasks) {
        try {
          done.push(await api<TaskView>('POST', `${taskPath(task.taskId)}/replay`));
        } catch (error) {
          failures.push(error instanceof ApiError ? new Error(`${task.taskId}: ${error.message}`) : (error as Error));
        }
      }
      setReplayed((before) => [...done, ...before.filter((t) => !done.some((d) => d.taskId === t.taskId))]);
    } else {
      try {
        const answer = await api<{ task: TaskView }>('DELETE', taskPath(question.task.taskId));
        setReplayed((before) => before.map((t) => (t.taskId === answer.task.taskId ? answer.task : t)));
      } catch (error) {
        failures.push(error as Error);
      }
    }
    setErrors(failures);
    setBusy(false);
    letters.reload();
  };

  const items = letters.data?.items ?? [];
  return (
    <>
      <PageTitle>Dead letters</PageTitle>
      <p class="hint">Tasks that FAILED (a permanent answer) or were EXHAUSTED (out of attempts or budget), newest first.</p>
      <div class="toolbar">
        <form
          class="inline"
          aria-label="Filter dead letters"
          onSubmit={(event) => {
            event.preventDefault();
            const form = new FormData(event.currentTarget);
            const field = (name: string) => String(form.get(name) ?? '').trim();
            setCursor(undefined);
            location.hash = `#/dead-letters${query({ status: field('status'), policyId: field('policyId'), targetKey: field('targetKey') })}`;
          }}
        >
          <label for="dl-status">Status</label>
          {/* Not bound with `value`, which every render would set back: see the tasks page's filter. */}
          <select id="dl-status" name="status">
            {(['', 'FAILED', 'EXHAUSTED'] as const).map((s) => (
              <option key={s} value={s} selected={s === filter.status}>
                {s === '' ? 'both' : s}
              </option>
            ))}
          </select>
          <label for="dl-policy">Policy</label>
          <input id="dl-policy" name="policyId" defaultValue={filter.policyId} placeholder="policy id" />
          <label for="dl-target">Target</label>
          <input id="dl-target" class="mono" name="targetKey" defaultValue={filter.targetKey} placeholder="https://api.example.com" />
          <button type="submit">Filter</button>
        </form>
      </div>
      <ErrorLine error={letters.error} />
      <ActionReport progress={progress} errors={errors} />
      {letters.data !== undefined &&
        (items.length === 0 && letters.data.nextCursor === undefined ? (
          <p>{filtered ? 'No dead letters match.' : 'No dead letters.'}</p>
        ) : (
          <>
            <div class="toolbar">
              <button type="button" disabled={busy || items.length === 0} onClick={() => setAsking({ action: 'replay', tasks: items })}>
                Replay all {items.length} shown
              </button>
              <button type="button" class="primary" disabled={busy} onClick={() => setAsking({ action: 'replay-matching' })}>
                {filtered ? 'Replay all matching the filter' : 'Replay all dead letters'}
              </button>
            </div>
            <table>
              <caption class="visually-hidden">Dead letters</caption>
              <thead>
                <tr>
                  <th scope="col">Task</th>
                  <th scope="col">Status</th>
                  <th scope="col">Reason</th>
                  <th scope="col">Last response</th>
                  <th scope="col">Target</th>
                  <th scope="col">Ended</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {items.map((task) => (
                  <tr key={task.taskId}>
                    <TaskIdHeader taskId={task.taskId} />
                    <td>
                      <StatusBadge status={task.status} />
                    </td>
                    <td>{task.deadLetterReason ?? '–'}</td>
                    <td>
                      {task.lastResponseStatus ?? 'no response'}
                      {task.lastError !== null && <div class="hint">{task.lastError}</div>}
                    </td>
                    <td class="mono truncate" title={task.targetUrl}>
                      {task.targetUrl}
                    </td>
                    <td>{time(task.updatedAt)}</td>
                    <td>
                      <button type="button" disabled={busy} aria-label={`Replay ${task.taskId}`} onClick={() => setAsking({ action: 'replay', tasks: [task] })}>
                        Replay
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        ))}
      <div class="pager">
        {cursor !== undefined && (
          <button type="button" onClick={() => setCursor(undefined)}>
            First page
          </button>
        )}
        {letters.data?.nextCursor !== undefined && (
          <button type="button" onClick={() => setCursor(letters.data?.nextCursor)}>
            Next page
          </button>
        )}
      </div>
      {replayed.length > 0 && (
        <section aria-labelledby="replayed-title">
          <h2 id="replayed-title">Replayed from this page</h2>
          <ul class="plain">
            {replayed.map((task) => (
              <li key={task.taskId}>
                <a class="mono" href={`#/tasks/${encodeURIComponent(task.taskId)}`}>
                  {task.taskId}
                </a>{' '}
                <StatusBadge status={task.status} />{' '}
                {task.status === 'PENDING' && (
                  <button type="button" class="danger" disabled={busy} onClick={() => setAsking({ action: 'cancel', task })}>
                    Cancel
                  </button>
                )}
              </li>
            ))}
          </ul>
        </section>
      )}
      <ConfirmDialog
        open={asking !== undefined}
        title={
          asking?.action === 'cancel'
            ? 'Cancel this replayed task?'
            : asking?.action === 'replay-matching'
              ? filtered
                ? 'Replay every dead letter matching the filter?'
                : 'Replay every dead letter?'
              : asking?.tasks.length === 1
              ? 'Replay this task?'
              : `Replay ${asking?.tasks.length ?? 0} tasks?`
        }
        confirmLabel={asking?.action === 'cancel' ? 'Cancel task' : 'Replay'}
        onConfirm={() => void confirm()}
        onCancel={() => setAsking(undefined)}
      >
        <p>
          {asking?.action === 'cancel'
            ? 'It will not be attempted again.'
            : 'Each task becomes PENDING and is attempted again from a fresh run, with its same Idempotency-Key.'}
          {asking?.action === 'replay-matching' && ` Every page is replayed, not only this one${filtered ? ` (${describeFilter(filter)})` : ''}.`}
        </p>
      </ConfirmDialog>
    </>
  );
}
