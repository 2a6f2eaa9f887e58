import { describe, expect, it } from 'vitest';
import { openStore } from '../src/service/open-store.js';
import type { Store } from '../src/store/store.js';
import { IdempotentDownstream, cleanupAfterEach, startServiceProcess, stopService as stop, type ServiceProcess } from './service-harness.js';
import { POSTGRES_STORE, REDIS_STORE, type SharedStore } from './shared-stores.js';
import { attemptsOf, listAll } from './store-reads.js';
import { waitFor } from './wait-for.js';

/**
 * Several `retryd serve` processes on one PostgreSQL or Redis store, one of them killed and another frozen past its
 * lease mid-run (issue 4, "Many instances"). Everything here is real: the built CLI, the shared servers (each run on
 * its own schema / key prefix), a downstream on loopback, and signals to the processes.
 */

const TASKS = 5_000;
const BATCH = 1_000;
const ATTEMPT_TIMEOUT_MS = 1_000;
const LEASE_MS = 2_000;
const ANSWER_MS = 50;
// Every key is answered 503 once, so every task retries; the short delays keep 10,000+ attempts within seconds.
const policy = { maxAttempts: 20, backoffType: 'EXPONENTIAL', initialDelayMs: 1, multiplier: 2, maxDelayMs: 10, jitterType: 'FULL' };

const STORES: SharedStore[] = [POSTGRES_STORE, REDIS_STORE];

/** The `workerId` an instance's start line names: the owner on its leases and in the attempt log. */
function workerIdOf(service: ServiceProcess): string {
  const id = service.logs.find((line) => line.event === 'start')?.workerId;
  if (typeof id !== 'string') throw new Error('the start line names no workerId');
  return id;
}

/** The leases `workerId` holds now: task id → fencing token. */
async function leasesOf(store: Store, workerId: string): Promise<Map<string, number>> {
  const held = await listAll(store, 'IN_FLIGHT');
  return new Map(held.filter((task) => task.leaseOwner === workerId).map((task) => [task.taskId, task.fencingToken]));
}

/**
 * The leases a stopped instance holds once the store has settled: a statement it sent just before SIGSTOP still runs
 * in the server (a batch completion, say), so one read can list leases that are completed a moment later. Two equal
 * reads in a row, 100 ms apart, mean nothing of the instance's is still in flight.
 */
async function settledLeasesOf(store: Store, workerId: string): Promise<Map<string, number>> {
  let before = await leasesOf(store, workerId);
  const deadline = Date.now() + 10_000;
  for (;;) {
    await new Promise((r) => setTimeout(r, 100));
    const now = await leasesOf(store, workerId);
    if (now.size === before.size && [...now].every(([taskId, token]) => before.get(taskId) === token)) return now;
    if (Date.now() > deadline) throw new Error(`the leases of ${workerId} did not settle after it was stopped`);
    before = now;
  }
}

/**
 * Freezes `service` (SIGSTOP) at a moment it holds leases and returns them, settled. A lease seen held a moment before
 * can be completed by a batch already on its way, so the check runs after the freeze: if the frozen instance holds
 * none, it runs on until it holds some again, and is frozen again.
 */
async function freezeHoldingLeases(store: Store, service: ServiceProcess, workerId: string): Promise<Map<string, number>> {
  for (;;) {
    await waitFor(`${workerId} to hold leases`, async () => (await leasesOf(store, workerId)).size > 0, 60_000);
    service.child.kill('SIGSTOP');
    const held = await settledLeasesOf(store, workerId);
    if (held.size > 0) return held;
    service.child.kill('SIGCONT');
  }
}

/** Maps `items` through `fn`, `width` at a time. */
async function mapLimited<T, R>(items: readonly T[], width: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: width }, lane));
  return results;
}

/** Of `taskIds`, those whose attempt log holds a `lease_expired` attempt of `workerId`: the leases others reaped. */
async function reapedFrom(store: Store, workerId: string, taskIds: Iterable<string>): Promise<Set<string>> {
  const ids = [...taskIds];
  const logs = await mapLimited(ids, 16, (id) => attemptsOf(store, id));
  return new Set(ids.filter((_, i) => logs[i]?.some((a) => a.outcome === 'lease_expired' && a.workerId === workerId)));
}

const CASES = STORES.map((store) => [store.name, store] as const);

