import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCli as run } from './service-harness.js';
import { decimal, decimalList } from '../src/cli/simulate-options.js';
import { CAPACITY_STORES, DEFAULT_CAPACITY_INPUTS, MEASURED_COSTS, type CapacityInputs, type CapacityStore, type StoreCosts } from '../src/simulate/capacity-inputs.js';
import { capacityPlan, machineCeiling, machineEnqueueCeiling, sizeForPending, sizeForRate } from '../src/simulate/capacity-model.js';

// The committed benchmark report the model's defaults come from, and the downstream's own CPU per request measured
// on the same machine (bench/service/downstream-cost.mjs): W1's target shares the two cores there.
const RESULTS = new URL('../../../bench/results/', import.meta.url);
const report = JSON.parse(readFileSync(new URL('2026-11-29-6.json', RESULTS), 'utf8')) as Report;
const downstream = JSON.parse(readFileSync(new URL('2026-11-29-downstream-cost.json', RESULTS), 'utf8')) as { downstreamCpuMsPerRequest: number };
// W2's enqueue on every store, in rounds (bench/service/w2-enqueue.mjs): the CPU per enqueued task and the rate.
const enqueue = JSON.parse(readFileSync(new URL('2026-11-30-w2-enqueue-2.json', RESULTS), 'utf8')) as EnqueueReport;

interface EnqueueFigures {
  enqueuePerSec: number;
  cpuMsPerTask: number;
  storeCpuMsPerTask: number;
  clientCpuMsPerTask: number;
}
interface EnqueueReport {
  machine: { nproc: number };
  backlog: number;
  rounds: Record<CapacityStore, EnqueueFigures[]>;
  medians: Record<CapacityStore, EnqueueFigures>;
}

interface W1Row {
  id: string;
  role?: string;
  protection?: string;
  attemptsPerSec: number;
  cpuMsPerAttempt: number;
  storeCpuMsPerAttempt?: number;
}
interface Run {
  workload: string;
  store: string;
  data: {
    results?: W1Row[];
    stores?: { store: string; totalBytesPerTask: number }[];
    backlog?: number;
    api?: { sizeAfterBacklog: { total: number } };
  };
}
interface Report {
  environment: { machine: { cores: number } };
  runs: Run[];
}

const W1_ID: Record<CapacityStore, string> = { sqlite: 'retryd-sqlite-full', postgres: 'retryd-postgres', redis: 'retryd-redis' };

function w1Row(store: CapacityStore): W1Row {
  const rows = report.runs.find((r) => r.workload === 'w1')?.data.results ?? [];
  const row = rows.find((r) => r.id === W1_ID[store]);
  if (row === undefined) throw new Error(`no W1 row ${W1_ID[store]} in the report`);
  return row;
}
function runOf(workload: string, store: CapacityStore): Run {
  const run = report.runs.find((r) => r.workload === workload && r.store === store);
  if (run === undefined) throw new Error(`no ${workload} run on ${store} in the report`);
  return run;
}
function measuredCosts(store: CapacityStore): StoreCosts {
  const w1 = w1Row(store);
  const space = runOf('space', store).data.stores?.find((s) => s.store === store);
  const w2 = enqueue.medians[store];
  return {
    serviceCpuMsPerAttempt: w1.cpuMsPerAttempt,
    storeCpuMsPerAttempt: w1.storeCpuMsPerAttempt ?? 0,
    bytesPerTask: space?.totalBytesPerTask ?? Number.NaN,
    serviceCpuMsPerEnqueue: w2.cpuMsPerTask,
    storeCpuMsPerEnqueue: store === 'sqlite' ? 0 : w2.storeCpuMsPerTask,
  };
}
/**
 * The inputs of the benchmark machine: its cores, the reports' own costs, and its downstream and W2's load generator on
 * the same cores (the load generator's CPU per task is the median of the three stores' runs: it does the same work
 * whatever the store).
 */
