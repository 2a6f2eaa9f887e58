import { CircuitState, type CircuitBreakerSnapshot } from '@retryd/core';
import { describe, expect, it } from 'vitest';
import { attemptsOf, audit } from '../chaos/audit.js';
import { ChaosDownstream } from '../chaos/chaos-downstream.js';
import { enqueue, keys, kill9, openAuditStore, serviceArgs, workerIdOf } from '../chaos/chaos-kit.js';
import { targetKeyOf } from '../src/domain/target-key.js';
import { breakerKey, stateAt } from '../src/protection/shared-breaker.js';
import type { Store } from '../src/store/store.js';
import { cleanupAfterEach, startServiceProcess, stopService as stop, type ServiceProcess } from './service-harness.js';
import { POSTGRES_STORE, REDIS_STORE, SQLITE_STORE } from './shared-stores.js';
import { listAll } from './store-reads.js';
import { waitFor } from './wait-for.js';

/**
 * A half-open breaker's probe lost with its instance: two `retryd serve` processes with the default protections share
 * one store; their downstream is down (the breaker opens, its probes fail), then holds every call. The instance whose
 * probe it holds is killed (`kill -9`) with the target's one probe slot (the probe's lease, counted in flight by the
 * gate), and the other must get every task of the target done as that lease lapses, not later. It did not: the lapsed
 * lease kept the slot until the other's lease reaper looked at the store, which an idle one did only every 5 s.
 */

const TASKS = 40;
/** The lease (visibility timeout): shorter than the 5 s an idle engine may go without looking at the store. */
const LEASE_MS = 1_500;
/** Time the survivor has once the lost probe's lease lapsed: the reap, its probes, the breaker's close, every task. */
const AFTER_LEASE_MS = 1_500;

/** The target's breaker as stored, or null. */
async function storedBreaker(store: Store, targetKey: string): Promise<CircuitBreakerSnapshot | null> {
  const stored = await store.targetState.getTargetState('default', breakerKey(targetKey));
  return stored === undefined ? null : (JSON.parse(stored.value) as CircuitBreakerSnapshot);
}

const CASES = [SQLITE_STORE, POSTGRES_STORE, REDIS_STORE].map((store) => [store.name, store] as const);

describe.each(CASES)('%s: the instance holding a half-open breaker\'s probe is killed', (_name, { freshUrl, drop }) => {
  const cleanup = cleanupAfterEach();

  it('the other instance gets every task of the target done within about the lease', async () => {
    const storeUrl = freshUrl();
    cleanup.push(drop);
    // Down: every call is answered 503 (until told otherwise: `misbehave` applies to every request of a key).
    const downstream = new ChaosDownstream({ misbehave: 'fail', times: Number.MAX_SAFE_INTEGER });
    const target = await downstream.start();
    cleanup.push(() => downstream.close());
    const targetKey = targetKeyOf(target);
    const services = await Promise.all([1, 2].map(() => startServiceProcess(serviceArgs(storeUrl, LEASE_MS))));
    for (const service of services) cleanup.push(() => stop(service));
    const store = await openAuditStore(storeUrl);
    cleanup.push(() => store.close());

    const { acknowledged } = await enqueue(services[0]!.url, target, keys('order', TASKS));
    expect(acknowledged).toHaveLength(TASKS);
    // Two probes failed: the first wave's calls are long over, and the next call to go out is a probe.
    const probesFailed = async () => (await storedBreaker(store, targetKey))?.reopenCount ?? 0;
    await waitFor('the breaker to open and two probes to fail', async () => (await probesFailed()) >= 2, 30_000);

    // The downstream now holds every call unanswered: the next probe stays in flight until its instance is killed,
    // and both are frozen as it arrives, so that neither its timeout nor anything else ends it first.
    downstream.misbehave = 'hang';
    await new Promise<void>((resolve) =>
      downstream.once('request', () => {
        for (const service of services) service.child.kill('SIGSTOP');
        resolve();
      }),
    );
    const inFlight = await listAll(store, 'IN_FLIGHT');
    expect(inFlight, 'the probe is the one call in flight').toHaveLength(1);
    const [probe] = inFlight as [(typeof inFlight)[number]];
    const holder = services.find((service) => workerIdOf(service) === probe.leaseOwner) as ServiceProcess;
    const survivor = services.find((service) => service !== holder) as ServiceProcess;
    expect(holder, 'the probe is leased to one of the instances').toBeDefined();
    // Half-open, its one probe slot in the gate taken by the holder's lease.
    expect(stateAt(await storedBreaker(store, targetKey), Date.now())).toBe(CircuitState.HALF_OPEN);
    expect(await store.admin.getTarget({ tenantId: 'default', targetKey }, Date.now())).toMatchObject({ maxInFlight: 1, inFlight: 1 });

    await kill9(holder);
    const killedAt = Date.now();
    downstream.misbehave = 'ok';
    survivor.child.kill('SIGCONT');
    const leaseLapses = (probe.leaseExpiresAt as number) - killedAt;
    await waitFor('every task SUCCEEDED', async () => (await store.admin.countByStatus()).SUCCEEDED === TASKS, 30_000);
    const doneAfterMs = Date.now() - killedAt;
    console.info(
      `${TASKS} tasks done ${doneAfterMs} ms after the kill; the probe's lease lapsed ${leaseLapses} ms after it ` +
        `(lease ${LEASE_MS} ms); ${downstream.totalRequests} calls downstream`,
    );
    expect(doneAfterMs).toBeLessThan(Math.max(0, leaseLapses) + AFTER_LEASE_MS);

    // The lost probe was reaped (its attempt counted once, as lease_expired) and sent again; every promise held.
    const probeAttempts = await attemptsOf(store, probe.taskId);
    expect(probeAttempts.filter((a) => a.outcome === 'lease_expired').map((a) => a.workerId)).toEqual([probe.leaseOwner]);
    const report = await audit(store, acknowledged, downstream);
    expect(report.problems).toEqual([]);
    expect(report.succeeded).toBe(TASKS);
    expect(await stop(survivor)).toBe(0);
  }, 60_000);
});
