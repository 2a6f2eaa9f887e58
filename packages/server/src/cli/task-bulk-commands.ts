import { Option, type Command } from 'commander';
import { RetrydApiError, type LiveTaskFilter, type RetrydClient } from '@retryd/client';
import { parseIntegerOption } from '../service/retryd-config.js';
import { EXIT_CODES, apiCommand, exitCodeOfStatus, printOne, UsageError, withClient, type ApiFlags } from './api-command.js';
import { confirmed } from './confirm.js';
import { targetKeyOfFlag } from './tasks-command.js';

/** Tasks a page of `tasks cancel` and `tasks purge` takes, unless `--page-size` says otherwise: the service's default. */
const DEFAULT_PAGE_SIZE = 100;

const FINISHED = ['SUCCEEDED', 'FAILED', 'EXHAUSTED', 'CANCELLED'] as const;

interface PageFlags extends ApiFlags {
  yes?: boolean;
  pageSize: number;
}

interface CancelFlags extends PageFlags {
  status?: 'PENDING' | 'IN_FLIGHT';
  policy?: string;
  target?: string;
  all?: boolean;
}

interface PurgeFlags extends PageFlags {
  status?: (typeof FINISHED)[number][];
  finishedBefore: string;
  target?: string;
}

/** What `tasks cancel` did with a filter, printed as its summary (and as the one JSON document of `--json`). */
export interface BulkCancelSummary {
  cancelled: number;
  cancelRequested: number;
  failed: { taskId: string; status: number; code: string; detail: string }[];
}

const pageOptions = (command: Command) =>
  command
    .option('-y, --yes', 'do not ask for confirmation (needed when stdin is not a terminal)')
    .addOption(
      new Option('--page-size <n>', 'tasks per request, 1 to 1000')
        .default(DEFAULT_PAGE_SIZE)
        .argParser((value) => parseIntegerOption('--page-size', value, 1, 1000)),
    );

/** A one-line counter on stderr while pages land, when it is a terminal. */
function progressLine(): { show: (text: string) => void; end: () => void } {
  const tty = process.stderr.isTTY;
  let shown = false;
  return {
    show: (text) => {
      if (!tty) return;
      process.stderr.write(`\r${text}`);
      shown = true;
    },
    end: () => {
      if (shown) process.stderr.write('\n');
    },
  };
}

/** `retryd tasks cancel <taskId>`, or every live task matching filters, page after page. */
export function cancelCommand(): Command {
  return pageOptions(
    apiCommand(
      'cancel',
      'Cancel a task, or every live task matching --status, --policy and --target (or --all): a PENDING one at once, an IN_FLIGHT one when its attempt ends, never retried; asks first on a terminal unless --yes',
      'the task (or the summary of a bulk cancel) as one JSON document',
    )
      .argument('[taskId]', 'the task to cancel')
      .addOption(new Option('--status <status>', 'only live tasks in this status').choices(['PENDING', 'IN_FLIGHT']))
      .addOption(new Option('--policy <policyId>', 'only tasks of this named policy'))
      .addOption(new Option('--target <targetKey>', 'only tasks of this target (an origin such as https://api.example.com, or any URL of it)'))
      .option('--all', 'every live task (that matches the filters); needed when no filter is given'),
  ).action(async (taskId: string | undefined, flags: CancelFlags) => {
    await withClient(flags, async (client) => {
      const filter: LiveTaskFilter = {
        ...(flags.status === undefined ? {} : { status: flags.status }),
        ...(flags.policy === undefined ? {} : { policyId: flags.policy }),
        ...(flags.target === undefined ? {} : { targetKey: targetKeyOfFlag(flags.target) }),
      };
      const filtered = Object.keys(filter).length > 0 || flags.all === true;
      if (taskId !== undefined && filtered) throw new UsageError('give a task id, or --status, --policy, --target or --all, not both');
      if (taskId === undefined && !filtered) throw new UsageError('give the task id to cancel, or --status, --policy, --target or --all');
      if (taskId !== undefined) return cancelOne(client, taskId, flags);

      const what = `cancel every ${flags.status ?? 'PENDING and IN_FLIGHT'} task${describe({ policy: flags.policy, target: filter.targetKey })} at ${client.url}`;
      if (!(await confirmed(what, flags.yes))) {
        console.error('nothing cancelled');
        return;
      }
      const summary: BulkCancelSummary = { cancelled: 0, cancelRequested: 0, failed: [] };
      const progress = progressLine();
      try {
        for await (const page of client.cancelAllTasks(filter, flags.pageSize)) {
          summary.cancelled += page.cancelled;
          summary.cancelRequested += page.cancelRequested;
          for (const entry of page.results) {
            if (entry.result === 'error' && entry.error !== undefined) {
              summary.failed.push({ taskId: entry.taskId, status: entry.error.status, code: entry.error.code, detail: entry.error.detail });
            }
          }
          progress.show(`cancelled ${summary.cancelled}, cancel requested ${summary.cancelRequested}, failed ${summary.failed.length}`);
        }
      } finally {
        progress.end();
      }
      printOne(flags, summary, () =>
        [`cancelled ${summary.cancelled}, cancel requested ${summary.cancelRequested}, failed ${summary.failed.length}`, ...summary.failed.map((f) => `  ${f.taskId}: ${f.detail} (${f.status} ${f.code})`)].join('\n'),
      );
      const codes = new Set(summary.failed.map((f) => exitCodeOfStatus(f.status)));
      process.exitCode = codes.size === 0 ? EXIT_CODES.OK : codes.size === 1 ? [...codes][0] : EXIT_CODES.SERVICE;
    });
  });
}

