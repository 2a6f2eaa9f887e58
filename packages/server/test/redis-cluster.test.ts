import type { RetryPolicy } from '@retryd/core';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisUnavailableError } from '../src/backends/redis/errors.js';
import { PartitionKeys, partitionOf, partitionOfTenant } from '../src/backends/redis/keys.js';
import { RedisStore } from '../src/backends/redis/redis-store.js';
import type { RetryTask } from '../src/domain/task.js';
import { openStore } from '../src/service/open-store.js';
import type { Store } from '../src/store/store.js';
import { T0, makeTask } from './fixtures/tasks.js';
import { describeStoreConformance } from './store-conformance.js';
import { clusterForFile } from './redis-cluster-harness.js';
import { freshPrefix } from './redis-harness.js';
import { IdempotentDownstream, startServiceProcess, stopService as stop, type ServiceProcess } from './service-harness.js';
import { waitFor } from './wait-for.js';
import { insertStoredTasks } from './fixtures/stored-tasks.js';

// The Redis store on a real Redis Cluster (3 masters, 3 replicas on loopback, one cluster for the file): the
// conformance suite unchanged, then `retryd serve` instances on tenants spread over the three masters, through one
// of them killed, a graceful failover of a master (CLUSTER FAILOVER on its replica) and a hard one (SIGKILL).

const clusterOf = clusterForFile();

// Each case on its own prefix: nothing to flush between cases, and the cluster goes with its directory.
describeStoreConformance('redis cluster', async () => new RedisStore({ url: clusterOf().url(freshPrefix()) }));
// One tenant over 4 sub-partitions, so over the three masters: what spans them is merged by the store.
describeStoreConformance('redis cluster, 4 sub-partitions per tenant', async () => new RedisStore({ url: clusterOf().url(freshPrefix()), subPartitions: 4 }), {
  sharedTargetLimits: true,
  completionsAtomicPerPartition: true,
});

// Every key is answered 503 once, so every task retries; short delays keep the runs within seconds.
const policy: RetryPolicy = { maxAttempts: 20, backoffType: 'EXPONENTIAL', initialDelayMs: 1, multiplier: 2, maxDelayMs: 10, jitterType: 'FULL' };

/** A run of `retryd serve` instances on one prefix of the cluster, a downstream, and the test's own store. */
interface Run {
  prefix: string;
  /** One tenant per master: their partitions hash to slots of three different masters. */
  tenants: string[];
  downstream: IdempotentDownstream;
  target: string;
  store: Store;
  services: ServiceProcess[];
}

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

/** The first tenant ids `t0`, `t1`, ... whose partitions fall on each master in turn, one per master. */
async function tenantPerMaster(prefix: string): Promise<string[]> {
  const byMaster = new Map<number, string>();
  for (let i = 0; byMaster.size < 3; i++) {
    const tenant = `t${i}`;
    const master = await clusterOf().masterOf(new PartitionKeys(prefix, partitionOfTenant(tenant)).base);
    if (!byMaster.has(master)) byMaster.set(master, tenant);
  }
  return [...byMaster.values()];
}

async function startRun(instances: number): Promise<Run> {
  const prefix = freshPrefix();
  const downstream = new IdempotentDownstream(1);
  const target = await downstream.start();
  cleanup.push(() => downstream.close());
  const url = clusterOf().url(prefix);
  const args = [
    '--store', url,
    '--allow-targets', '127.0.0.1/32',
    '--attempt-timeout', '1000',
    '--visibility-timeout', '2000',
    '--concurrency', '32',
    '--grace', '1000',
    // The default protections: the downstream is "not ready yet" (see the policy above), so its first wave may open
    // the breaker on any instance, and the probes (retries, which it answers) close it for all of them.
  ];
  const services = await Promise.all(Array.from({ length: instances }, () => startServiceProcess([...args, '--role', 'all'])));
  for (const service of services) cleanup.push(() => stop(service));
  const { store } = await openStore(url);
  cleanup.push(() => store.close());
  return { prefix, tenants: await tenantPerMaster(prefix), downstream, target, store, services };
}

/**
 * Enqueues `perTenant` tasks in each tenant of the run, keys `<tag>-<tenant>-<n>`, through the store, in batches;
 * a batch refused while a failover settles (STORE_UNAVAILABLE, CLUSTERDOWN) is sent again, which the idempotency
 * keys make safe. Resolves with the tasks acknowledged.
 */
