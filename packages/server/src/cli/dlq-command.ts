import { Command, Option } from 'commander';
import { RetrydApiError, type DeadLetterFilter, type RetrydClient, type TaskSummary } from '@retryd/client';
import { EXIT_CODES, apiCommand, exitCodeOfStatus, listCommand, listed, printListing, timeTextOf, UsageError, withClient, type ApiFlags, type ListFlags } from './api-command.js';
import { targetKeyOfFlag, taskTable } from './tasks-command.js';
import { confirm } from './confirm.js';

/** Dead letters replayed at once by `dlq replay`: enough to hide the round trips, few enough to stay polite. */
const REPLAY_CONCURRENCY = 8;

interface FilterFlags {
  reason?: string;
  target?: string;
  status?: 'FAILED' | 'EXHAUSTED';
  policy?: string;
}

/** What the API filters: `--status`, `--policy` and `--target`. */
function serviceFilter(flags: FilterFlags): DeadLetterFilter {
  return {
    ...(flags.status === undefined ? {} : { status: flags.status }),
    ...(flags.policy === undefined ? {} : { policyId: flags.policy }),
    ...(flags.target === undefined ? {} : { targetKey: targetKeyOfFlag(flags.target) }),
  };
}

/**
 * `--reason` is applied here, to the pages read (the API does not filter by reason): `--reason permanent_status`
 * matches every `permanent_status:<code>`.
 */
function reasonFilter(flags: FilterFlags): (task: TaskSummary) => boolean {
  const { reason } = flags;
  return (task) => {
    const r = task.deadLetterReason;
    return reason === undefined || r === reason || (!reason.includes(':') && r?.startsWith(`${reason}:`) === true);
  };
}

const filterOptions = (command: Command) =>
  command
    .addOption(new Option('--status <status>', 'only dead letters in this status').choices(['FAILED', 'EXHAUSTED']))
    .addOption(new Option('--policy <policyId>', 'only dead letters of this named policy'))
    .addOption(new Option('--target <targetKey>', 'only dead letters of this target (an origin such as https://api.example.com, or any URL of it)'))
    .addOption(new Option('--reason <reason>', 'only dead letters with this deadLetterReason: max_attempts, budget, retry_after_beyond_budget, retry_after_beyond_limit, permanent_status (any code) or permanent_status:404, permanent_error, secret_unavailable, target_blocked'));

const hasFilter = (flags: FilterFlags) => flags.reason !== undefined || flags.target !== undefined || flags.status !== undefined || flags.policy !== undefined;

function list(): Command {
  return filterOptions(listCommand('list', 'List dead letters (FAILED and EXHAUSTED tasks) with their reason, newest first; --status, --policy and --target filter in the service, --reason the pages read'))
    .action(async (flags: ListFlags & FilterFlags) => {
      await withClient(flags, async (client) => {
        const filter = serviceFilter(flags);
        const listing = await listed(client, flags, (page) => client.listDeadLetters({ ...filter, ...page }));
        printListing(flags, { ...listing, items: listing.items.filter(reasonFilter(flags)) }, 'dead letters', (tasks) => taskTable(tasks, timeTextOf(flags)));
      });
    });
}

/** What `dlq replay` did, printed as its summary (and as the one JSON document of `--json`). */
export interface ReplaySummary {
  replayed: string[];
  /** Already PENDING or IN_FLIGHT when read just before: replayed before, by this run or another. */
  alreadyRunning: string[];
  failed: { taskId: string; status: number; code: string; detail: string }[];
}

interface ReplayFlags extends ApiFlags, FilterFlags {
  all?: boolean;
  yes?: boolean;
}

