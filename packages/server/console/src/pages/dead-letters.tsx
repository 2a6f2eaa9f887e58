// Dead letters (GET /dead-letters): why each task ended, what the target last answered; replay one or every one
// shown, and cancel a replay that should not run after all (a dead letter itself can only be replayed: FAILED and
// EXHAUSTED allow no other move).
import { useState } from 'preact/hooks';
import { ApiError, api, query, type Page, type TaskView } from '../api.js';
import { ConfirmDialog, ErrorLine, PageTitle, StatusBadge, TaskIdHeader, time, useLoad } from '../ui.js';

type Asking = { action: 'replay'; tasks: TaskView[] } | { action: 'cancel'; task: TaskView };

const taskPath = (taskId: string) => `/retry-tasks/${encodeURIComponent(taskId)}`;

export function DeadLettersPage() {
  const [cursor, setCursor] = useState<string>();
  const letters = useLoad(() => api<Page<TaskView>>('GET', `/dead-letters${query({ cursor, limit: 50 })}`), [cursor]);
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
    if (question.action === 'replay') {
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
      <ErrorLine error={letters.error} />
      {errors.map((error, i) => (
        <ErrorLine key={i} error={error} />
      ))}
      {letters.data !== undefined &&
        (items.length === 0 ? (
          <p>No dead letters.</p>
        ) : (
          <>
            <div class="toolbar">
              <button type="button" class="primary" disabled={busy} onClick={() => setAsking({ action: 'replay', tasks: items })}>
                Replay all {items.length} shown
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
        </p>
      </ConfirmDialog>
    </>
  );
}
