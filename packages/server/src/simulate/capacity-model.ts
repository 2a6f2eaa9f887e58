import type { CapacityInputs, CapacityStore } from './capacity-inputs.js';

// The sizing model: how many retryd instances, PostgreSQL cores or Redis masters a rate of attempts needs, and what a
// backlog of pending tasks takes, from the CPU per attempt and the bytes per task measured by the benchmarks, and how
// fast one machine takes tasks in, from the CPU per enqueued task. Every function is pure: the same inputs give the same
// figures.
//
// It is a model of CPU and space only. It assumes the costs per attempt stay what they were at W1's batch sizes
// (claims and completions batched per store call, so a busier instance pays no more per attempt) and that the network
// and the disks keep up; it knows nothing of WAL volume, replication lag or the target's own capacity.

/** What stops one store from scaling further, when something does. */
export const CAPACITY_LIMITS = ['one-writer', 'one-primary', 'one-master-per-tenant'] as const;
/** One of {@link CAPACITY_LIMITS}. */
export type CapacityLimit = (typeof CAPACITY_LIMITS)[number];

/** The most attempts/s one machine serves with one instance, its store's server and its target on its cores. */
export interface MachineCeiling {
  store: CapacityStore;
  attemptsPerSec: number;
  /** `instance`: the instance's event loop is full first; `machine`: the machine's cores are. */
  boundBy: 'instance' | 'machine';
}

/**
 * The ceiling of one machine of `inputs.cores` cores running one instance, the store's server and (when
 * `downstreamCpuMsPerAttempt` is set) the target, each busy all the time: the lesser of what the instance's cores
 * serve alone and what the machine's cores serve for everyone's CPU per attempt. This is what W1 measures on the
 * benchmark machine, so it is how the model is checked against it.
 */
export function machineCeiling(store: CapacityStore, inputs: CapacityInputs): MachineCeiling {
  const costs = inputs.costs[store];
  const perAttempt = costs.serviceCpuMsPerAttempt + costs.storeCpuMsPerAttempt + inputs.downstreamCpuMsPerAttempt;
  const { perSec, boundBy } = lesserCeiling(costs.serviceCpuMsPerAttempt, perAttempt, inputs);
  return { store, attemptsPerSec: perSec, boundBy };
}

/**
 * The lesser of what one instance's cores serve at `instanceMs` of its CPU a unit and what the machine's cores serve
 * at `machineMs` of everyone's CPU a unit, and which it is.
 */
function lesserCeiling(instanceMs: number, machineMs: number, inputs: CapacityInputs): { perSec: number; boundBy: 'instance' | 'machine' } {
  const instance = (inputs.instanceCores * 1000) / instanceMs;
  const machine = (inputs.cores * 1000) / machineMs;
  return instance <= machine ? { perSec: instance, boundBy: 'instance' } : { perSec: machine, boundBy: 'machine' };
}

/** What stops one machine's enqueue first. */
export type EnqueueBound = 'instance' | 'store-server' | 'callers' | 'machine' | 'batches-in-flight';

/** The most tasks/s one machine takes in through the API with one instance, its store's server and its callers. */
export interface MachineEnqueueCeiling {
  store: CapacityStore;
  tasksPerSec: number;
  /**
   * `machine`: the machine's cores are full first; `batches-in-flight`: the callers' few batches in flight leave each
   * process idle part of the time, waiting for a batch another one holds; `instance`, `store-server`, `callers`: that
   * process is busy all the time (with enough batches in flight, the busiest one is).
   */
  boundBy: EnqueueBound;
}

/** One process a batch passes through, and its CPU per batch in ms. */
interface Station {
  name: 'instance' | 'store-server' | 'callers';
  msPerBatch: number;
}

