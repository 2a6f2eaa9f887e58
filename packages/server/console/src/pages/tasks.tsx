// Tasks: filtered by status, policy, target and idempotency key (what GET /retry-tasks supports), and looked up by id;
// every live task matching the filter cancelled after a confirmation (POST /retry-tasks/cancel, page after page).
import { useState } from 'preact/hooks';
import { api, query, type Page, type TaskStatus, type TaskSummaryView } from '../api.js';
import { ActionReport, ConfirmDialog, describeFilter, ErrorLine, PageTitle, StatusBadge, TaskIdHeader, time, useLoad } from '../ui.js';

const STATUSES: TaskStatus[] = ['PENDING', 'IN_FLIGHT', 'SUCCEEDED', 'FAILED', 'EXHAUSTED', 'CANCELLED'];

/** The query part of the hash: `#/tasks?status=FAILED` → `status=FAILED`. */
export function hashParams(): URLSearchParams {
  return new URLSearchParams(location.hash.split('?')[1] ?? '');
}

/** A table of tasks, each linking to its page. */
export function TaskTable({ tasks, caption }: { tasks: TaskSummaryView[]; caption: string }) {
  return (
    <table>
      <caption class="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Task</th>
          <th scope="col">Status</th>
          <th scope="col">Target</th>
          <th scope="col">Policy</th>
          <th scope="col">Last error</th>
          <th scope="col" class="num">Attempts</th>
          <th scope="col">Next attempt</th>
          <th scope="col">Created</th>
        </tr>
      </thead>
      <tbody>
        {tasks.map((task) => (
          <tr key={task.taskId}>
            <TaskIdHeader taskId={task.taskId} />
            <td>
              <StatusBadge status={task.status} />
            </td>
            <td class="mono truncate" title={task.targetUrl}>
              {task.method} {task.targetUrl}
            </td>
            <td>{task.policyId ?? 'inline'}</td>
            <td class="truncate" title={task.lastError ?? undefined}>
              {task.lastError ?? '–'}
            </td>
            <td class="num">{task.attemptNumber}</td>
            <td>{time(task.nextAttemptAt)}</td>
            <td>{time(task.createdAt)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** One page of POST /retry-tasks/cancel. */
interface BulkCancelPage {
  results: { taskId: string; result: 'cancelled' | 'cancel_requested' | 'error'; error?: { detail?: string; title?: string } }[];
  cancelled: number;
  cancelRequested: number;
  nextCursor?: string;
}

/** Most pages one "Cancel matching" asks for before it stops and says so: a bound on one click. */
const MAX_CANCEL_PAGES = 100;

/**
 * Cancels every live task matching `filter`, page after page (cancelled tasks leave the listing and the cursor walks
 * past the rest), telling `progress` as pages land; returns the failures (a task that ended meanwhile, a stop).
 */
async function cancelMatching(filter: Record<string, string>, progress: (text: string) => void): Promise<Error[]> {
  const body = Object.fromEntries(Object.entries(filter).filter(([, value]) => value !== ''));
  const failures: Error[] = [];
  let next: string | undefined;
  let cancelled = 0;
  let requested = 0;
  let pages = 0;
  try {
    do {
      const page: BulkCancelPage = await api<BulkCancelPage>('POST', '/retry-tasks/cancel', { ...body, limit: 200, ...(next === undefined ? {} : { cursor: next }) });
      cancelled += page.cancelled;
      requested += page.cancelRequested;
      for (const entry of page.results) {
        if (entry.result === 'error') failures.push(new Error(`${entry.taskId}: ${entry.error?.detail ?? entry.error?.title ?? 'not cancelled'}`));
      }
      next = page.nextCursor;
      pages += 1;
      progress(`Cancelled ${cancelled}, cancel requested ${requested}${next === undefined ? '.' : '…'}`);
    } while (next !== undefined && pages < MAX_CANCEL_PAGES);
    if (next !== undefined) failures.push(new Error(`Stopped after ${pages} pages: more may match. Cancel matching again to go on.`));
  } catch (error) {
    failures.push(error as Error);
  }
  return failures;
}

export function TasksPage() {
  const params = hashParams();
  const status = params.get('status') ?? '';
  const policyId = params.get('policyId') ?? '';
  const targetKey = params.get('targetKey') ?? '';
  const idempotencyKey = params.get('idempotencyKey') ?? '';
  const [cursor, setCursor] = useState<string>();
  const [lookup, setLookup] = useState('');
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [progress, setProgress] = useState<string>();
  const [errors, setErrors] = useState<Error[]>([]);
  // Only live tasks can be cancelled, and the bulk cancel filters by status, policy and target (not by key).
  const cancellable = (status === '' || status === 'PENDING' || status === 'IN_FLIGHT') && idempotencyKey === '';
  const liveFilter = { status, policyId, targetKey };
  const filtered = status !== '' || policyId !== '' || targetKey !== '';
  const tasks = useLoad(
    () => api<Page<TaskSummaryView>>('GET', `/retry-tasks${query({ status, policyId, targetKey, idempotencyKey, cursor, limit: 50 })}`),
    [status, policyId, targetKey, idempotencyKey, cursor],
  );
  const filter = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const field = (name: string) => String(form.get(name) ?? '').trim();
    setCursor(undefined);
    location.hash = `#/tasks${query({ status: field('status'), policyId: field('policyId'), targetKey: field('targetKey'), idempotencyKey: field('idempotencyKey') })}`;
  };
  return (
    <>
      <PageTitle>Tasks</PageTitle>
      <div class="toolbar">
        {/* The fields start from the filter in force and are then the user's (`defaultValue`, `selected`): a field
            bound with `value` would be set back to it by every render, such as the one a page's answer brings. */}
        <form class="inline" onSubmit={filter} aria-label="Filter tasks">
          <label for="filter-status">Status</label>
          <select id="filter-status" name="status">
            <option value="" selected={status === ''}>
              any
            </option>
            {STATUSES.map((s) => (
              <option key={s} value={s} selected={s === status}>
                {s}
              </option>
            ))}
          </select>
          <label for="filter-policy">Policy</label>
          <input id="filter-policy" name="policyId" defaultValue={policyId} placeholder="policy id" />
          <label for="filter-target">Target</label>
          <input id="filter-target" class="mono" name="targetKey" defaultValue={targetKey} placeholder="https://api.example.com" />
          <label for="filter-key">Idempotency key</label>
          <input id="filter-key" class="mono" name="idempotencyKey" defaultValue={idempotencyKey} />
          <button type="submit">Filter</button>
        </form>
        <form
          class="inline"
          role="search"
          aria-label="Find a task by id"
          onSubmit={(event) => {
            event.preventDefault();
            if (lookup.trim() !== '') location.hash = `#/tasks/${encodeURIComponent(lookup.trim())}`;
          }}
        >
          <label for="task-id">Task id</label>
          <input id="task-id" class="mono" value={lookup} onInput={(event) => setLookup(event.currentTarget.value)} />
          <button type="submit">Open</button>
        </form>
      </div>
      {cancellable && (
        <div class="toolbar">
          <button type="button" class="danger" disabled={busy} onClick={() => setAsking(true)}>
            Cancel matching
          </button>
        </div>
      )}
      <ErrorLine error={tasks.error} />
      <ActionReport progress={progress} errors={errors} />
      {tasks.data !== undefined &&
        (tasks.data.items.length > 0 ? (
          <TaskTable tasks={tasks.data.items} caption="Tasks, newest first" />
        ) : (
          // A target filter examines a bounded stretch of tasks per page: an empty page may still have more after it.
          <p>{tasks.data.nextCursor === undefined ? 'No tasks match.' : 'No tasks match on this page; later pages may.'}</p>
        ))}
      <div class="pager">
        {cursor !== undefined && (
          <button type="button" onClick={() => setCursor(undefined)}>
            First page
          </button>
        )}
        {tasks.data?.nextCursor !== undefined && (
          <button type="button" onClick={() => setCursor(tasks.data?.nextCursor)}>
            Next page
          </button>
        )}
      </div>
      <ConfirmDialog
        open={asking}
        title={filtered ? 'Cancel every live task matching the filter?' : 'Cancel every live task?'}
        confirmLabel="Cancel tasks"
        onConfirm={() => {
          setAsking(false);
          setBusy(true);
          void cancelMatching(liveFilter, setProgress).then((failures) => {
            setErrors(failures);
            setBusy(false);
            tasks.reload();
          });
        }}
        onCancel={() => setAsking(false)}
      >
        <p>
          {status === 'IN_FLIGHT' ? 'Every IN_FLIGHT task' : status === 'PENDING' ? 'Every PENDING task' : 'Every PENDING and IN_FLIGHT task'}
          {filtered ? ` matching the filter (${describeFilter(liveFilter)})` : ''}, on every page,
          is cancelled: a PENDING one at once, an IN_FLIGHT one when its attempt ends. None is attempted again.
        </p>
      </ConfirmDialog>
    </>
  );
}
