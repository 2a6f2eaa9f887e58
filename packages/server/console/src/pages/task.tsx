// One task: where it stands, and its attempt timeline (GET /retry-tasks/{id}/attempts) with the delay chosen before each retry.
import { useState } from 'preact/hooks';
import { api, type AttemptView, type Page, type TaskView } from '../api.js';
import { TaskChart } from '../charts/task-chart.js';
import { TaskRequest } from './task-request.js';
import { ConfirmDialog, ErrorLine, PageTitle, StatusBadge, duration, time, useLoad } from '../ui.js';

/** Loads every page of a task's attempts (at most 1,000 a page). */
async function allAttempts(taskId: string): Promise<AttemptView[]> {
  const attempts: AttemptView[] = [];
  let cursor: string | undefined;
  do {
    const page: Page<AttemptView> = await api('GET', `/retry-tasks/${encodeURIComponent(taskId)}/attempts?limit=1000${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
    attempts.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return attempts;
}

/** What delayed a retry past its backoff, in words, by the reason its attempt records (`delayedBy`). */
const DELAYED_BY: Readonly<Record<NonNullable<AttemptView['delayedBy']>, string>> = {
  retry_budget: "the target's retry budget",
};

/** Why an attempt's retry goes later than its backoff said, in words, or undefined when it does not. */
function delayText(attempt: AttemptView): string | undefined {
  if (attempt.delayedBy === null || attempt.backoffAt === null) return undefined;
  return `backoff said ${time(attempt.backoffAt)}; delayed by ${DELAYED_BY[attempt.delayedBy]}`;
}

/**
 * An attempt's status as the timeline shows it: the HTTP status, or for a gRPC target the code (its attempts keep no
 * HTTP status: the code leads their error message, `grpc UNAVAILABLE: …`, and a success has none).
 */
function statusText(attempt: AttemptView, grpc: boolean): string {
  if (attempt.responseStatus !== null) return String(attempt.responseStatus);
  if (!grpc) return 'no response';
  if (attempt.outcome === 'succeeded') return 'gRPC OK';
  const code = /^grpc ([A-Z_]+)/.exec(attempt.errorMessage ?? '')?.[1];
  return code === undefined ? 'no response' : `gRPC ${code}`;
}

/** The attempt before ended its run (no retry followed): the next attempt is a replay's. */
function startsRun(before: AttemptView): boolean {
  return before.nextAttemptAt === null && (before.outcome === 'failed' || before.outcome === 'exhausted' || before.outcome === 'cancelled' || before.outcome === 'succeeded');
}

function Timeline({ attempts, grpc }: { attempts: AttemptView[]; grpc: boolean }) {
  if (attempts.length === 0) return <p>No attempts yet.</p>;
  return (
    <ol class="timeline" aria-label="Attempts, oldest first">
      {attempts.map((attempt, i) => {
        const endedAt = attempt.startedAt + attempt.durationMs;
        const delayed = delayText(attempt);
        const replayed = i > 0 && startsRun(attempts[i - 1]!);
        return (
          <li key={attempt.attemptNumber} class={replayed ? 'attempt replayed' : 'attempt'}>
            {replayed && (
              <p class="replay-mark" aria-label="Replayed">
                Replayed: a new run starts here, with the same Idempotency-Key
              </p>
            )}
            <h3>
              Attempt {attempt.attemptNumber} <StatusBadge status={attempt.outcome} />
            </h3>
            <dl class="facts">
              <dt>Started</dt>
              <dd>{time(attempt.startedAt)}</dd>
              <dt>Status</dt>
              <dd>{statusText(attempt, grpc)}</dd>
              <dt>Latency</dt>
              <dd>{duration(attempt.durationMs)}</dd>
              {attempt.errorMessage !== null && (
                <>
                  <dt>Error</dt>
                  <dd>{attempt.errorMessage}</dd>
                </>
              )}
              {attempt.nextAttemptAt !== null && (
                <>
                  <dt>Delay before the next attempt</dt>
                  <dd>
                    {duration(Math.max(0, attempt.nextAttemptAt - endedAt))} (due {time(attempt.nextAttemptAt)})
                  </dd>
                </>
              )}
              {delayed !== undefined && (
                <>
                  <dt>Waiting</dt>
                  <dd aria-label="Why the retry waits longer">
                    <span class="badge wait">retry budget</span> {delayed}
                  </dd>
                </>
              )}
            </dl>
            {attempt.responseBodySnippet !== null && attempt.responseBodySnippet !== '' && (
              <details>
                <summary>Response excerpt</summary>
                <pre>{attempt.responseBodySnippet}</pre>
              </details>
            )}
          </li>
        );
      })}
    </ol>
  );
}

export function TaskPage({ taskId }: { taskId: string }) {
  const task = useLoad(() => api<TaskView>('GET', `/retry-tasks/${encodeURIComponent(taskId)}`), [taskId], 2_000);
  const attempts = useLoad(() => allAttempts(taskId), [taskId], 2_000);
  const [asking, setAsking] = useState<'cancel' | 'replay'>();
  const [actionError, setActionError] = useState<Error>();
  const act = async () => {
    const action = asking;
    setAsking(undefined);
    try {
      if (action === 'cancel') await api('DELETE', `/retry-tasks/${encodeURIComponent(taskId)}`);
      if (action === 'replay') await api('POST', `/retry-tasks/${encodeURIComponent(taskId)}/replay`);
      setActionError(undefined);
    } catch (error) {
      setActionError(error as Error);
    }
    task.reload();
    attempts.reload();
  };
  // Run now and reschedule: a PENDING task due at once, or at the time entered (local time in the form, sent as epoch ms).
  const [rescheduleAt, setRescheduleAt] = useState('');
  const move = async (action: 'run' | 'reschedule') => {
    try {
      const body = action === 'reschedule' ? { nextAttemptAt: new Date(rescheduleAt).getTime() } : undefined;
      await api('POST', `/retry-tasks/${encodeURIComponent(taskId)}/${action}`, body);
      setActionError(undefined);
      if (action === 'reschedule') setRescheduleAt('');
    } catch (error) {
      setActionError(error as Error);
    }
    task.reload();
  };
  const view = task.data;
  const pending = view?.status === 'PENDING';
  // A retry not due yet that its last attempt says was delayed (and that was not moved since): the task's wait, which
  // the service cannot work out for it (the budget that delayed it lives in one instance's memory).
  const last = attempts.data?.at(-1);
  const delayed = pending && last !== undefined && last.nextAttemptAt === view.nextAttemptAt ? delayText(last) : undefined;
  const dead = view?.status === 'FAILED' || view?.status === 'EXHAUSTED';
  const open = view?.status === 'PENDING' || view?.status === 'IN_FLIGHT';
  return (
    <>
      <PageTitle>
        Task <span class="mono">{taskId}</span>
      </PageTitle>
      <ErrorLine error={task.error} />
      <ErrorLine error={actionError} />
      {view !== undefined && (
        <section aria-labelledby="task-facts">
          <h2 id="task-facts" class="visually-hidden">
            Where the task stands
          </h2>
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <StatusBadge status={view.status} />
              {view.cancelRequested && ' (cancel requested)'}
            </dd>
            <dt>Policy</dt>
            <dd>{view.policyId === null ? 'inline' : <a href={`#/policies/${encodeURIComponent(view.policyId)}`}>{view.policyId}</a>}</dd>
            <dt>Attempts</dt>
            <dd>{view.attemptNumber}</dd>
            <dt>Next attempt</dt>
            <dd>{time(view.nextAttemptAt)}</dd>
            {view.waiting !== undefined && (
              <>
                <dt>Waiting</dt>
                <dd aria-label="Why it waits">{view.waiting.detail}</dd>
              </>
            )}
            {view.waiting === undefined && delayed !== undefined && (
              <>
                <dt>Waiting</dt>
                <dd aria-label="Why it waits">{delayed}</dd>
              </>
            )}
            <dt>Created</dt>
            <dd>{time(view.createdAt)}</dd>
            {view.deadLetterReason !== null && (
              <>
                <dt>Dead-letter reason</dt>
                <dd>{view.deadLetterReason}</dd>
              </>
            )}
            {view.lastError !== null && (
              <>
                <dt>Last error</dt>
                <dd>{view.lastError}</dd>
              </>
            )}
          </dl>
          <div class="actions">
            {dead && (
              <button type="button" class="primary" onClick={() => setAsking('replay')}>
                Replay
              </button>
            )}
            {pending && (
              <button type="button" class="primary" onClick={() => void move('run')}>
                Run now
              </button>
            )}
            {pending && (
              <form
                class="inline"
                aria-label="Reschedule"
                onSubmit={(event) => {
                  event.preventDefault();
                  void move('reschedule');
                }}
              >
                <label for="reschedule-at">Due at</label>
                <input id="reschedule-at" type="datetime-local" step="1" value={rescheduleAt} onInput={(e) => setRescheduleAt(e.currentTarget.value)} />
                <button type="submit" disabled={rescheduleAt === ''}>
                  Reschedule
                </button>
              </form>
            )}
            {open && (
              <button type="button" class="danger" onClick={() => setAsking('cancel')}>
                Cancel task
              </button>
            )}
          </div>
        </section>
      )}
      {view !== undefined && <TaskRequest task={view} />}
      <section aria-labelledby="timeline-title">
        <h2 id="timeline-title">Attempts</h2>
        <ErrorLine error={attempts.error} />
        {attempts.data !== undefined && view !== undefined && <TaskChart task={view} attempts={attempts.data} />}
        {attempts.data !== undefined && <Timeline attempts={attempts.data} grpc={/^grpcs?:/.test(view?.targetUrl ?? '')} />}
      </section>
      <ConfirmDialog
        open={asking !== undefined}
        title={asking === 'cancel' ? 'Cancel this task?' : 'Replay this task?'}
        confirmLabel={asking === 'cancel' ? 'Cancel task' : 'Replay'}
        onConfirm={() => void act()}
        onCancel={() => setAsking(undefined)}
      >
        <p>
          {asking === 'cancel'
            ? 'No further attempt will be made (one running now finishes first).'
            : 'The task becomes PENDING and is attempted again from a fresh run, with the same Idempotency-Key.'}
        </p>
      </ConfirmDialog>
    </>
  );
}
