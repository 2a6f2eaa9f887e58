import { Command, Option } from 'commander';
import {
  CAPACITY_STORES,
  DEFAULT_CAPACITY_INPUTS,
  DEFAULT_CAPACITY_PENDING,
  DEFAULT_CAPACITY_RATES,
  type CapacityInputs,
  type CapacityStore,
  type StoreCosts,
} from '../simulate/capacity-inputs.js';
import { capacityPlan } from '../simulate/capacity-model.js';
import { capacityTable } from '../simulate/capacity-report.js';
import { decimal, decimalList, int, parseChoiceList } from './simulate-options.js';

const GIB = 1024 ** 3;

interface CapacityFlags {
  stores: CapacityStore[];
  rates: number[];
  pending: number[];
  cpuPerAttempt?: number;
  storeCpuPerAttempt?: number;
  bytesPerTask?: number;
  cpuPerEnqueue?: number;
  storeCpuPerEnqueue?: number;
  downstreamCpuPerAttempt: number;
  clientCpuPerEnqueue: number;
  batchSize: number;
  batchesInFlight: number;
  cores: number;
  instanceCores: number;
  headroom: number;
  redisMasterMemory: number;
  postgresServerCores: number;
  json?: true;
}

/** The inputs the flags describe: the measured defaults, with the costs given replacing those of every store named. */
export function capacityInputsOf(flags: CapacityFlags): CapacityInputs {
  const costs = Object.fromEntries(
    CAPACITY_STORES.map((store): [CapacityStore, StoreCosts] => {
      const measured = DEFAULT_CAPACITY_INPUTS.costs[store];
      return [
        store,
        {
          serviceCpuMsPerAttempt: flags.cpuPerAttempt ?? measured.serviceCpuMsPerAttempt,
          // SQLite has no server: its store's work is in the instance's CPU per attempt.
          storeCpuMsPerAttempt: store === 'sqlite' ? 0 : (flags.storeCpuPerAttempt ?? measured.storeCpuMsPerAttempt),
          bytesPerTask: flags.bytesPerTask ?? measured.bytesPerTask,
          serviceCpuMsPerEnqueue: flags.cpuPerEnqueue ?? measured.serviceCpuMsPerEnqueue,
          storeCpuMsPerEnqueue: store === 'sqlite' ? 0 : (flags.storeCpuPerEnqueue ?? measured.storeCpuMsPerEnqueue),
        },
      ];
    }),
  ) as Record<CapacityStore, StoreCosts>;
  return {
    costs,
    cores: flags.cores,
    instanceCores: flags.instanceCores,
    downstreamCpuMsPerAttempt: flags.downstreamCpuPerAttempt,
    clientCpuMsPerEnqueue: flags.clientCpuPerEnqueue,
    enqueueBatchSize: flags.batchSize,
    enqueueBatchesInFlight: flags.batchesInFlight,
    headroom: flags.headroom,
    redisMasterMemoryBytes: flags.redisMasterMemory * GIB,
    postgresServerCores: flags.postgresServerCores,
  };
}

