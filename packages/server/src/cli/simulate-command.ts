import { Command, Option } from 'commander';
import { ConfigError } from '../service/retryd-config.js';
import {
  DEFAULT_AMPLIFICATION_CLIENTS,
  DEFAULT_AMPLIFICATION_DURATION_MS,
  DEFAULT_FAILURE_RATES,
  simulateAmplification,
  AMPLIFICATION_REQUESTS_PER_SECOND,
} from '../simulate/amplification-model.js';
import { amplificationSvg, amplificationTable } from '../simulate/amplification-report.js';
import { DEFAULT_CONTENTION_RUNS, simulateContention } from '../simulate/contention-model.js';
import { contentionSvg, contentionTable } from '../simulate/contention-report.js';
import { addRunOptions, int, writeSvg } from './simulate-options.js';
import { capacityCommand } from './simulate-capacity-command.js';
import { w7Command } from './simulate-w7-command.js';

/** Most clients the contention model takes: without backoff the work grows with the square of the clients. */
export const MAX_CONTENTION_CLIENTS = 1_000;
const MAX_RUNS = 10_000;

/**
 * `retryd simulate`: seeded, pure simulations of retry strategies (no network, no store), run on a virtual clock
 * with the same `computeDelay`, `planRetry`, `CircuitBreaker` and `RetryBudget` the service uses.
 */
export function simulateCommand(): Command {
  return new Command('simulate')
    .description('Simulate retry strategies on a virtual clock: seeded, no network, a few seconds. Models: contention, amplification, w7; and the sizing model, capacity.')
    .addCommand(contentionCommand())
    .addCommand(amplificationCommand())
    .addCommand(w7Command())
    .addCommand(capacityCommand())
    .exitOverride();
}

interface ContentionFlags {
  clients: number[];
  runs: number;
  seed: number;
  json?: true;
  svg?: string;
}

function contentionCommand(): Command {
  const command = new Command('contention')
    .summary('N clients contending for one row: calls and completion time for each backoff strategy')
    .description(
      'The optimistic-concurrency model of the AWS Architecture Blog post "Exponential Backoff And Jitter" (2015): N clients ' +
        'read a row\'s version and write it conditionally, backing off after each conflict (base 5 ms, cap 2 s) until their ' +
        'write succeeds; every message takes |Normal(10, 2)| ms. Prints the mean calls (writes) and the mean completion time ' +
        'per client count for no backoff, exponential without jitter, full, equal and decorrelated jitter.',
    )
    .addOption(
      new Option('--clients <list>', `client counts, comma-separated; FROM-TO/STEP is a range (1 to ${MAX_CONTENTION_CLIENTS} each)`)
        .default([...range(10, 190, 10)], '10-190/10')
        .argParser(parseClientList),
    )
    .addOption(new Option('--runs <n>', `runs averaged per strategy and client count (1 to ${MAX_RUNS})`).default(DEFAULT_CONTENTION_RUNS).argParser(int('--runs', 1, MAX_RUNS)));
  return addRunOptions(command)
    .addHelpText('after', '\nExamples:\n  retryd simulate contention\n  retryd simulate contention --clients 50,100-190/30 --runs 20 --json\n  retryd simulate contention --svg contention.svg')
    .exitOverride()
    .action((flags: ContentionFlags) => {
      const results = simulateContention({ clients: flags.clients, runs: flags.runs, seed: flags.seed });
      const info = { seed: flags.seed, runs: flags.runs };
      if (flags.svg !== undefined) writeSvg(flags.svg, contentionSvg(results, info));
      process.stdout.write(flags.json ? `${JSON.stringify(results, null, 2)}\n` : contentionTable(results, info));
    });
}

interface AmplificationFlags {
  failureRates: number[];
  clients: number;
  duration: number;
  seed: number;
  json?: true;
  svg?: string;
}

