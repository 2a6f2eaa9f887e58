import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../src/backends/sqlite/sqlite-store.js';
import { RedisStore } from '../src/backends/redis/redis-store.js';
import { DEFAULT_TENANT, type RetryTask } from '../src/domain/task.js';
import type { AttemptDispatcher, AttemptResult } from '../src/engine/attempt-result.js';
import { Engine } from '../src/engine/engine.js';
import type { ProtectionEvent } from '../src/protection/protection-events.js';
import { TargetProtection } from '../src/protection/target-protection.js';
import { PROTECTIONS_OFF } from '../src/protection/target-settings.js';
import type { Store } from '../src/store/store.js';
import { makeTask } from './fixtures/tasks.js';
import { dropSchemas, freshSchema, makeStore } from './postgres-harness.js';
import { dropPrefixes, freshPrefix, REDIS_URL } from './redis-harness.js';
import { FAST } from './protection-harness.js';
import { waitFor } from './wait-for.js';

// Two scenarios on every store, where the store's part is the point, in real time. Two instances (each its own store
// connection, engine and protection) on one SQLite file, one PostgreSQL schema, one Redis prefix: a target goes down,
// the breaker one instance opens holds it for both, its concurrency limit holds across both, the probes close it when
// it is back, and the outage costs about one call per task. And a "not ready yet" target whose tasks share one due
// time (a batch): the probes are the tasks the breaker held, whatever order the store gives tasks due together. The
// downstreams answer after a few ms, so calls overlap.

const A = 'https://a.example';
const B = 'https://b.example';

/** Opens `count` connections to one fresh store of a kind, and how to drop it. */
type StoreKit = { open(count: number): Promise<Store[]>; drop(): Promise<void> };

const kits: Record<string, () => StoreKit> = {
  sqlite: () => {
    let dir: string | undefined;
    return {
      async open(count) {
        dir = await mkdtemp(join(tmpdir(), 'retryd-protection-'));
        const stores = Array.from({ length: count }, () => new SqliteStore(join(dir as string, 'retryd.db')));
        for (const store of stores) await store.init();
        return stores;
      },
      drop: async () => {
        if (dir !== undefined) await rm(dir, { recursive: true, force: true });
      },
    };
  },
  postgres: () => {
    const schema = freshSchema();
    return {
      async open(count) {
        const stores = Array.from({ length: count }, () => makeStore(schema));
        for (const store of stores) await store.init();
        return stores;
      },
      drop: dropSchemas,
    };
  },
  redis: () => {
    const prefix = freshPrefix();
    return {
      async open(count) {
        const stores = Array.from({ length: count }, () => new RedisStore({ url: REDIS_URL, prefix }));
        for (const store of stores) await store.init();
        return stores;
      },
      drop: dropPrefixes,
    };
  },
};

/** A downstream whose targets are up or down, answering after 5 ms; it counts calls and the most in flight at once. */
class Downstream implements AttemptDispatcher {
  readonly down = new Set<string>();
  readonly calls: { target: string; at: number }[] = [];
  private readonly inFlight = new Map<string, number>();
  readonly mostInFlight = new Map<string, number>();

  async dispatch(task: RetryTask): Promise<AttemptResult> {
    const target = task.targetKey;
    this.calls.push({ target, at: Date.now() });
    const now = (this.inFlight.get(target) ?? 0) + 1;
    this.inFlight.set(target, now);
    this.mostInFlight.set(target, Math.max(now, this.mostInFlight.get(target) ?? 0));
    await new Promise((resolve) => setTimeout(resolve, 5));
    this.inFlight.set(target, (this.inFlight.get(target) ?? 1) - 1);
    return { kind: 'response', status: this.down.has(target) ? 500 : 200, headers: {}, bodySnippet: null };
  }

  callsTo(target: string): number {
    return this.calls.filter((c) => c.target === target).length;
  }

  async close(): Promise<void> {}
  async destroy(): Promise<void> {}
}