/** `retryd simulate capacity`: the sizing model of docs/scaling.md, from the measured costs or the ones given. */
export function capacityCommand(): Command {
  const d = DEFAULT_CAPACITY_INPUTS;
  return new Command('capacity')
    .summary('instances, PostgreSQL cores or Redis masters for a rate of attempts and a backlog, from measured costs')
    .description(
      'The sizing model of docs/scaling.md: from the CPU per attempt of the service and of the store\'s server and the bytes ' +
        'per pending task (measured by the benchmarks; each overridable), how many retryd instances, PostgreSQL cores and ' +
        'servers or Redis masters each rate of attempts needs, what each backlog takes, and where each store stops scaling. ' +
        "Also the ceilings of one machine of --cores cores running one instance and its store's server: attempts/s, and tasks/s " +
        'taken in through the API (from the CPU per enqueued task).',
    )
    .addOption(
      new Option('--stores <list>', `stores, comma-separated (${CAPACITY_STORES.join(', ')})`)
        .default([...CAPACITY_STORES], CAPACITY_STORES.join(','))
        .argParser((value) => parseChoiceList('--stores', value, CAPACITY_STORES)),
    )
    .addOption(
      new Option('--rates <list>', 'attempts per second to size for, comma-separated (1 to 1e9 each)')
        .default([...DEFAULT_CAPACITY_RATES], DEFAULT_CAPACITY_RATES.join(','))
        .argParser(decimalList('--rates', 1, 1e9)),
    )
    .addOption(
      new Option('--pending <list>', 'pending tasks to size for, comma-separated (1 to 1e12 each)')
        .default([...DEFAULT_CAPACITY_PENDING], DEFAULT_CAPACITY_PENDING.join(','))
        .argParser(decimalList('--pending', 1, 1e12)),
    )
    .addOption(new Option('--cpu-per-attempt <ms>', "the service's CPU per attempt, in ms, for every store (default: measured per store)").argParser(decimal('--cpu-per-attempt', 0.0001, 1000)))
    .addOption(
      new Option('--store-cpu-per-attempt <ms>', "the store server's CPU per attempt, in ms, for PostgreSQL and Redis (default: measured per store)").argParser(
        decimal('--store-cpu-per-attempt', 0.0001, 1000),
      ),
    )
    .addOption(new Option('--bytes-per-task <n>', 'bytes one pending task takes, for every store (default: measured per store)').argParser(decimal('--bytes-per-task', 1, 1e9)))
    .addOption(
      new Option('--cpu-per-enqueue <ms>', "the service's CPU per task enqueued in batches of 1,000, in ms, for every store (default: measured per store)").argParser(
        decimal('--cpu-per-enqueue', 0.0001, 1000),
      ),
    )
    .addOption(
      new Option('--store-cpu-per-enqueue <ms>', "the store server's CPU per task enqueued, in ms, for PostgreSQL and Redis (default: measured per store)").argParser(
        decimal('--store-cpu-per-enqueue', 0.0001, 1000),
      ),
    )
    .addOption(
      new Option('--client-cpu-per-enqueue <ms>', "the callers' CPU per task enqueued when they share the one machine, in ms (0 to 1000)")
        .default(d.clientCpuMsPerEnqueue)
        .argParser(decimal('--client-cpu-per-enqueue', 0, 1000)),
    )
    .addOption(
      new Option('--batch-size <n>', 'tasks per enqueue batch, as the CPU per enqueued task was measured (1 to 100000)')
        .default(d.enqueueBatchSize)
        .argParser(int('--batch-size', 1, 100_000)),
    )
    .addOption(
      new Option('--batches-in-flight <n>', "enqueue batches the callers keep in flight on the one machine (1 to 10000)")
        .default(d.enqueueBatchesInFlight)
        .argParser(int('--batches-in-flight', 1, 10_000)),
    )
    .addOption(
      new Option('--downstream-cpu-per-attempt <ms>', "the target's CPU per request when it shares the one machine, in ms (0 to 1000)")
        .default(d.downstreamCpuMsPerAttempt)
        .argParser(decimal('--downstream-cpu-per-attempt', 0, 1000)),
    )
    .addOption(new Option('--cores <n>', 'cores of the one machine (1 to 4096)').default(d.cores).argParser(decimal('--cores', 1, 4096)))
    .addOption(new Option('--instance-cores <n>', 'cores one retryd instance keeps busy (0.1 to 64)').default(d.instanceCores).argParser(decimal('--instance-cores', 0.1, 64)))
    .addOption(new Option('--headroom <share>', 'share of each core a deployment plans to use (0.01 to 1)').default(d.headroom).argParser(decimal('--headroom', 0.01, 1)))
    .addOption(
      new Option('--redis-master-memory <GiB>', 'memory of a Redis master that may hold data, in GiB (0.01 to 16384)')
        .default(d.redisMasterMemoryBytes / GIB)
        .argParser(decimal('--redis-master-memory', 0.01, 16_384)),
    )
    .addOption(
      new Option('--postgres-server-cores <n>', 'cores of the largest PostgreSQL server (1 to 4096)')
        .default(d.postgresServerCores)
        .argParser(decimal('--postgres-server-cores', 1, 4096)),
    )
    .addOption(new Option('--json', 'print { inputs, machine, rates, pending } as JSON instead of tables'))
    .addHelpText(
      'after',
      '\nExamples:\n  retryd simulate capacity\n  retryd simulate capacity --stores redis --rates 50000 --json\n  retryd simulate capacity --stores postgres --cpu-per-attempt 0.1 --store-cpu-per-attempt 0.08 --cores 16',
    )
    .exitOverride()
    .action((flags: CapacityFlags) => {
      const inputs = capacityInputsOf(flags);
      const plan = capacityPlan(flags.stores, flags.rates, flags.pending, inputs);
      process.stdout.write(flags.json ? `${JSON.stringify({ inputs, ...plan }, null, 2)}\n` : capacityTable(plan, inputs));
    });
}
