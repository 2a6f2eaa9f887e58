import { Option, type Command } from 'commander';
import type { Task as TaskView } from '@retryd/client';
import { apiCommand, iso, printOne, withClient, type ApiFlags } from './api-command.js';

/** What a run-now or reschedule left: when the task is due, and what holds its target if anything does. */
function dueText(task: TaskView): string {
  const due = `task ${task.taskId} is due at ${iso(task.nextAttemptAt)}`;
  return task.waiting === undefined ? due : `${due}\nwaiting: ${task.waiting.reason}: ${task.waiting.detail}`;
}

/** `--at` as the API takes it: whole epoch milliseconds as a number, anything else as written (the service checks it). */
export function rescheduleTimeOfFlag(at: string): number | string {
  return /^\d+$/.test(at) ? Number(at) : at;
}

/** `retryd tasks run <taskId>`: a PENDING task due now. */
export function runCommand(): Command {
  return apiCommand(
    'run',
    "Run a PENDING task now: due at once, its attempts and time budget as they were; its target's breaker and limits still apply",
  )
    .argument('<taskId>')
    .action(async (taskId: string, flags: ApiFlags) => {
      await withClient(flags, async (client) => {
        const task = await client.runTask(taskId);
        printOne(flags, task, () => dueText(task));
      });
    });
}

/** `retryd tasks reschedule <taskId> --at <time>`: a PENDING task due at another time. */
export function rescheduleCommand(): Command {
  return apiCommand('reschedule', 'Make a PENDING task due at another time, earlier or later (a time already past: now)')
    .argument('<taskId>')
    .addOption(
      new Option('--at <time>', "when it is due: an ISO 8601 date-time with a time zone (2030-01-01T09:00:00Z) or epoch ms; at most the end of the task's time budget").makeOptionMandatory(),
    )
    .action(async (taskId: string, flags: ApiFlags & { at: string }) => {
      await withClient(flags, async (client) => {
        const task = await client.rescheduleTask(taskId, rescheduleTimeOfFlag(flags.at));
        printOne(flags, task, () => dueText(task));
      });
    });
}
