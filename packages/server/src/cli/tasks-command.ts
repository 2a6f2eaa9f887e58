import { Command, Option } from 'commander';
import { TaskStatus } from '@retryd/core';
import type { Attempt as AttemptView, Task as TaskView, TaskSummary } from '@retryd/client';
import { textTable } from '../terminal/text-table.js';
import { rescheduleCommand, runCommand } from './reschedule-commands.js';
import { cancelCommand, purgeCommand } from './task-bulk-commands.js';
import { targetKeyOf } from '../domain/target-key.js';
import { apiCommand, duration, iso, listCommand, listed, printListing, printOne, timeTextOf, withClient, type ApiFlags, type ListFlags, type TimeText } from './api-command.js';

/** A task's row in a listing (tasks and dead letters), its times as `time` shows them (default ISO 8601). */
export function taskTable(tasks: readonly TaskSummary[], time: TimeText = iso): string {
  const rows = tasks.map((t) => [
    t.taskId,
    t.status,
    t.policyId ?? (t.policy === null ? '-' : 'inline'),
    t.targetKey,
    t.status === 'PENDING' ? time(t.nextAttemptAt) : '-',
    time(t.updatedAt),
    t.deadLetterReason ?? '-',
    String(t.attemptNumber),
  ]);
  return textTable(['task id', 'status', 'policy', 'target', 'next attempt', 'updated', 'reason', 'attempts'], rows, 7);
}

/** The delay the engine chose after an attempt: from its end to the next attempt's due time. */
export function chosenDelayMs(attempt: AttemptView): number | null {
  return attempt.nextAttemptAt === null ? null : Math.max(0, attempt.nextAttemptAt - (attempt.startedAt + attempt.durationMs));
}

/** What delayed a retry past its backoff, in words, by the reason its attempt records. */
const DELAYED_BY: Readonly<Record<NonNullable<AttemptView['delayedBy']>, string>> = {
  retry_budget: "the target's retry budget",
};

/**
 * The line under the attempt table for an attempt whose retry something delayed past its backoff (`delayedBy`), else
 * null: when it goes, when the backoff said, and why it waits longer.
 *
 * @example `attempt 1: next attempt at 2026-01-01T00:00:01.600Z, 1.5s after its backoff said (2026-01-01T00:00:00.100Z): delayed by the target's retry budget`
 */
export function delayNote(attempt: AttemptView): string | null {
  if (attempt.delayedBy === null || attempt.backoffAt === null || attempt.nextAttemptAt === null) return null;
  const later = duration(Math.max(0, attempt.nextAttemptAt - attempt.backoffAt));
  return (
    `attempt ${attempt.attemptNumber}: next attempt at ${iso(attempt.nextAttemptAt)}, ${later} after its backoff said ` +
    `(${iso(attempt.backoffAt)}): delayed by ${DELAYED_BY[attempt.delayedBy]}`
  );
}

/**
 * The "next attempt" line of a PENDING task: its due time, and why it is later than its backoff said when its last
 * attempt records a delay and the task was not moved since (run now, reschedule).
 */
export function nextAttemptText(task: Pick<TaskView, 'nextAttemptAt'>, last: AttemptView | undefined): string {
  const at = iso(task.nextAttemptAt);
  if (last === undefined || last.delayedBy === null || last.backoffAt === null || last.nextAttemptAt !== task.nextAttemptAt) return at;
  return `${at} (backoff said ${iso(last.backoffAt)}; delayed by ${DELAYED_BY[last.delayedBy]})`;
}

function attemptTable(attempts: readonly AttemptView[], time: TimeText): string {
  const rows = attempts.map((a) => {
    const delay = chosenDelayMs(a);
    return [
      String(a.attemptNumber),
      time(a.startedAt),
      a.responseStatus === null ? (a.errorMessage ?? '-') : String(a.responseStatus),
      a.outcome,
      duration(a.durationMs),
      delay === null ? '-' : duration(delay),
    ];
  });
  // Under the table rather than in a column: almost no attempt has one.
  const notes = attempts.map((a) => delayNote(a)).filter((note) => note !== null);
  const table = textTable(['#', 'started', 'status', 'outcome', 'took', 'next after'], rows, 4);
  return notes.length === 0 ? table : `${table}\n\n${notes.join('\n')}`;
}

/** A task's own timeouts: each in ms, or where it comes from when the task sets none. */
export function timeoutsText(task: Pick<TaskView, 'attemptTimeoutMs' | 'connectTimeoutMs'>): string {
  const own = (ms: number | null) => (ms === null ? "the target's, else the service's" : `${ms} ms`);
  return `attempt ${own(task.attemptTimeoutMs)}; connect ${own(task.connectTimeoutMs)}`;
}