function replay(): Command {
  return filterOptions(
    apiCommand('replay', 'Replay dead letters: the ids given, or --all that match the filters; asks first on a terminal unless --yes', 'the summary as one JSON document')
      .argument('[taskIds...]', 'the tasks to replay')
      .option('--all', 'every dead letter (that matches the filters)')
      .option('-y, --yes', 'do not ask for confirmation (needed for --all when stdin is not a terminal)'),
  ).action(async (taskIds: string[], flags: ReplayFlags) => {
    await withClient(flags, async (client) => {
      if (flags.all === true && taskIds.length > 0) throw new UsageError('give task ids or --all, not both');
      if (flags.all !== true && taskIds.length === 0) throw new UsageError('give the task ids to replay, or --all');
      if (flags.all !== true && hasFilter(flags)) throw new UsageError('--status, --policy, --target and --reason go with --all');

      let work: { taskId: string; known?: TaskSummary }[];
      if (flags.all === true) {
        const keep = reasonFilter(flags);
        work = [];
        // Read every page before replaying: a replay takes its task off the dead-letter list the cursor walks.
        for await (const task of client.deadLetters(serviceFilter(flags))) if (keep(task)) work.push({ taskId: task.taskId, known: task });
        if (work.length === 0) {
          console.error('no dead letters match');
          if (flags.json === true) console.log(JSON.stringify({ replayed: [], alreadyRunning: [], failed: [] } satisfies ReplaySummary));
          return;
        }
      } else {
        work = [...new Set(taskIds)].map((taskId) => ({ taskId }));
      }

      if (flags.yes !== true && (flags.all === true || work.length > 1)) {
        const what = `${work.length} dead letter${work.length === 1 ? '' : 's'}`;
        if (!process.stdin.isTTY) {
          if (flags.all === true) throw new UsageError(`--all would replay ${what}: add --yes to confirm when stdin is not a terminal`);
        } else if (!(await confirm(`replay ${what} at ${client.url}? [y/N] `))) {
          console.error('nothing replayed');
          return;
        }
      }

      const summary = await replayEach(client, work);
      if (flags.json === true) console.log(JSON.stringify(summary));
      else printSummary(summary);
      const codes = new Set(summary.failed.map((f) => exitCodeOfStatus(f.status)));
      process.exitCode = codes.size === 0 ? EXIT_CODES.OK : codes.size === 1 ? [...codes][0] : EXIT_CODES.SERVICE;
    });
  });
}

/**
 * Replays each task, a few at a time, with a one-line counter on stderr when it is a terminal. A task given by id is
 * read first: one already PENDING or IN_FLIGHT is counted as already running and left alone. A 401, a 403 or a
 * service that cannot be reached stops the whole run (every other replay would fail the same way).
 */
async function replayEach(client: RetrydClient, work: { taskId: string; known?: TaskSummary }[]): Promise<ReplaySummary> {
  const summary: ReplaySummary = { replayed: [], alreadyRunning: [], failed: [] };
  const showProgress = work.length > 1 && process.stderr.isTTY;
  let done = 0;
  let next = 0;
  const progress = () => {
    if (showProgress) process.stderr.write(`\rreplaying ${done}/${work.length}`);
  };
  const worker = async () => {
    while (next < work.length) {
      const item = work[next++] as { taskId: string; known?: TaskSummary };
      try {
        const before = item.known ?? (await client.getTask(item.taskId));
        if (before.status === 'PENDING' || before.status === 'IN_FLIGHT') summary.alreadyRunning.push(item.taskId);
        else {
          await client.replayTask(item.taskId);
          summary.replayed.push(item.taskId);
        }
      } catch (error) {
        if (!(error instanceof RetrydApiError) || error.status === 401 || error.status === 403) throw error;
        summary.failed.push({ taskId: item.taskId, status: error.status, code: error.problem.code, detail: error.problem.detail });
      }
      done += 1;
      progress();
    }
  };
  progress();
  try {
    await Promise.all(Array.from({ length: Math.min(REPLAY_CONCURRENCY, work.length) }, worker));
  } finally {
    if (showProgress) process.stderr.write('\n');
  }
  return summary;
}

function printSummary(summary: ReplaySummary): void {
  console.log(`replayed ${summary.replayed.length}, already running ${summary.alreadyRunning.length}, failed ${summary.failed.length}`);
  for (const f of summary.failed) console.log(`  ${f.taskId}: ${f.detail} (${f.status} ${f.code})`);
}

/** `retryd dlq list|replay`: dead letters of a running service, through its HTTP API. */
export function dlqCommand(): Command {
  return new Command('dlq')
    .description('Dead letters (FAILED and EXHAUSTED tasks) of a running service, through its HTTP API (--url, --api-key)')
    .addCommand(list())
    .addCommand(replay());
}
