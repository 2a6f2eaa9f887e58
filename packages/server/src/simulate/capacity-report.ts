import type { CapacityInputs } from './capacity-inputs.js';
import type { CapacityLimit, CapacityPlan, EnqueueBound, RateSizing } from './capacity-model.js';
import { formatFixed, formatPercent, textTable } from '../terminal/text-table.js';

/** Why each limit stops its store, as the report and docs/scaling.md say it. */
export const LIMIT_TEXT: Readonly<Record<CapacityLimit, string>> = Object.freeze({
  'one-writer': 'SQLite: one file has one writer, so one instance does all the work',
  'one-primary':
    'PostgreSQL: past one primary (every attempt writes a row version: a row lock, WAL, a dead tuple for vacuum); shard by tenant across servers',
  'one-master-per-tenant': 'Redis: a tenant lives on one master (one thread) unless it is split into sub-partitions',
});

const GIB = 1024 ** 3;

/** What each bound of the enqueue ceiling is called in the report. */
const ENQUEUE_BOUNDS: Readonly<Record<EnqueueBound, string>> = {
  instance: "the instance's event loop",
  'store-server': "the store's server",
  callers: 'the callers',
  machine: "the machine's cores",
  'batches-in-flight': 'the batches in flight',
};

const plural = (n: number, noun: string) => `${formatFixed(n, 0)} ${noun}${n === 1 ? '' : 's'}`;

function servers(row: RateSizing): string {
  if (row.store === 'sqlite') return '–';
  return plural(row.storeServers, row.store === 'redis' ? 'master' : 'server');
}

/** The terminal report: the inputs, the one-machine ceilings, the rates and the backlogs, and the limits met. */
export function capacityTable(plan: CapacityPlan, inputs: CapacityInputs): string {
  const limits = new Set([...plan.rates, ...plan.pending].flatMap((row) => (row.limit === undefined ? [] : [row.limit])));
  return [
    `Sizing from measured costs: instances use ${formatFixed(inputs.instanceCores, 0)} core(s) each, every core planned at ${formatPercent(inputs.headroom, 0)}; ` +
      `PostgreSQL servers of ${formatFixed(inputs.postgresServerCores, 0)} cores, Redis masters of ${formatFixed(inputs.redisMasterMemoryBytes / GIB, 1)} GiB`,
    '',
    'Costs',
    textTable(
      ['store', 'service CPU ms/attempt', 'store server CPU ms/attempt', 'bytes/pending task', 'service CPU ms/enqueue', 'store server CPU ms/enqueue'],
      plan.machine.map(({ store }) => {
        const c = inputs.costs[store];
        return [
          store,
          formatFixed(c.serviceCpuMsPerAttempt, 4),
          formatFixed(c.storeCpuMsPerAttempt, 4),
          formatFixed(c.bytesPerTask, 0),
          formatFixed(c.serviceCpuMsPerEnqueue, 4),
          formatFixed(c.storeCpuMsPerEnqueue, 4),
        ];
      }),
    ),
    '',
    `One machine of ${formatFixed(inputs.cores, 0)} cores: one instance, the store's server${inputs.downstreamCpuMsPerAttempt > 0 ? ' and the target' : ''}, every core busy`,
    textTable(
      ['store', 'attempts/s', 'bound by'],
      plan.machine.map((m) => [m.store, formatFixed(m.attemptsPerSec, 0), m.boundBy === 'instance' ? "the instance's event loop" : "the machine's cores"]),
    ),
    '',
    `Enqueue on the same machine (batches of ${formatFixed(inputs.enqueueBatchSize, 0)} through the API, ${formatFixed(inputs.enqueueBatchesInFlight, 0)} in flight)${inputs.clientCpuMsPerEnqueue > 0 ? ', the callers on its cores too' : ''}`,
    textTable(
      ['store', 'tasks/s', 'bound by'],
      plan.machineEnqueue.map((m) => [m.store, formatFixed(m.tasksPerSec, 0), ENQUEUE_BOUNDS[m.boundBy]]),
    ),
    '',
    'Attempts per second',
    textTable(
      ['store', 'attempts/s', 'instances', 'store cores', 'store servers', 'one tenant up to (attempts/s)', 'scales'],
      plan.rates.map((r) => [
        r.store,
        formatFixed(r.attemptsPerSec, 0),
        formatFixed(r.instances, 0),
        r.store === 'sqlite' ? '–' : formatFixed(r.storeCores, 1),
        servers(r),
        formatFixed(r.oneTenantAttemptsPerSec, 0),
        r.scales ? (r.limit === undefined ? 'yes' : 'yes, sub-partitioned') : 'no',
      ]),
    ),
    '',
    'Pending tasks',
    textTable(
      ['store', 'pending tasks', 'GiB', 'store servers'],
      plan.pending.map((p) => [p.store, formatFixed(p.pendingTasks, 0), formatFixed(p.bytes / GIB, 1), p.store === 'redis' ? plural(p.storeServers, 'master') : '1']),
    ),
    ...(limits.size === 0 ? [] : ['', 'Limits met', ...[...limits].map((limit) => `- ${LIMIT_TEXT[limit]}`)]),
    '',
  ].join('\n');
}