function amplificationCommand(): Command {
  const command = new Command('amplification')
    .summary('retries against a server failing at random: load amplification and success rate per mechanism')
    .description(
      `Clients sending requests at random (Poisson, ${AMPLIFICATION_REQUESTS_PER_SECOND} per second each) to a server that fails ` +
        'each call with a given probability. Prints the load amplification (calls ÷ first calls), the calls per request and the ' +
        'share of requests that succeeded, with no retries, 3 retries (core\'s default backoff), 3 retries under a retry budget, ' +
        "and 3 retries under a circuit breaker (the budget and the breaker with the service's per-target defaults, shared by all " +
        'clients; a refused retry or call ends its request).',
    )
    .addOption(
      new Option('--failure-rates <list>', 'shares of calls the server fails, comma-separated numbers from 0 to 1')
        .default([...DEFAULT_FAILURE_RATES], DEFAULT_FAILURE_RATES.join(','))
        .argParser(parseFailureRates),
    )
    .addOption(new Option('--clients <n>', 'clients sending requests (1 to 10000)').default(DEFAULT_AMPLIFICATION_CLIENTS).argParser(int('--clients', 1, 10_000)))
    .addOption(
      new Option('--duration <ms>', 'virtual time during which requests arrive, in ms; requests still retrying then are followed to their end (1000 to 3600000)')
        .default(DEFAULT_AMPLIFICATION_DURATION_MS)
        .argParser(int('--duration', 1_000, 3_600_000)),
    );
  return addRunOptions(command)
    .addHelpText('after', '\nExamples:\n  retryd simulate amplification\n  retryd simulate amplification --failure-rates 0.5 --json')
    .exitOverride()
    .action((flags: AmplificationFlags) => {
      const results = simulateAmplification({ failureRates: flags.failureRates, clients: flags.clients, durationMs: flags.duration, seed: flags.seed });
      const info = { seed: flags.seed, clients: flags.clients, durationMs: flags.duration };
      if (flags.svg !== undefined) writeSvg(flags.svg, amplificationSvg(results, info));
      process.stdout.write(flags.json ? `${JSON.stringify(results, null, 2)}\n` : amplificationTable(results, info));
    });
}

const CLIENT_ITEM = /^(\d+)(?:-(\d+)(?:\/(\d+))?)?$/;

/**
 * Parses `--clients`: comma-separated counts and ranges `FROM-TO/STEP` (`/STEP` optional, default 1), each count
 * from 1 to {@link MAX_CONTENTION_CLIENTS}, in the order given, without repeats.
 *
 * @throws ConfigError naming the flag and the rule, e.g. `--clients must be … got "0"`
 */
export function parseClientList(value: string): number[] {
  const fail = (): never => {
    throw new ConfigError(
      `--clients must be comma-separated counts or ranges FROM-TO/STEP (FROM <= TO, STEP >= 1), each from 1 to ${MAX_CONTENTION_CLIENTS}, got ${JSON.stringify(value)}`,
    );
  };
  const counts: number[] = [];
  for (const item of value.split(',').map((s) => s.trim())) {
    const match = CLIENT_ITEM.exec(item) ?? fail();
    const from = Number(match[1]);
    const to = match[2] === undefined ? from : Number(match[2]);
    const step = match[3] === undefined ? 1 : Number(match[3]);
    if (from < 1 || to > MAX_CONTENTION_CLIENTS || from > to || step < 1) fail();
    for (const n of range(from, to, step)) if (!counts.includes(n)) counts.push(n);
  }
  return counts;
}

/**
 * Parses `--failure-rates`: comma-separated numbers from 0 to 1, in the order given, without repeats.
 *
 * @throws ConfigError naming the flag and the rule
 */
export function parseFailureRates(value: string): number[] {
  const rates: number[] = [];
  for (const item of value.split(',').map((s) => s.trim())) {
    const rate = /^(?:\d+(?:\.\d*)?|\.\d+)$/.test(item) ? Number(item) : Number.NaN;
    if (!(rate >= 0 && rate <= 1)) throw new ConfigError(`--failure-rates must be comma-separated numbers from 0 to 1, got ${JSON.stringify(value)}`);
    if (!rates.includes(rate)) rates.push(rate);
  }
  return rates;
}

function* range(from: number, to: number, step: number): Generator<number> {
  for (let n = from; n <= to; n += step) yield n;
}