async function cancelOne(client: RetrydClient, taskId: string, flags: ApiFlags): Promise<void> {
  const answer = await client.cancelTask(taskId);
  printOne(flags, answer, () =>
    answer.outcome === 'cancelled' ? `cancelled ${taskId}` : `cancel requested: ${taskId} is IN_FLIGHT; cancelled when its attempt ends, never retried`,
  );
}

/** `retryd tasks purge`: finished tasks deleted by hand, page after page, with a total. */
export function purgeCommand(): Command {
  return pageOptions(
    apiCommand(
      'purge',
      "Delete finished tasks that ended before a time, with their attempts, idempotency keys and bodies (an admin key); live tasks are never deleted; asks first on a terminal unless --yes",
      'the total as one JSON document: {"deleted": n}',
    )
      .addOption(new Option('--status <status...>', 'only tasks in these finished statuses (default all four)').choices([...FINISHED]))
      .requiredOption('--finished-before <time>', 'only tasks that ended before this time: ISO 8601 with a time zone (2026-01-01T00:00:00Z) or epoch ms')
      .addOption(new Option('--target <targetKey>', 'only tasks of this target (an origin such as https://api.example.com, or any URL of it)')),
  ).action(async (flags: PurgeFlags) => {
    await withClient(flags, async (client) => {
      const statuses = flags.status ?? [...FINISHED];
      const filter = {
        status: statuses,
        finishedBefore: flags.finishedBefore,
        ...(flags.target === undefined ? {} : { targetKey: targetKeyOfFlag(flags.target) }),
      };
      const what = `delete every ${statuses.join(', ')} task that ended before ${flags.finishedBefore}${describe({ target: filter.targetKey })} at ${client.url}, for good`;
      if (!(await confirmed(what, flags.yes))) {
        console.error('nothing deleted');
        return;
      }
      let deleted = 0;
      const progress = progressLine();
      try {
        for await (const page of client.deleteAllTasks(filter, flags.pageSize)) {
          deleted += page.deleted;
          progress.show(`deleted ${deleted}${page.nextCursor === undefined ? '' : '…'}`);
        }
      } catch (error) {
        // What was deleted stays deleted: say how far it got before the error is reported.
        if (error instanceof RetrydApiError && deleted > 0) console.error(`deleted ${deleted} before the error`);
        throw error;
      } finally {
        progress.end();
      }
      printOne(flags, { deleted }, () => `deleted ${deleted} task${deleted === 1 ? '' : 's'}`);
    });
  });
}

/** The filters in words, for the confirmation: ` of policy p, of target t`, or nothing. */
function describe(filters: { policy?: string | undefined; target?: string | undefined }): string {
  const parts = [filters.policy === undefined ? '' : ` of policy ${filters.policy}`, filters.target === undefined ? '' : ` of target ${filters.target}`];
  return parts.filter((p) => p !== '').join(',');
}