afterAll(async () => {
  await dropSchemas();
  await dropPrefixes();
});

describe.each(Object.keys(kits))('protections on the %s store', (kind) => {
  it('a breaker opened by one instance holds the target for both, within one concurrency limit, and probes close it', async () => {
    const kit = (kits[kind] as () => StoreKit)();
    const stores = await kit.open(2);
    const downstream = new Downstream();
    const { instances, events, errors, stop } = startInstances(kind, stores, downstream, 16);
    const [one] = instances;
    try {
      await one!.protection.putSettings(
        { tenantId: DEFAULT_TENANT, targetKey: A },
        {
          breaker: { enabled: true, consecutiveFailures: 3, openDurationMs: 1_500, openBackoffMultiplier: 2, maxOpenDurationMs: 5_000, halfOpenProbes: 2 },
          maxInFlight: 2,
        },
      );
      for (const { engine } of instances) await engine.start();
      downstream.down.add(A);
      const now = Date.now();
      const task = (url: string) => makeTask({ targetUrl: url, policy: FAST, policyId: null, nextAttemptAt: now, createdAt: now, updatedAt: now });
      const tasks = [...Array.from({ length: 10 }, () => task(`${A}/hook`)), ...Array.from({ length: 5 }, () => task(`${B}/hook`))];
      await one!.store.insertTasks(tasks);
      for (const { engine } of instances) engine.wake();

      const opened = await waitFor('the breaker to open', () => events.find((e) => e.event === 'breaker_open'));
      if (opened.event !== 'breaker_open') throw new Error('unreachable');
      // B is not held up by A's outage.
      await waitFor(
        'B to succeed',
        async () => (await Promise.all(tasks.slice(10).map((t) => one!.store.getTask(t.tenantId, t.taskId)))).every((t) => t?.status === 'SUCCEEDED'),
      );
      // Held: no call to A starts on either instance until the open period ends, and no task burns an attempt. Tasks
      // claimed before the breaker opened still go out (a hold stops claims, it does not recall them): counted once
      // they are done.
      const inFlightToA = async () => (await Promise.all(tasks.slice(0, 10).map((t) => one!.store.getTask(t.tenantId, t.taskId)))).some((t) => t?.status === 'IN_FLIGHT');
      await waitFor("A's claimed tasks to be done", async () => !(await inFlightToA()) || undefined);
      expect(Date.now()).toBeLessThan(opened.openUntil - 50);
      const callsWhenOpened = downstream.callsTo(A);
      await waitFor('the open period to near its end', () => Date.now() >= opened.openUntil - 50 || undefined);
      expect(downstream.callsTo(A)).toBeLessThanOrEqual(callsWhenOpened + 0);
      const held = await Promise.all(tasks.slice(0, 10).map((t) => one!.store.getTask(t.tenantId, t.taskId)));
      expect(held.every((t) => t !== undefined && t.attemptNumber <= 2 && t.status === 'PENDING')).toBe(true);

      // A comes back: the probes close the breaker and the backlog goes, never more than two calls at once.
      downstream.down.delete(A);
      await waitFor(
        'A to succeed',
        async () => (await Promise.all(tasks.slice(0, 10).map((t) => one!.store.getTask(t.tenantId, t.taskId)))).every((t) => t?.status === 'SUCCEEDED'),
        15_000,
      );
      expect(events.filter((e) => e.event === 'breaker_closed')).toHaveLength(1);
      expect(downstream.mostInFlight.get(A)).toBeLessThanOrEqual(2);
      // About one failed call per task that went out before the breaker opened, one success each: well under two per task.
      expect(downstream.callsTo(A)).toBeLessThan(20);
      expect(errors).toEqual([]);
    } finally {
      await stop();
      await kit.drop();
    }
  }, 30_000);

  it('probes a "not ready yet" target with the tasks furthest along, though a whole batch shares one due time', async () => {
    const kit = (kits[kind] as () => StoreKit)();
    const stores = await kit.open(1);
    const downstream = new NotReadyDownstream();
    const { instances, events, errors, stop } = startInstances(kind, stores, downstream, 4);
    const [one] = instances;
    try {
      await one!.protection.putSettings(
        { tenantId: DEFAULT_TENANT, targetKey: A },
        { breaker: { enabled: true, consecutiveFailures: 3, openDurationMs: 300, openBackoffMultiplier: 1, maxOpenDurationMs: 300, halfOpenProbes: 1 } },
      );
      await one!.engine.start();
      // Enqueued at once, as one batch is: one due time for all. The first wave (4 of 20) fails its first calls and
      // opens the breaker; the tasks held by it must be the probes, not the 16 fresh ones due with them.
      const now = Date.now();
      const tasks = Array.from({ length: 20 }, () => makeTask({ targetUrl: `${A}/hook`, policy: FAST, policyId: null, nextAttemptAt: now, createdAt: now, updatedAt: now }));
      await one!.store.insertTasks(tasks);
      one!.engine.wake();
      await waitFor(
        'every task to succeed',
        async () => (await Promise.all(tasks.map((t) => one!.store.getTask(t.tenantId, t.taskId)))).every((t) => t?.status === 'SUCCEEDED'),
        15_000,
      );
      // Opened once by the first wave; a probe that was a fresh task's first call would have failed and opened it again.
      expect(events.map((e) => (e.event === 'breaker_open' || e.event === 'breaker_closed' ? `${e.event} ${e.cause}` : e.event))).toEqual([
        'breaker_open failures',
        'breaker_closed probes_succeeded',
      ]);
      expect(downstream.calls).toBe(40);
      expect(errors).toEqual([]);
    } finally {
      await stop();
      await kit.drop();
    }
  }, 30_000);
});