function taskText(task: TaskView, attempts: readonly AttemptView[], time: TimeText): string {
  const lines: [string, string][] = [
    ['task', task.taskId],
    ['status', task.cancelRequested && task.status === 'IN_FLIGHT' ? 'IN_FLIGHT (cancel requested)' : task.status],
    ['target', `${task.method} ${task.targetUrl}`],
    ['idempotency key', task.idempotencyKey],
    ['policy', task.policyId ?? (task.policy === null ? '-' : 'inline')],
    ['attempts', String(task.attemptNumber)],
    ['timeouts', timeoutsText(task)],
    ['created', iso(task.createdAt)],
    ['updated', iso(task.updatedAt)],
  ];
  if (task.status === 'PENDING') lines.push(['next attempt', nextAttemptText(task, attempts.at(-1))]);
  if (task.waiting !== undefined) lines.push(['waiting', `${task.waiting.reason}: ${task.waiting.detail}`]);
  if (task.lastResponseStatus !== null) lines.push(['last status', String(task.lastResponseStatus)]);
  if (task.lastError !== null) lines.push(['last error', task.lastError]);
  if (task.deadLetterReason !== null) lines.push(['dead-letter reason', task.deadLetterReason]);
  if (task.callback !== null) lines.push(['callback', `${task.callback.url} on ${(task.callback.on ?? []).join(', ')}${task.callback.policyId === null ? '' : ` (policy ${task.callback.policyId})`}`]);
  const width = Math.max(...lines.map(([k]) => k.length));
  const head = lines.map(([k, v]) => `${`${k}:`.padEnd(width + 2)}${v}`).join('\n');
  return `${head}\n\n${attempts.length === 0 ? 'no attempts yet' : attemptTable(attempts, time)}`;
}

/** A `--target` as the API takes it: a target key as is, any URL of the target by its origin. */
export function targetKeyOfFlag(target: string): string {
  return URL.canParse(target) ? targetKeyOf(target) : target;
}

function list(): Command {
  return listCommand('list', 'List tasks, newest first')
    .addOption(new Option('--status <status>', 'only tasks in this status').choices(Object.values(TaskStatus)))
    .addOption(new Option('--policy <policyId>', 'only tasks of this named policy'))
    .addOption(new Option('--target <targetKey>', 'only tasks of this target (an origin such as https://api.example.com, or any URL of it)'))
    .addOption(new Option('--idempotency-key <key>', 'only the task holding this idempotency key'))
    .action(async (flags: ListFlags & { status?: TaskStatus; policy?: string; target?: string; idempotencyKey?: string }) => {
      await withClient(flags, async (client) => {
        const filter = {
          ...(flags.status === undefined ? {} : { status: flags.status }),
          ...(flags.policy === undefined ? {} : { policyId: flags.policy }),
          ...(flags.target === undefined ? {} : { targetKey: targetKeyOfFlag(flags.target) }),
          ...(flags.idempotencyKey === undefined ? {} : { idempotencyKey: flags.idempotencyKey }),
        };
        const listing = await listed(client, flags, (page) => client.listTasks({ ...filter, ...page }));
        printListing(flags, listing, 'tasks', (tasks) => taskTable(tasks, timeTextOf(flags)));
      });
    });
}

function get(): Command {
  return apiCommand('get', 'Show a task and its attempt timeline (start, status, outcome, duration, the delay chosen after it)', 'the task as one JSON document, its attempts under "attempts"')
    .argument('<taskId>')
    .action(async (taskId: string, flags: ApiFlags) => {
      await withClient(flags, async (client) => {
        const task = await client.getTask(taskId);
        const attempts: AttemptView[] = [];
        for await (const attempt of client.attempts(taskId)) attempts.push(attempt);
        printOne(flags, { ...task, attempts }, () => taskText(task, attempts, timeTextOf(flags)));
      });
    });
}

function replay(): Command {
  return apiCommand('replay', 'Run a FAILED or EXHAUSTED task again: same idempotency key, fresh attempt and time budgets, history kept')
    .argument('<taskId>')
    .action(async (taskId: string, flags: ApiFlags) => {
      await withClient(flags, async (client) => {
        const task = await client.replayTask(taskId);
        printOne(flags, task, () => `replayed ${taskId}: now ${task.status}`);
      });
    });
}

/** `retryd tasks list|get|cancel|replay|run|reschedule|purge`, through the HTTP API of a running service. */
export function tasksCommand(): Command {
  return new Command('tasks')
    .description('Tasks of a running service, through its HTTP API (--url, --api-key)')
    .addCommand(list())
    .addCommand(get())
    .addCommand(cancelCommand())
    .addCommand(replay())
    .addCommand(runCommand())
    .addCommand(rescheduleCommand())
    .addCommand(purgeCommand());
}