/**
 * The enqueue ceiling of one machine of `inputs.cores` cores running one instance, the store's server and (when
 * `clientCpuMsPerEnqueue` is set) the callers: the lesser of what the machine's cores serve for everyone's CPU per task
 * and what `enqueueBatchesInFlight` batches of `enqueueBatchSize` get through the three processes in turn. This is what
 * W2's backlog step measures (batches of 1,000, 4 in flight), so it is how the model is checked against it.
 *
 * Unlike W1's attempts, which a busy instance always has more of, an enqueue is a closed loop: a caller sends its next
 * batch when one is answered. Each batch is parsed by the instance, written by the store's server, built and read back
 * by its caller, each process one batch at a time; with 4 batches among 3 processes, each process is idle part of the
 * time while the batches queue at another. Mean value analysis of that closed network (Reiser and Lavenberg, 1980)
 * gives its throughput exactly for exponential service times; it is within a tenth of W2 on this machine, where taking
 * every process busy all the time is up to a fifth too high.
 */
export function machineEnqueueCeiling(store: CapacityStore, inputs: CapacityInputs): MachineEnqueueCeiling {
  const costs = inputs.costs[store];
  const batch = inputs.enqueueBatchSize;
  const stations: Station[] = [{ name: 'instance', msPerBatch: (costs.serviceCpuMsPerEnqueue * batch) / inputs.instanceCores }];
  if (costs.storeCpuMsPerEnqueue > 0) stations.push({ name: 'store-server', msPerBatch: costs.storeCpuMsPerEnqueue * batch });
  if (inputs.clientCpuMsPerEnqueue > 0) stations.push({ name: 'callers', msPerBatch: inputs.clientCpuMsPerEnqueue * batch });
  const perTask = costs.serviceCpuMsPerEnqueue + costs.storeCpuMsPerEnqueue + inputs.clientCpuMsPerEnqueue;
  const machine = (inputs.cores * 1000) / perTask;
  const busiest = stations.reduce((a, b) => (b.msPerBatch > a.msPerBatch ? b : a));
  const closed = closedLoopBatchesPerMs(stations, inputs.enqueueBatchesInFlight) * batch * 1000;
  if (machine <= closed) return { store, tasksPerSec: machine, boundBy: 'machine' };
  // Within 5% of what the busiest process serves busy all the time: that process is the bound, not the loop.
  const busiestAlone = (batch * 1000) / busiest.msPerBatch;
  return { store, tasksPerSec: closed, boundBy: closed >= 0.95 * busiestAlone ? busiest.name : 'batches-in-flight' };
}

/**
 * Batches per ms through `stations` in a closed loop of `inFlight` batches, each station serving one batch at a time:
 * exact mean value analysis (per station, the time a batch spends there is its own work plus that of the batches found
 * queued, which is the queue of the loop with one batch fewer). Infinite `inFlight`: the busiest station's rate.
 */
function closedLoopBatchesPerMs(stations: readonly Station[], inFlight: number): number {
  if (!Number.isFinite(inFlight)) return 1 / Math.max(...stations.map((s) => s.msPerBatch));
  let queued = stations.map(() => 0);
  let throughput = 0;
  for (let n = 1; n <= inFlight; n++) {
    const times = stations.map((s, i) => s.msPerBatch * (1 + (queued[i] ?? 0)));
    throughput = n / times.reduce((a, b) => a + b, 0);
    queued = times.map((t) => throughput * t);
  }
  return throughput;
}

/** What a deployment needs for a rate of attempts on one store. */
export interface RateSizing {
  store: CapacityStore;
  attemptsPerSec: number;
  /** retryd instances, each using `instanceCores` cores at `headroom`. SQLite: always 1 (one writer). */
  instances: number;
  /** Cores of the store's server(s) at `headroom`; 0 for SQLite, whose work is in the instance. */
  storeCores: number;
  /** PostgreSQL servers of `postgresServerCores` cores, or Redis masters (one core each: one thread); 0 for SQLite. */
  storeServers: number;
  /** The most attempts/s one tenant gets without sub-partitions (Redis: one master), or the store's own ceiling (SQLite). */
  oneTenantAttemptsPerSec: number;
  /** Whether the store serves the rate as retryd runs it today. */
  scales: boolean;
  /** What stops it, or stands in the way of one tenant (Redis), when something does. */
  limit?: CapacityLimit;
}