const benchMachine: CapacityInputs = {
  ...DEFAULT_CAPACITY_INPUTS,
  costs: { sqlite: measuredCosts('sqlite'), postgres: measuredCosts('postgres'), redis: measuredCosts('redis') },
  cores: report.environment.machine.cores,
  downstreamCpuMsPerAttempt: downstream.downstreamCpuMsPerRequest,
  clientCpuMsPerEnqueue: median(CAPACITY_STORES.map((store) => enqueue.medians[store].clientCpuMsPerTask)),
};
function median(values: number[]): number {
  const v = [...values].sort((a, b) => a - b);
  const mid = Math.floor(v.length / 2);
  return v.length % 2 === 1 ? (v[mid] ?? Number.NaN) : ((v[mid - 1] ?? Number.NaN) + (v[mid] ?? Number.NaN)) / 2;
}

describe('the sizing model against the figures measured on the benchmark machine', () => {
  it("its default costs are the committed reports' W1 CPU per attempt, space per task and W2 CPU per enqueued task (rounded)", () => {
    for (const store of CAPACITY_STORES) {
      const measured = benchMachine.costs[store];
      expect(MEASURED_COSTS[store].serviceCpuMsPerAttempt).toBeCloseTo(measured.serviceCpuMsPerAttempt, 4);
      expect(MEASURED_COSTS[store].storeCpuMsPerAttempt).toBeCloseTo(measured.storeCpuMsPerAttempt, 4);
      expect(Math.abs(MEASURED_COSTS[store].bytesPerTask - measured.bytesPerTask)).toBeLessThan(1);
      expect(MEASURED_COSTS[store].serviceCpuMsPerEnqueue).toBeCloseTo(measured.serviceCpuMsPerEnqueue, 4);
      expect(MEASURED_COSTS[store].storeCpuMsPerEnqueue).toBeCloseTo(measured.storeCpuMsPerEnqueue, 4);
    }
  });

  it.each(CAPACITY_STORES)('reproduces W1 on %s within a fifth from its CPU per attempt and the 2 cores', (store) => {
    expect(benchMachine.cores).toBe(2);
    const predicted = machineCeiling(store, benchMachine).attemptsPerSec;
    const measured = w1Row(store).attemptsPerSec;
    expect(Math.abs(predicted / measured - 1)).toBeLessThan(0.2);
  });

  it.each(CAPACITY_STORES)("reproduces W2's enqueue rate on %s within a fifth from its CPU per enqueued task, its 4 batches in flight and the 2 cores", (store) => {
    const predicted = machineEnqueueCeiling(store, benchMachine).tasksPerSec;
    const measured = enqueue.medians[store].enqueuePerSec;
    expect(enqueue.backlog).toBe(1_000_000);
    expect(Math.abs(predicted / measured - 1)).toBeLessThan(0.2);
  });

  it.each(CAPACITY_STORES)("reproduces W2's backlog of a million tasks on %s within a fifth from the bytes per task", (store) => {
    const w2 = runOf('w2', store).data;
    const predicted = sizeForPending(store, w2.backlog ?? 0, benchMachine).bytes;
    const measured = w2.api?.sizeAfterBacklog.total ?? Number.NaN;
    expect(w2.backlog).toBe(1_000_000);
    expect(Math.abs(predicted / measured - 1)).toBeLessThan(0.2);
  });
});

describe("docs/scaling.md's sizing table", () => {
  const docs = readFileSync(new URL('../../../docs/scaling.md', import.meta.url), 'utf8').split('### For 1k to 1M attempts/s')[1] ?? '';
  const row = (label: string) => docs.split('\n').find((line) => line.startsWith(`| ${label} |`)) ?? '';
  const count = (n: number, noun: string) => `${n.toLocaleString('en-US')} ${noun}${n === 1 ? '' : 's'}`;

  it('says what the model gives at its defaults for each rate and backlog', () => {
    const d = DEFAULT_CAPACITY_INPUTS;
    for (const rate of [1_000, 10_000, 100_000, 1_000_000]) {
      const postgres = sizeForRate('postgres', rate, d);
      expect(row('PostgreSQL')).toContain(count(postgres.instances, 'instance'));
      const redis = sizeForRate('redis', rate, d);
      expect(row('Redis')).toContain(`${count(redis.instances, 'instance')}, ${count(redis.storeServers, 'master')}`);
    }
    expect(row('PostgreSQL')).toContain(`**${sizeForRate('postgres', 1_000_000, d).storeServers} primaries**`);
    expect(row('SQLite')).toContain(`**past one writer** (${Math.round(sizeForRate('sqlite', 10_000, d).oneTenantAttemptsPerSec).toLocaleString('en-US')}/s)`);
    expect(row('Redis')).toContain(`${count(sizeForPending('redis', 1e9, d).storeServers, 'master')} |`);
  });
});

