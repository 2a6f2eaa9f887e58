// The inputs of the sizing model (capacity-model.ts): plain data, measured here or chosen by the operator. The math
// that reads them is pure; `retryd simulate capacity` overrides any of them from flags.

/** The stores the sizing model knows, in report order. */
export const CAPACITY_STORES = ['sqlite', 'postgres', 'redis'] as const;
/** One of {@link CAPACITY_STORES}. */
export type CapacityStore = (typeof CAPACITY_STORES)[number];

/** What one attempt and one pending task cost with one store, as the benchmarks measure them. */
export interface StoreCosts {
  /**
   * CPU time of the retryd process per attempt, in ms (W1's "CPU ms / attempt": utime + stime, so its GC and libuv
   * threads count). With SQLite the store runs inside this process, so this is the store's cost too.
   */
  serviceCpuMsPerAttempt: number;
  /** CPU time of the store's server per attempt, in ms (W1's "store server CPU ms / attempt"); 0 for SQLite. */
  storeCpuMsPerAttempt: number;
  /** Bytes one pending task takes in the store (the space step: tables and indexes, or Redis memory). */
  bytesPerTask: number;
  /**
   * CPU time of the retryd process per task enqueued through `POST /retry-tasks/batch` in batches of 1,000, in ms (W2's
   * "service CPU ms/task" while it takes its backlog in).
   */
  serviceCpuMsPerEnqueue: number;
  /** CPU time of the store's server per task so enqueued, in ms (W2's "store server CPU ms/task"); 0 for SQLite. */
  storeCpuMsPerEnqueue: number;
}

/** Everything the model reads. Every field has a default ({@link DEFAULT_CAPACITY_INPUTS}). */
export interface CapacityInputs {
  /** The costs per store. */
  costs: Readonly<Record<CapacityStore, StoreCosts>>;
  /**
   * Cores of the one machine whose ceiling the model also gives (the "one machine" figure, where the instance, the
   * store's server and, when `downstreamCpuMsPerAttempt` is set, the target all share these cores). Default 2.
   */
  cores: number;
  /**
   * Cores one retryd instance can keep busy. An instance runs its engine on one event loop, so more cores on its host
   * do not make it faster; run more instances instead. Default 1.
   */
  instanceCores: number;
  /** CPU the target spends per request when it shares the machine (as the benchmarks' downstream does), in ms. Default 0. */
  downstreamCpuMsPerAttempt: number;
  /**
   * CPU the callers spend per task enqueued when they share the machine (as W2's load generator does: it builds and
   * sends the batches), in ms. Default 0.
   */
  clientCpuMsPerEnqueue: number;
  /** Tasks per enqueue batch (`POST /retry-tasks/batch`), as the CPU per enqueued task was measured. Default 1,000 (W2's). */
  enqueueBatchSize: number;
  /**
   * Batches the callers keep in flight for the one-machine enqueue ceiling: a caller sends its next batch when one is
   * answered. Infinity: always one waiting at every process. Default 4 (W2's).
   */
  enqueueBatchesInFlight: number;
  /**
   * The share of a core the deployment plans to use, so that a burst, a failover or a slow query has room. The
   * "one machine" ceiling uses every core (what a throughput benchmark measures). Default 0.7.
   */
  headroom: number;
  /** Memory of one Redis master that may hold data, in bytes (the rest is for replication buffers and forks). Default 24 GiB. */
  redisMasterMemoryBytes: number;
  /**
   * Cores of the largest PostgreSQL primary the deployment would run. Default 32: the tasks table is one hot table whose
   * every attempt leaves a dead row version, and autovacuum cleans one table with one worker, so cores past that buy less
   * than the CPU model says.
   */
  postgresServerCores: number;
}

const GIB = 1024 ** 3;

/**
 * The costs measured on this project's 2-core benchmark machine: CPU per attempt from W1 at commit c609137 with the
 * default protections (bench/results/2026-11-29-6.json, the "after" build, median of 3 rounds), bytes per task from
 * the space step of the same report (100,000 W2-like pending tasks per store), CPU per enqueued task from W2's backlog
 * of 1,000,000 through the API on a quiet machine (bench/results/2026-11-30-w2-enqueue-2.json, the median of its rounds). A test checks that
 * these are the figures of those files.
 */
export const MEASURED_COSTS: Readonly<Record<CapacityStore, StoreCosts>> = Object.freeze({
  sqlite: { serviceCpuMsPerAttempt: 0.0893, storeCpuMsPerAttempt: 0, bytesPerTask: 386, serviceCpuMsPerEnqueue: 0.0289, storeCpuMsPerEnqueue: 0 },
  postgres: { serviceCpuMsPerAttempt: 0.087, storeCpuMsPerAttempt: 0.065, bytesPerTask: 528, serviceCpuMsPerEnqueue: 0.0214, storeCpuMsPerEnqueue: 0.0187 },
  redis: { serviceCpuMsPerAttempt: 0.0873, storeCpuMsPerAttempt: 0.0423, bytesPerTask: 943, serviceCpuMsPerEnqueue: 0.0262, storeCpuMsPerEnqueue: 0.01945 },
});

/** The defaults of every input. */
export const DEFAULT_CAPACITY_INPUTS: Readonly<CapacityInputs> = Object.freeze({
  costs: MEASURED_COSTS,
  cores: 2,
  instanceCores: 1,
  downstreamCpuMsPerAttempt: 0,
  clientCpuMsPerEnqueue: 0,
  enqueueBatchSize: 1_000,
  enqueueBatchesInFlight: 4,
  headroom: 0.7,
  redisMasterMemoryBytes: 24 * GIB,
  postgresServerCores: 32,
});

/** The rates the report sizes for, in attempts per second. */
export const DEFAULT_CAPACITY_RATES: readonly number[] = Object.freeze([1_000, 10_000, 100_000, 1_000_000]);
/** The backlogs the report sizes for, in pending tasks. */
export const DEFAULT_CAPACITY_PENDING: readonly number[] = Object.freeze([10_000_000, 1_000_000_000]);