describe.each(CASES)('%s: three retryd instances on one store, one killed and one frozen mid-run', (_name, { freshUrl, drop }) => {
  const cleanup = cleanupAfterEach();

  it('runs 5,000 flaky tasks to SUCCEEDED, records no attempt twice and fences out the frozen instance', async () => {
    const storeUrl = freshUrl();
    cleanup.push(drop);
    // Each answer takes 50 ms: the calls of a backlog the breaker held and let go at once (retries, which succeed)
    // still take a few seconds, so that the instances are killed and frozen mid-run, not after the last key.
    const downstream = new IdempotentDownstream(1, ANSWER_MS);
    const target = await downstream.start();
    cleanup.push(() => downstream.close());
    const common = [
      '--store', storeUrl,
      '--allow-targets', '127.0.0.1/32',
      '--attempt-timeout', String(ATTEMPT_TIMEOUT_MS),
      '--visibility-timeout', String(LEASE_MS),
      '--concurrency', '64',
      '--grace', '1000',
      // The default protections: this "not ready yet" downstream may open the breaker with its first wave, on any
      // instance, and the probes (retries, which it answers) close it for all of them.
    ];
    // All at once: the migrations run from several instances together, as in a real roll-out.
    const [api, a, b, c] = await Promise.all([
      startServiceProcess([...common, '--role', 'api']),
      startServiceProcess([...common, '--role', 'all']),
      startServiceProcess([...common, '--role', 'all']),
      startServiceProcess([...common, '--role', 'all']),
    ]);
    for (const service of [api, a, b, c]) cleanup.push(() => stop(service));
    const [aId, bId, cId] = [workerIdOf(a), workerIdOf(b), workerIdOf(c)];
    expect(new Set([aId, bId, cId]).size).toBe(3);
    // The test's own view of the store, for what the API does not show (lease owners, fencing tokens).
    const { store } = await openStore(storeUrl);
    cleanup.push(() => store.close());

    // Enqueued through the API-only instance: the workers of the others are woken through the store.
    const keys: string[] = [];
    for (let offset = 0; offset < TASKS; offset += BATCH) {
      const tasks = Array.from({ length: BATCH }, (_, i) => {
        const key = `order-${offset + i}`;
        keys.push(key);
        return { targetUrl: `${target}/charge`, method: 'POST', idempotencyKey: key, body: { n: offset + i }, policy };
      });
      const res = await fetch(`${api.url}/retry-tasks/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ tasks }),
      });
      expect(res.status).toBe(200);
      const { results } = (await res.json()) as { results: { status: number }[] };
      expect(results.filter((r) => r.status !== 201)).toEqual([]);
    }

    // kill -9 C while it holds leases: what it claimed is only recovered once those leases lapse. It is frozen first,
    // so the leases it is killed with are the ones it held, not ones a completion on its way was about to settle.
    await waitFor('C to be mid-run', () => downstream.processed.size >= TASKS / 10, 60_000);
    const lostWithC = await freezeHoldingLeases(store, c, cId);
    c.child.kill('SIGKILL');
    await c.exited;

    // SIGSTOP B while it holds leases.
    const frozen = await freezeHoldingLeases(store, b, bId);
    expect(downstream.processed.size, 'B was frozen mid-run').toBeLessThan(TASKS);

    // Frozen past its lease: A reaps B's lapsed leases (a lease_expired attempt each) and runs the tasks again.
    await waitFor(
      "B's leases to lapse and be reaped",
      async () => {
        const held = await leasesOf(store, bId);
        return [...frozen].every(([taskId, token]) => held.get(taskId) !== token);
      },
      30_000,
    );
    const reapedFromB = await reapedFrom(store, bId, frozen.keys());
    expect(reapedFromB.size).toBeGreaterThan(0);
    b.child.kill('SIGCONT');

    // B wakes up with results for tasks that have a new owner: the store refuses each by its fencing token.
    const fencedOut = () =>
      new Set(b.logs.filter((line) => line.event === 'fenced_out').map((line) => String(line.taskId)));
    await waitFor('B to report its late completions fenced out', () => [...reapedFromB].every((id) => fencedOut().has(id)), 30_000);

    await waitFor('every key processed downstream', () => downstream.processed.size === TASKS, 90_000);
    await waitFor('every task SUCCEEDED', async () => (await store.admin.countByStatus()).SUCCEEDED === TASKS, 30_000);

    // Every task, from the store: SUCCEEDED, attempts numbered 1..n with none recorded twice, one success, last.
    const tasks = await listAll(store);
    expect(tasks).toHaveLength(TASKS);
    const logs = await mapLimited(tasks, 16, (task) => attemptsOf(store, task.taskId));
    const wrong: string[] = [];
    tasks.forEach((task, i) => {
      const attempts = logs[i] ?? [];
      const numbers = attempts.map((attempt) => attempt.attemptNumber);
      const expected = Array.from({ length: task.attemptNumber }, (_, n) => n + 1);
      const successes = attempts.filter((attempt) => attempt.outcome === 'succeeded').length;
      if (task.status !== 'SUCCEEDED' || numbers.join() !== expected.join() || successes !== 1 || attempts.at(-1)?.outcome !== 'succeeded') {
        wrong.push(`${task.taskId} ${task.status}: attempts ${numbers.join()} (${attempts.map((x) => x.outcome).join()})`);
      }
    });
    expect(wrong).toEqual([]);

    // C's lost leases were reaped too: an attempt it never reported is counted once, as lease_expired.
    const reapedFromC = await reapedFrom(store, cId, lostWithC.keys());
    expect(reapedFromC.size).toBeGreaterThan(0);

    // The API shows the same for a fenced-out task: the reaped attempt, then the retries, each number once.
    const [sample] = reapedFromB;
    const res = await fetch(`${a.url}/retry-tasks/${sample}/attempts?limit=100`);
    expect(res.status).toBe(200);
    const shown = ((await res.json()) as { items: { attemptNumber: number; outcome: string }[] }).items;
    expect(shown.map((x) => x.attemptNumber)).toEqual(shown.map((_, n) => n + 1));
    expect(shown.map((x) => x.outcome)).toContain('lease_expired');
    expect(shown.at(-1)?.outcome).toBe('succeeded');

    // The downstream processed each key exactly once; replays of an already processed key were answered, not redone.
    expect(keys.filter((key) => downstream.processed.get(key) !== 1)).toEqual([]);
    console.info(
      `${TASKS} tasks, ${[...downstream.requests.values()].reduce((n, v) => n + v, 0)} requests downstream, ` +
        `${downstream.replays} replays; leases reaped from killed C: ${reapedFromC.size} of ${lostWithC.size} it held, ` +
        `from frozen B: ${reapedFromB.size} of ${frozen.size}; late completions of B fenced out: ${fencedOut().size}`,
    );

    // Nothing went wrong inside the survivors, and they stop cleanly (B too, after its freeze).
    const engineErrors = [a, b].flatMap((service) => service.logs.filter((line) => line.event === 'engine_error'));
    expect(engineErrors).toEqual([]);
    expect(await Promise.all([stop(a), stop(b), stop(api)])).toEqual([0, 0, 0]);
  }, 150_000);
});