describe('the sizing model', () => {
  const inputs: CapacityInputs = {
    ...DEFAULT_CAPACITY_INPUTS,
    costs: {
      sqlite: { serviceCpuMsPerAttempt: 0.1, storeCpuMsPerAttempt: 0, bytesPerTask: 400, serviceCpuMsPerEnqueue: 0.02, storeCpuMsPerEnqueue: 0 },
      postgres: { serviceCpuMsPerAttempt: 0.1, storeCpuMsPerAttempt: 0.05, bytesPerTask: 500, serviceCpuMsPerEnqueue: 0.02, storeCpuMsPerEnqueue: 0.03 },
      redis: { serviceCpuMsPerAttempt: 0.1, storeCpuMsPerAttempt: 0.04, bytesPerTask: 1000, serviceCpuMsPerEnqueue: 0.02, storeCpuMsPerEnqueue: 0.01 },
    },
    headroom: 0.5,
    postgresServerCores: 32,
    redisMasterMemoryBytes: 1e9,
  };

  it('sizes instances and store cores from the CPU per attempt at the headroom, and says where each store stops', () => {
    // 100,000 attempts/s × 0.1 ms = 10 cores of instances, 20 at half of each core.
    expect(sizeForRate('postgres', 100_000, inputs)).toEqual({
      store: 'postgres', attemptsPerSec: 100_000, storeCores: 10, instances: 20, storeServers: 1, oneTenantAttemptsPerSec: 320_000, scales: true,
    });
    expect(sizeForRate('postgres', 1_000_000, inputs)).toMatchObject({ storeCores: 100, storeServers: 4, scales: false, limit: 'one-primary' });
    // A Redis master is one thread: 0.04 ms an attempt at half a core is 12,500 attempts/s a master, and a tenant's.
    expect(sizeForRate('redis', 10_000, inputs)).toMatchObject({ storeServers: 1, oneTenantAttemptsPerSec: 12_500, scales: true });
    expect(sizeForRate('redis', 10_000, inputs).limit).toBeUndefined();
    expect(sizeForRate('redis', 100_000, inputs)).toMatchObject({ storeCores: 8, storeServers: 8, scales: true, limit: 'one-master-per-tenant' });
    // SQLite: one instance does everything, up to half of its core.
    expect(sizeForRate('sqlite', 5_000, inputs)).toMatchObject({ instances: 1, storeServers: 0, oneTenantAttemptsPerSec: 5_000, scales: true });
    expect(sizeForRate('sqlite', 5_001, inputs)).toMatchObject({ instances: 1, scales: false, limit: 'one-writer' });
  });

  it('sizes a backlog from the bytes per task, and Redis masters from their memory', () => {
    expect(sizeForPending('postgres', 1e9, inputs)).toEqual({ store: 'postgres', pendingTasks: 1e9, bytes: 5e11, storeServers: 1 });
    expect(sizeForPending('redis', 1e6, inputs)).toEqual({ store: 'redis', pendingTasks: 1e6, bytes: 1e9, storeServers: 1 });
    expect(sizeForPending('redis', 1e7, inputs)).toMatchObject({ storeServers: 10, limit: 'one-master-per-tenant' });
  });

  it('gives the one-machine ceiling by whichever is full first, the instance or the cores', () => {
    expect(machineCeiling('sqlite', { ...inputs, cores: 2 })).toEqual({ store: 'sqlite', attemptsPerSec: 10_000, boundBy: 'instance' });
    // 0.1 + 0.05 + 0.05 ms an attempt on 2 cores: 10,000/s, below the instance's 10,000 only with the target on them too.
    expect(machineCeiling('postgres', { ...inputs, cores: 2, downstreamCpuMsPerAttempt: 0.05 })).toEqual({ store: 'postgres', attemptsPerSec: 10_000, boundBy: 'instance' });
    expect(machineCeiling('postgres', { ...inputs, cores: 2, downstreamCpuMsPerAttempt: 0.1 }).boundBy).toBe('machine');
  });

  it('gives the one-machine enqueue ceiling from the CPU per enqueued task, the callers counted when they share the cores', () => {
    // 0.02 ms a task: 50,000/s from one instance's core, whatever the batches in flight, with no other process.
    expect(machineEnqueueCeiling('sqlite', { ...inputs, cores: 2 })).toEqual({ store: 'sqlite', tasksPerSec: 50_000, boundBy: 'instance' });
    // 0.02 + 0.03 + 0.03 ms a task on 2 cores: 25,000/s, below what 4 batches in flight get through the three (24,464/s) only with more of them.
    expect(machineEnqueueCeiling('postgres', { ...inputs, cores: 2, clientCpuMsPerEnqueue: 0.03, enqueueBatchesInFlight: 64 })).toEqual({
      store: 'postgres',
      tasksPerSec: 25_000,
      boundBy: 'machine',
    });
  });

  it('gives the enqueue of a few batches in flight by mean value analysis: each process waits for the batches queued at the others', () => {
    // Two processes of 20 ms a batch (1,000 tasks): n batches in flight get n ÷ (n + 1) of one process's 50 batches/s.
    const two = { ...inputs, cores: 4, costs: { ...inputs.costs, postgres: { ...inputs.costs.postgres, serviceCpuMsPerEnqueue: 0.02, storeCpuMsPerEnqueue: 0.02 } } };
    expect(machineEnqueueCeiling('postgres', { ...two, enqueueBatchesInFlight: 1 })).toEqual({ store: 'postgres', tasksPerSec: 25_000, boundBy: 'batches-in-flight' });
    expect(machineEnqueueCeiling('postgres', { ...two, enqueueBatchesInFlight: 3 }).tasksPerSec).toBeCloseTo(37_500, 6);
    // Enough in flight, the busiest process is busy all the time: it is the bound.
    expect(machineEnqueueCeiling('postgres', { ...two, enqueueBatchesInFlight: 39 })).toMatchObject({ tasksPerSec: 48_750, boundBy: 'instance' });
    expect(machineEnqueueCeiling('redis', { ...two, enqueueBatchesInFlight: Infinity })).toEqual({ store: 'redis', tasksPerSec: 50_000, boundBy: 'instance' });
    // 20, 30 and 30 ms a batch, 4 in flight: 24,464/s, under the 2 cores' 25,000.
    const three = machineEnqueueCeiling('postgres', { ...inputs, cores: 2, clientCpuMsPerEnqueue: 0.03 });
    expect(three.boundBy).toBe('batches-in-flight');
    expect(three.tasksPerSec).toBeCloseTo(24_464, 0);
    // The batch size scales the work a batch takes, not the tasks a second.
    expect(machineEnqueueCeiling('postgres', { ...two, enqueueBatchSize: 100, enqueueBatchesInFlight: 3 }).tasksPerSec).toBeCloseTo(37_500, 6);
  });

  it('plans each store in the order given, every rate and backlog', () => {
    const plan = capacityPlan(['redis', 'sqlite'], [1_000, 10_000], [1e7], inputs);
    expect(plan.machine.map((m) => m.store)).toEqual(['redis', 'sqlite']);
    expect(plan.machineEnqueue.map((m) => m.store)).toEqual(['redis', 'sqlite']);
    expect(plan.rates.map((r) => `${r.store} ${r.attemptsPerSec}`)).toEqual(['redis 1000', 'redis 10000', 'sqlite 1000', 'sqlite 10000']);
    expect(plan.pending.map((p) => p.store)).toEqual(['redis', 'sqlite']);
  });
});