/** The instances, store cores and store servers that `attemptsPerSec` needs on `store`, and what limits it. */
export function sizeForRate(store: CapacityStore, attemptsPerSec: number, inputs: CapacityInputs): RateSizing {
  const costs = inputs.costs[store];
  const coresFor = (cpuMsPerAttempt: number) => (attemptsPerSec * cpuMsPerAttempt) / 1000 / inputs.headroom;
  const instances = Math.max(1, Math.ceil(coresFor(costs.serviceCpuMsPerAttempt) / inputs.instanceCores));
  const storeCores = coresFor(costs.storeCpuMsPerAttempt);
  const base = { store, attemptsPerSec, storeCores };
  if (store === 'sqlite') {
    // One file, one writer: a second instance on the same file would only wait for the first's write lock.
    const ceiling = (inputs.instanceCores * 1000 * inputs.headroom) / costs.serviceCpuMsPerAttempt;
    const scales = attemptsPerSec <= ceiling;
    return { ...base, instances: 1, storeServers: 0, oneTenantAttemptsPerSec: ceiling, scales, ...(scales ? {} : { limit: 'one-writer' as const }) };
  }
  if (store === 'postgres') {
    const storeServers = Math.max(1, Math.ceil(storeCores / inputs.postgresServerCores));
    const ceiling = (inputs.postgresServerCores * 1000 * inputs.headroom) / costs.storeCpuMsPerAttempt;
    const scales = storeServers === 1;
    return { ...base, instances, storeServers, oneTenantAttemptsPerSec: ceiling, scales, ...(scales ? {} : { limit: 'one-primary' as const }) };
  }
  // A Redis master runs every script on one thread: a master is a core, and a tenant's hash tag is one master.
  const storeServers = Math.max(1, Math.ceil(storeCores));
  const ceiling = (1000 * inputs.headroom) / costs.storeCpuMsPerAttempt;
  const oneMaster = attemptsPerSec <= ceiling;
  return { ...base, instances, storeServers, oneTenantAttemptsPerSec: ceiling, scales: true, ...(oneMaster ? {} : { limit: 'one-master-per-tenant' as const }) };
}

/** What a backlog of pending tasks takes on one store. */
export interface PendingSizing {
  store: CapacityStore;
  pendingTasks: number;
  /** Bytes of the tasks' tables and indexes (SQLite, PostgreSQL: disk) or of Redis memory. */
  bytes: number;
  /** Redis masters of `redisMasterMemoryBytes` the backlog needs; 1 for SQLite and PostgreSQL (one file, one primary). */
  storeServers: number;
  /** Redis: the backlog outgrows one master, so one tenant's backlog needs sub-partitions. */
  limit?: CapacityLimit;
}

/** The bytes `pendingTasks` take on `store`, and the Redis masters they need. */
export function sizeForPending(store: CapacityStore, pendingTasks: number, inputs: CapacityInputs): PendingSizing {
  const bytes = pendingTasks * inputs.costs[store].bytesPerTask;
  if (store !== 'redis') return { store, pendingTasks, bytes, storeServers: 1 };
  const storeServers = Math.max(1, Math.ceil(bytes / inputs.redisMasterMemoryBytes));
  return { store, pendingTasks, bytes, storeServers, ...(storeServers > 1 ? { limit: 'one-master-per-tenant' as const } : {}) };
}

/** The whole report: the one-machine ceilings (attempts and enqueue), then each rate and each backlog on each store. */
export interface CapacityPlan {
  machine: MachineCeiling[];
  machineEnqueue: MachineEnqueueCeiling[];
  rates: RateSizing[];
  pending: PendingSizing[];
}

/** The ceilings of one machine, and the sizing of every rate and backlog, for each of `stores` in the order given. */
export function capacityPlan(
  stores: readonly CapacityStore[],
  rates: readonly number[],
  pending: readonly number[],
  inputs: CapacityInputs,
): CapacityPlan {
  return {
    machine: stores.map((store) => machineCeiling(store, inputs)),
    machineEnqueue: stores.map((store) => machineEnqueueCeiling(store, inputs)),
    rates: stores.flatMap((store) => rates.map((rate) => sizeForRate(store, rate, inputs))),
    pending: stores.flatMap((store) => pending.map((n) => sizeForPending(store, n, inputs))),
  };
}