/**
 * An engine and its protection (defaults {@link PROTECTIONS_OFF}) on each of `stores`, calling `dispatcher`, not
 * started; the events and errors of all of them; and how to stop them and close their stores.
 */
function startInstances(kind: string, stores: Store[], dispatcher: AttemptDispatcher, concurrency: number) {
  const events: ProtectionEvent[] = [];
  const errors: unknown[] = [];
  const instances = stores.map((store, i) => {
    const holder: { engine?: Engine } = {};
    const protection = new TargetProtection({
      store,
      defaults: PROTECTIONS_OFF,
      onEvent: (event) => events.push(event),
      onError: (error) => errors.push(error),
      wake: () => holder.engine?.wake(),
    });
    const engine = new Engine({
      store,
      dispatcher,
      protection,
      workerId: `${kind}-${i + 1}`,
      concurrency,
      claimBatchSize: 2,
      attemptTimeoutMs: 2_000,
      maxIdleMs: 50,
      onError: (error) => errors.push(error),
    });
    holder.engine = engine;
    const unsubscribe = store.onDue?.(() => engine.wake());
    return { store, engine, protection, unsubscribe };
  });
  const stop = async () => {
    for (const { engine, protection, unsubscribe } of instances) {
      await engine.stop({ graceMs: 0 });
      protection.close();
      await protection.whenIdle();
      unsubscribe?.();
    }
    for (const { store } of instances) await store.close();
  };
  return { instances, events, errors, stop };
}

/** A downstream that answers 500 to each task's first call ("not ready yet") and 200 to the next, after 5 ms. */
class NotReadyDownstream implements AttemptDispatcher {
  calls = 0;

  async dispatch(task: RetryTask, attemptNumber: number): Promise<AttemptResult> {
    this.calls++;
    await new Promise((resolve) => setTimeout(resolve, 5));
    return { kind: 'response', status: attemptNumber === task.runAttemptOffset + 1 ? 500 : 200, headers: {}, bodySnippet: null };
  }

  async close(): Promise<void> {}
  async destroy(): Promise<void> {}
}