describe('the number flags of retryd simulate capacity', () => {
  it('take decimals and exponents within their range, and name the flag and the rule otherwise', () => {
    const headroom = decimal('--headroom', 0.01, 1);
    expect(headroom('0.7')).toBe(0.7);
    expect(headroom('.5')).toBe(0.5);
    expect(headroom('1')).toBe(1);
    for (const bad of ['0', '1.01', '-0.5', '', 'NaN', '0x1', '70%']) {
      expect(() => headroom(bad)).toThrow(`--headroom must be a number from 0.01 to 1, got ${JSON.stringify(bad)}`);
    }
    const rates = decimalList('--rates', 1, 1e9);
    expect(rates('1e3, 1.5e4,1000')).toEqual([1_000, 15_000]);
    expect(() => rates('1000,')).toThrow('--rates must be comma-separated numbers from 1 to 1000000000, got "1000,"');
  });
});

describe('retryd simulate capacity', () => {
  it('--json prints the inputs, the one-machine ceilings, the rates and the backlogs, with the costs given', async () => {
    const { code, stdout, stderr } = await run(['simulate', 'capacity', '--stores', 'redis', '--rates', '1e5', '--pending', '1e9', '--store-cpu-per-attempt', '0.05', '--headroom', '0.5', '--json']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const out = JSON.parse(stdout) as { inputs: CapacityInputs; machine: unknown[]; rates: Record<string, unknown>[]; pending: Record<string, unknown>[] };
    expect(Object.keys(out)).toEqual(['inputs', 'machine', 'machineEnqueue', 'rates', 'pending']);
    expect(out.inputs.costs.redis).toEqual({ ...MEASURED_COSTS.redis, storeCpuMsPerAttempt: 0.05 });
    expect(out.machine).toHaveLength(1);
    // 100,000 × 0.05 ms = 5 cores, 10 at half each: ten masters, each one thread.
    expect(out.rates).toEqual([expect.objectContaining({ store: 'redis', attemptsPerSec: 100_000, storeCores: 10, storeServers: 10, limit: 'one-master-per-tenant' })]);
    expect(out.pending).toEqual([expect.objectContaining({ store: 'redis', pendingTasks: 1e9, bytes: 1e9 * MEASURED_COSTS.redis.bytesPerTask })]);
  });

  it('prints tables by default, and the limits the rates meet', async () => {
    const { code, stdout } = await run(['simulate', 'capacity']);
    expect(code).toBe(0);
    // 93 cores of PostgreSQL at 70%: three primaries of 32 cores.
    expect(stdout).toMatch(/^postgres +1,000,000 +125 +92.9 +3 servers +[\d,]+ +no$/m);
    expect(stdout).toContain('SQLite: one file has one writer');
  });

  it.each([
    [['--cpu-per-attempt', '0'], '--cpu-per-attempt must be a number from 0.0001 to 1000, got "0"'],
    [['--headroom', '1.5'], '--headroom must be a number from 0.01 to 1, got "1.5"'],
    [['--cores', 'two'], '--cores must be a number from 1 to 4096, got "two"'],
    [['--rates', '1000,x'], '--rates must be comma-separated numbers from 1 to 1000000000, got "1000,x"'],
    [['--stores', 'mysql'], '--stores must be comma-separated names from sqlite, postgres, redis, got "mysql"'],
    [['--batches-in-flight', '2.5'], '--batches-in-flight must be an integer from 1 to 10000, got "2.5"'],
    [['--batch-size', '0'], '--batch-size must be an integer from 1 to 100000, got "0"'],
  ])('%j stops with one line naming the flag and its rule', async (args, message) => {
    const { code, stdout, stderr } = await run(['simulate', 'capacity', ...args]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.trim()).toBe(`retryd: ${message}`);
  });
});
