import { Command, Option } from 'commander';
import { simulateW7 } from '../simulate/w7-model.js';
import { w7Svg, w7Table } from '../simulate/w7-report.js';
import {
  DEFAULT_W7_TASKS,
  W7_ATTEMPT_TIMEOUT_MS,
  W7_CASE_IDS,
  W7_CONCURRENCY,
  W7_DESIGNS,
  W7_GOOD_TARGETS,
  W7_SERVICE_CONCURRENCY,
  W7_SLOW_BASE_MS,
  W7_SLOW_IN_FLIGHT,
  type W7Design,
} from '../simulate/w7-workload.js';
import { addRunOptions, int, parseChoiceList, writeSvg } from './simulate-options.js';

/** Most tasks a case takes: the dead hour of SRE throttling costs about 7,000 events a task. */
export const MAX_W7_TASKS = 20_000;

interface W7Flags {
  cases: string[];
  designs: W7Design[];
  tasks: number;
  seed: number;
  sendsPerSecond?: number;
  json?: true;
  svg?: string;
}

/** `retryd simulate w7`: the W7 cases against each protection design, beside none. */
export function w7Command(): Command {
  const command = new Command('w7')
    .summary('W7 partial failure: each protection design beside none, with the aims met or not')
    .description(
      `WORKLOADS.md W7 on a virtual clock: per case, N tasks all due at 0, each retried with the W7 policy (exponential from ` +
        `20 ms, ×2, up to 1 s, 30 attempts, full jitter) by a service with ${W7_CONCURRENCY} attempts in flight (e: ` +
        `${W7_SERVICE_CONCURRENCY}, the service's default) and a ${W7_ATTEMPT_TIMEOUT_MS / 1000} s attempt timeout, against a ` +
        'downstream that is not ready yet (a1, a2), fails at random (b20, b50, b90), is overloaded at 500 requests/s (d), ' +
        `serves ${W7_SLOW_IN_FLIGHT} at once in ${W7_SLOW_BASE_MS} ms and queues the rest (e), is dead for an hour (f), or is ` +
        `d on one target among ${W7_GOOD_TARGETS} answering at once, with half the tasks (g). Designs: none (protections off, ` +
        'the reference), landed (the service\'s defaults: breaker, ' +
        'storm detection, the ready-attempt rule, the capacity probe pacing a target found full to what it accepts, 10 ' +
        'attempts in flight until a first success), previous (the defaults before: with a retry budget, a breaker opening on ' +
        '50 failures in a row and closing on three good probes), sre (Google SRE client-side throttling, K = 2, 2 minutes), ' +
        'budget (the retry budget alone), breaker-only (previous without the budget, a breaker opening on 100 failures in ' +
        'a row and closing on one good probe), each design one protection a target. Prints the time until every task ended, ' +
        'calls per task, the busiest 100 ms, goodput (d, e), timeouts, the good targets\' lag (g), the ratios to none and ' +
        'whether each W7 aim is met.',
    )
    .addOption(
      new Option('--cases <list>', `cases, comma-separated (${W7_CASE_IDS.join(', ')})`)
        .default([...W7_CASE_IDS], W7_CASE_IDS.join(','))
        .argParser((value) => parseChoiceList('--cases', value, W7_CASE_IDS)),
    )
    .addOption(
      new Option('--designs <list>', `designs, comma-separated (${W7_DESIGNS.join(', ')}); none always runs first, as the reference`)
        .default([...W7_DESIGNS], W7_DESIGNS.join(','))
        .argParser((value) => parseChoiceList('--designs', value, W7_DESIGNS)),
    )
    .addOption(new Option('--tasks <n>', `tasks per case (1 to ${MAX_W7_TASKS})`).default(DEFAULT_W7_TASKS).argParser(int('--tasks', 1, MAX_W7_TASKS)))
    .addOption(
      new Option('--sends-per-second <n>', 'the most attempts the service sends a second, as a busy or small machine would (100 to 1000000); default: no limit but the concurrency').argParser(
        int('--sends-per-second', 100, 1_000_000),
      ),
    );
  return addRunOptions(command)
    .addHelpText('after', '\nExamples:\n  retryd simulate w7\n  retryd simulate w7 --cases a2,d --designs landed --json\n  retryd simulate w7 --svg w7.svg')
    .exitOverride()
    .action((flags: W7Flags) => {
      const { cases, designs, tasks, seed, sendsPerSecond } = flags;
      const results = simulateW7({ cases, designs, tasks, seed, ...(sendsPerSecond === undefined ? {} : { sendsPerSecond }) });
      const info = { seed: flags.seed, tasks: flags.tasks };
      if (flags.svg !== undefined) writeSvg(flags.svg, w7Svg(results, info));
      process.stdout.write(flags.json ? `${JSON.stringify(results, null, 2)}\n` : w7Table(results, info));
    });
}