async function enqueue(run: Run, tag: string, perTenant: number): Promise<RetryTask[]> {
  const tasks = run.tenants.flatMap((tenantId) => Array.from({ length: perTenant }, (_, n) => taskOf(run, tenantId, `${tag}-${tenantId}-${n}`)));
  for (let i = 0; i < tasks.length; i += 200) {
    const batch = tasks.slice(i, i + 200);
    await waitFor(`batch ${tag} ${i} to be acknowledged`, () => run.store.insertTasks(batch).then(() => true, () => false), 60_000);
  }
  return tasks;
}

/** A task of `tenantId` to the run's downstream, due now, with the idempotency key `key`. */
function taskOf(run: Run, tenantId: string, key: string): RetryTask {
  const now = Date.now();
  return makeTask({ tenantId, idempotencyKey: key, targetUrl: `${run.target}/charge`, policyId: 'inline', policy, nextAttemptAt: now, createdAt: now, updatedAt: now });
}

/**
 * Enqueues one task at a time into `tenantId` until stopped, keeping those acknowledged: the writes that race a
 * master's death.
 */
function enqueueSteadily(run: Run, tenantId: string): { acknowledged: RetryTask[]; stop: () => Promise<void> } {
  const acknowledged: RetryTask[] = [];
  let running = true;
  const loop = (async () => {
    for (let n = 0; running; n++) {
      // A refused insert may still have been applied: the same task is sent again until acknowledged (a duplicate).
      const task = taskOf(run, tenantId, `steady-${n}`);
      while (!(await run.store.insertTasks([task]).then(() => true, () => false))) await new Promise((resolve) => setTimeout(resolve, 10));
      acknowledged.push(task);
    }
  })();
  return {
    acknowledged,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

/** A condition that counts as not yet true while the store is unreachable (a failover settling). */
function meanwhile(check: () => Promise<boolean>): () => Promise<boolean> {
  return () => check().catch(() => false);
}

/**
 * Waits for every task to be SUCCEEDED, then checks each one from the store: attempts numbered 1..n with none
 * recorded twice, one success, last; and the downstream processed each key exactly once. Returns the attempts that
 * ended `lease_expired` (work lost with a killed instance or an unreplicated write, reaped and run again).
 */
async function expectAllSucceeded(run: Run, tasks: readonly RetryTask[]): Promise<number> {
  await waitFor('every key processed downstream', () => tasks.every((t) => run.downstream.processed.has(t.idempotencyKey)), 90_000);
  await waitFor('every task SUCCEEDED', meanwhile(async () => (await run.store.admin.countByStatus()).SUCCEEDED === tasks.length), 60_000);
  const wrong: string[] = [];
  let reaped = 0;
  for (const task of tasks) {
    const stored = await run.store.getTask(task.tenantId, task.taskId);
    const { items: attempts } = await run.store.listAttempts(task.tenantId, task.taskId, { limit: 100 });
    reaped += attempts.filter((a) => a.outcome === 'lease_expired').length;
    const numbers = attempts.map((a) => a.attemptNumber).join();
    const expected = Array.from({ length: stored?.attemptNumber ?? 0 }, (_, n) => n + 1).join();
    const successes = attempts.filter((a) => a.outcome === 'succeeded').length;
    if (stored?.status !== 'SUCCEEDED' || numbers !== expected || successes !== 1 || attempts.at(-1)?.outcome !== 'succeeded') {
      wrong.push(`${task.tenantId}/${task.taskId} ${stored?.status}: attempts ${numbers} (${attempts.map((a) => a.outcome).join()})`);
    }
  }
  expect(wrong).toEqual([]);
  expect(tasks.filter((t) => run.downstream.processed.get(t.idempotencyKey) !== 1)).toEqual([]);
  return reaped;
}

/**
 * Two instances on a fresh run, 200 tasks enqueued per tenant, and the master (with its replica) of the first
 * tenant's slot, which the failover tests fail over: `tag` is that tenant's hash tag.
 */
async function startFailoverRun(): Promise<{ run: Run; tag: string; master: number; replica: number; before: RetryTask[] }> {
  const run = await startRun(2);
  const tag = new PartitionKeys(run.prefix, partitionOfTenant(run.tenants[0] as string)).base;
  const master = await clusterOf().masterOf(tag);
  const replica = await clusterOf().replicaOf(master);
  return { run, tag, master, replica, before: await enqueue(run, 'before', 200) };
}

/** Commands a master ran since its stats were reset, by name, from `INFO commandstats`. */
async function commandCalls(port: number): Promise<Map<string, number>> {
  const text = (await clusterOf().admin(port).info('commandstats')) as string;
  return new Map([...text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map((m) => [m[1] as string, Number(m[2])]));
}

/** What the test and the cluster itself send, not the store. */
const NOT_STORE = new Set(['info', 'config', 'cluster', 'ping', 'client', 'command', 'hello', 'readonly', 'select', 'replconf', 'psync', 'sync', 'monitor']);

describe('one tenant over sub-partitions on Redis Cluster', () => {
  it("spreads one tenant's W1 over the three masters: each runs a third of the store's commands, within 20%", async () => {
    const prefix = freshPrefix();
    const url = clusterOf().url(prefix);
    const tenantId = await clusterOf().tenantOverMasters(prefix);
    const masters = (await clusterOf().view()).filter((n) => n.role === 'master' && !n.failed).map((n) => n.port);
    expect(masters).toHaveLength(3);
    const store = new RedisStore({ url, subPartitions: 3 });
    cleanup.push(() => store.close());
    await store.init();
    // W1: the downstream answers 503 twice per key, then 200.
    const downstream = new IdempotentDownstream(2);
    const target = await downstream.start();
    cleanup.push(() => downstream.close());
    const service = await startServiceProcess([
      '--store', url,
      '--redis-sub-partitions', '3',
      '--allow-targets', '127.0.0.1/32',
      '--concurrency', '64',
      '--role', 'all',
    ]);
    cleanup.push(() => stop(service));
    for (const port of masters) await clusterOf().admin(port).config('RESETSTAT');

    const tasks = Array.from({ length: 3_000 }, (_, n) => {
      const now = Date.now();
      return makeTask({ tenantId, idempotencyKey: `w1-${n}`, targetUrl: `${target}/charge`, policyId: 'inline', policy, nextAttemptAt: now, createdAt: now, updatedAt: now });
    });
    for (let i = 0; i < tasks.length; i += 200) await store.insertTasks(tasks.slice(i, i + 200));
    await waitFor('every key processed downstream', () => tasks.every((t) => downstream.processed.has(t.idempotencyKey)), 120_000);
    await waitFor('every task SUCCEEDED', async () => (await store.countByStatus(tenantId)).SUCCEEDED === tasks.length, 60_000);

    const calls = await Promise.all(
      masters.map(async (port) => [...(await commandCalls(port))].filter(([name]) => !NOT_STORE.has(name)).reduce((sum, [, n]) => sum + n, 0)),
    );
    const total = calls.reduce((a, b) => a + b, 0);
    for (const n of calls) expect(Math.abs(n - total / 3), `${calls.join(' / ')} commands per master`).toBeLessThanOrEqual((0.2 * total) / 3);
    expect(tasks.filter((t) => downstream.processed.get(t.idempotencyKey) !== 1)).toEqual([]);
  });
});

describe('the purge on Redis Cluster', () => {
  it('shares its limit among tenants on all three masters, each earliest first', async () => {
    const prefix = freshPrefix();
    const tenants = await tenantPerMaster(prefix);
    const store = new RedisStore({ url: clusterOf().url(prefix) });
    cleanup.push(() => store.close());
    await store.init();
    const ended = (tenantId: string, i: number) =>
      makeTask({ tenantId, status: 'SUCCEEDED', nextAttemptAt: null, attemptNumber: 1, idempotencyKey: `${tenantId}-${i}`, expiresAt: T0 + i });
    const tasks = tenants.flatMap((tenantId) => [0, 1, 2, 3].map((i) => ended(tenantId, i)));
    await insertStoredTasks(store, tasks);

    const first = await store.purgeExpired(T0 + 10, 6);
    for (const tenantId of tenants) expect(first.filter((p) => p.tenantId === tenantId).map((p) => p.taskId)).toEqual(tasks.filter((t) => t.tenantId === tenantId).slice(0, 2).map((t) => t.taskId));
    const second = await store.purgeExpired(T0 + 10, 6);
    expect([...first, ...second].map((p) => p.taskId).sort()).toEqual(tasks.map((t) => t.taskId).sort());
    expect(await store.purgeExpired(T0 + 10, 6)).toEqual([]);
    for (const tenantId of tenants) {
      expect(await store.getTaskByIdempotencyKey(tenantId, `${tenantId}-0`)).toBeUndefined();
      expect((await store.listTasks({ tenantId, limit: 10 })).items).toEqual([]);
    }
  });
});

describe('retryd serve on Redis Cluster', () => {
  it('runs tasks of tenants on all three masters with three instances, one of them killed mid-run', async () => {
    const run = await startRun(3);
    const tasks = await enqueue(run, 'many', 300);
    const [, , killed] = run.services as [ServiceProcess, ServiceProcess, ServiceProcess];
    await waitFor('a third of the keys processed', () => run.downstream.processed.size >= tasks.length / 3, 60_000);
    killed.child.kill('SIGKILL');
    await killed.exited;
    const reaped = await expectAllSucceeded(run, tasks);
    console.info(`cluster, 3 instances, 1 killed: ${tasks.length} tasks, ${reaped} leases reaped, ${run.downstream.replays} replays`);
    const survivors = run.services.slice(0, 2);
    expect(survivors.flatMap((s) => s.logs.filter((line) => line.event === 'engine_error'))).toEqual([]);
    expect(await Promise.all(survivors.map(stop))).toEqual([0, 0]);
  }, 150_000);

  it('keeps working through a graceful failover of a master (CLUSTER FAILOVER on its replica) and loses nothing', async () => {
    const { run, tag, replica, before } = await startFailoverRun();
    await waitFor('a quarter of the keys processed', () => run.downstream.processed.size >= before.length / 4, 60_000);
    // The replica catches up with its master, which pauses writes meanwhile, then takes its slots over.
    expect(await clusterOf().admin(replica).call('CLUSTER', 'FAILOVER')).toBe('OK');
    await waitFor('the replica to serve the slots', meanwhile(async () => (await clusterOf().masterOf(tag)) === replica), 30_000);
    const after = await enqueue(run, 'after', 200);
    const reaped = await expectAllSucceeded(run, [...before, ...after]);
    const errors = run.services.flatMap((s) => s.logs.filter((line) => line.event === 'engine_error')).length;
    console.info(`graceful failover: ${before.length + after.length} tasks, ${reaped} leases reaped, ${run.downstream.replays} replays, ${errors} engine errors`);
    expect(await Promise.all(run.services.map(stop))).toEqual([0, 0]);
    await clusterOf().waitSettled();
  }, 150_000);

  it('survives a hard kill of a master: its replica takes over, and every task replicated before the kill is run', async () => {
    const { run, tag, master: victim, replica, before } = await startFailoverRun();
    // Acknowledged and replicated: WAIT returns once the replica holds every write the master had acknowledged.
    expect(await clusterOf().admin(victim).call('WAIT', '1', '10000')).toBe(1);
    await waitFor('a quarter of the keys processed', () => run.downstream.processed.size >= before.length / 4, 60_000);
    // Meanwhile one task after another goes to the victim's tenant, unreplicated when the kill comes.
    const steady = enqueueSteadily(run, run.tenants[0] as string);
    await waitFor('a few steady tasks acknowledged', () => steady.acknowledged.length >= 20, 30_000);
    await clusterOf().kill(victim);
    const killedAt = Date.now();
    await waitFor('the replica to take over', meanwhile(async () => (await clusterOf().masterOf(tag)) === replica), 60_000);
    const failoverMs = Date.now() - killedAt;
    const after = await enqueue(run, 'after', 200);
    await steady.stop();
    // What async replication lost: tasks acknowledged by the victim that never reached its replica.
    const found = await Promise.all(steady.acknowledged.map((t) => run.store.getTask(t.tenantId, t.taskId)));
    const lost = steady.acknowledged.filter((_, i) => found[i] === undefined);
    // Completions and claims the victim acknowledged but had not yet sent to its replica are lost with it too: those
    // tasks are found again as they were (PENDING, or IN_FLIGHT until their lease lapses) and run again; the
    // downstream answers the repeat from its idempotency record (a replay). No task acknowledged and replicated
    // before the kill is lost.
    const kept = steady.acknowledged.filter((_, i) => found[i] !== undefined);
    const reaped = await expectAllSucceeded(run, [...before, ...after, ...kept]);
    const errors = run.services.flatMap((s) => s.logs.filter((line) => line.event === 'engine_error')).length;
    console.info(
      `hard kill of a master: replica took over after ${failoverMs} ms; ${before.length + after.length} tasks all SUCCEEDED; ` +
        `of ${steady.acknowledged.length} tasks enqueued one by one across the kill, ${lost.length} acknowledged but lost; ` +
        `${reaped} leases reaped, ${run.downstream.replays} replays, ${errors} engine errors while the slots moved`,
    );
    expect(await Promise.all(run.services.map(stop))).toEqual([0, 0]);
    // Every node agrees on the new owner of the victim's slots before the next case opens a fresh client.
    await clusterOf().waitSettled();
  }, 150_000);

  // Last in the file: it leaves one master and its replica dead.
  it('goes on claiming, reading due times, reaping leases and purging on the other masters while one is gone', async () => {
    const prefix = freshPrefix();
    const tenants = await tenantPerMaster(prefix);
    const reported: unknown[] = [];
    const store = new RedisStore({ url: clusterOf().url(prefix), onError: (error) => reported.push(error) });
    cleanup.push(() => store.close());
    await store.init();
    const tasks = tenants.flatMap((tenantId) => [makeTask({ tenantId }), makeTask({ tenantId, nextAttemptAt: T0 + 5_000 })]);
    await store.insertTasks(tasks);
    const expired = tenants.map((tenantId) => makeTask({ tenantId, status: 'SUCCEEDED', nextAttemptAt: null, attemptNumber: 1, expiresAt: T0 }));
    await insertStoredTasks(store, expired);
    // One tenant over 3 sub-partitions, one on each master: the parts on the masters left go on being claimed.
    const widePrefix = freshPrefix();
    const wideTenant = await clusterOf().tenantOverMasters(widePrefix);
    const wide = new RedisStore({ url: clusterOf().url(widePrefix), subPartitions: 3, onError: () => undefined });
    cleanup.push(() => wide.close());
    await wide.init();
    const wideTasks = Array.from({ length: 30 }, () => makeTask({ tenantId: wideTenant }));
    await wide.insertTasks(wideTasks);
    const masterOfTask = await Promise.all(wideTasks.map((t) => clusterOf().masterOf(new PartitionKeys(widePrefix, partitionOf(t, 3)).base)));

    // The first tenant's master and its replica (if it still has one, after the hard kill above) both die: nothing
    // can take its slots over.
    const master = await clusterOf().masterOf(new PartitionKeys(prefix, partitionOfTenant(tenants[0] as string)).base);
    const replica = await clusterOf().replicaOf(master).catch(() => undefined);
    if (replica !== undefined) await clusterOf().kill(replica);
    await clusterOf().kill(master);

    const claimed = await store.claimDue(T0, { limit: 10, leaseMs: 1_000, workerId: 'w' });
    expect(claimed.map((t) => t.tenantId).sort()).toEqual(tenants.slice(1).sort());
    expect(await store.nextDueAt()).toBe(T0 + 5_000);
    expect(await store.nextLeaseExpiryAt()).toBe(T0 + 1_000);
    expect((await store.findExpiredLeases(T0 + 2_000, 10)).map((t) => t.taskId).sort()).toEqual(claimed.map((t) => t.taskId).sort());
    expect((await store.purgeExpired(T0, 10)).map((p) => p.tenantId).sort()).toEqual(tenants.slice(1).sort());
    // The partitions left out were reported (with whatever the client itself reports about the dead node); a count
    // leaves none out (it would be wrong), so it fails.
    expect(reported.some((error) => error instanceof RedisUnavailableError)).toBe(true);
    await expect(store.admin.countByStatus()).rejects.toBeInstanceOf(RedisUnavailableError);
    const reachable = wideTasks.filter((_, i) => masterOfTask[i] !== master);
    expect(reachable.length).toBeGreaterThan(0);
    expect(reachable.length).toBeLessThan(wideTasks.length);
    const wideClaimed = await wide.claimDue(T0, { limit: 100, leaseMs: 1_000, workerId: 'w' });
    expect(wideClaimed.map((t) => t.taskId).sort()).toEqual(reachable.map((t) => t.taskId).sort());
  }, 60_000);
});
