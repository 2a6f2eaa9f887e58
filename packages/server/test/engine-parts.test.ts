import { ManualClock, seededRandom } from '@retryd/core/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_SERVICE_POLICY } from '../src/policies/default-policy.js';
import type { RetryTask } from '../src/domain/task.js';
import { CompletionBatcher, type QueuedCompletion } from '../src/engine/completion-batcher.js';
import { decideAttemptOutcome } from '../src/engine/decide-outcome.js';
import { DEFAULT_RETENTION } from '../src/retention/retention-periods.js';
import { DueTimer } from '../src/engine/due-timer.js';
import { resolveEngineOptions } from '../src/engine/engine-options.js';
import { PolicyResolver, type PolicyNotFoundError } from '../src/engine/policy-resolver.js';
import { lastQueueServed } from '../src/engine/claim-cursor.js';
import { ringOrder } from '../src/store/claim-shares.js';
import type { CompletionResult, TargetRef } from '../src/store/store.js';
import type { SqliteStore } from '../src/backends/sqlite/sqlite-store.js';
import { FAST_POLICY, FaultyStore, openTempStore, taskFor } from './engine-helpers.js';
import { makePolicy, makeTask, T0 } from './fixtures/tasks.js';

describe('DueTimer', () => {
  it('fires once at the earliest time it was aimed at, and not after clear()', async () => {
    const clock = new ManualClock(1_000);
    const fired: number[] = [];
    const timer = new DueTimer(clock, () => fired.push(clock.now()));
    timer.aimAt(1_100);
    timer.aimAt(1_200); // later: ignored
    expect(timer.target).toBe(1_100);
    timer.aimAt(1_050); // earlier: re-armed
    await clock.advance(49);
    expect(fired).toEqual([]);
    await clock.advance(1);
    expect(fired).toEqual([1_050]);
    expect(timer.target).toBeNull();
    await clock.advance(1_000);
    expect(fired).toEqual([1_050]);
    timer.aimAt(2_500);
    timer.clear();
    await clock.advance(1_000);
    expect(fired).toEqual([1_050]);
  });

  it('fires at once for a time already past', async () => {
    const clock = new ManualClock(5_000);
    let fired = 0;
    new DueTimer(clock, () => fired++).aimAt(4_000);
    expect(fired).toBe(0); // on the clock's next turn, not inside aimAt
    await clock.advance(0);
    expect(fired).toBe(1);
    expect(clock.pendingCount).toBe(0);
  });
});

describe('lastQueueServed: the ring cursor of fair claims', () => {
  const q = (tenantId: string, targetKey: string): TargetRef => ({ tenantId, targetKey });
  const A = q('t1', 'https://a.example');
  const B = q('t1', 'https://b.example');
  const C = q('t1', 'https://c.example');
  const D = q('t2', 'https://a.example');

  it('is the last queue served in ring order, wrapping past the end; the cursor as it was when nothing was claimed', () => {
    expect(lastQueueServed([B, A, B], undefined)).toEqual(B);
    expect(lastQueueServed([C, D], B)).toEqual(D);
    // Started after C: D, then round to A.
    expect(lastQueueServed([D, A], C)).toEqual(A);
    expect(lastQueueServed([A, D, B], B)).toEqual(B);
    expect(lastQueueServed([], C)).toEqual(C);
    expect(lastQueueServed([], undefined)).toBeUndefined();
  });

  it('agrees with ringOrder on every subset and cursor', () => {
    const all = [A, B, C, D];
    for (let mask = 1; mask < 16; mask++) {
      const served = all.filter((_, i) => mask & (1 << i));
      for (const after of [undefined, ...all, q('t0', 'x'), q('t9', 'x')]) {
        expect(lastQueueServed([...served, ...served], after)).toEqual(ringOrder(served, after).at(-1));
      }
    }
  });

  it('keeps only the key, not the claimed task', () => {
    const task = makeTask({ targetUrl: 'https://a.example/x' });
    expect(lastQueueServed([task], undefined)).toStrictEqual({ tenantId: task.tenantId, targetKey: 'https://a.example' });
  });
});

describe('resolveEngineOptions', () => {
  const store = {} as SqliteStore;
  it('applies the documented defaults', () => {
    const resolved = resolveEngineOptions({ store });
    expect(resolved).toMatchObject({
      concurrency: 256,
      claimBatchSize: 128,
      attemptTimeoutMs: 30_000,
      leaseMs: 60_000,
      connectTimeoutMs: 5_000,
      connectionsPerOrigin: 256,
      policyCacheMs: 1_000,
      maxIdleMs: 5_000,
    });
    expect(resolved.workerId).toMatch(/^.+-\d+-[0-9a-f]{6}$/);
    expect(resolveEngineOptions({ store, attemptTimeoutMs: 1_000 }).leaseMs).toBe(31_000);
  });

  it('names the option and the rule when one is invalid', () => {
    expect(() => resolveEngineOptions({ store, concurrency: 0 })).toThrow('Expected `concurrency` to be an integer >= 1, got 0.');
    expect(() => resolveEngineOptions({ store, claimBatchSize: 1.5 })).toThrow('Expected `claimBatchSize` to be an integer >= 1, got 1.5.');
    expect(() => resolveEngineOptions({ store, attemptTimeoutMs: 5_000, leaseMs: 5_000 })).toThrow(
      'Expected `leaseMs` to be greater than `attemptTimeoutMs` (5000), got 5000.',
    );
    expect(() => resolveEngineOptions({ store, workerId: ' ' })).toThrow('Expected `workerId` to be a non-empty string.');
  });
});

describe('with a real store', () => {
  let store: SqliteStore;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ store, cleanup } = await openTempStore());
  });
  afterEach(async () => {
    await cleanup();
  });

  describe('PolicyResolver', () => {
    it('reads each named policy once per batch and caches it for ttlMs', async () => {
      const faulty = new FaultyStore(store);
      await store.putPolicy(makePolicy('gold'), 'create');
      let now = 0;
      const resolver = new PolicyResolver({ store: faulty.store, now: () => now, ttlMs: 1_000 });
      const named = (policyId: string | null) => makeTask({ policyId, policy: null });
      const tasks = [named('gold'), named('gold'), taskFor('http://x'), named(null)];
      const policies = await resolver.resolve(tasks);
      expect(policies).toEqual([makePolicy('gold').policy, makePolicy('gold').policy, FAST_POLICY, DEFAULT_SERVICE_POLICY]);
      expect(faulty.calls.get('getPolicy')).toBe(2); // gold, and the missing `default`
      expect(resolver.cached(tasks[0]!)).toEqual(makePolicy('gold').policy);
      now = 999;
      await resolver.resolve(tasks);
      expect(faulty.calls.get('getPolicy')).toBe(2);
      now = 1_000;
      expect(resolver.cached(tasks[0]!)).toBeUndefined();
      await resolver.resolve(tasks);
      expect(faulty.calls.get('getPolicy')).toBe(4);
    });

    it('sees a replaced policy after invalidate(), and keeps a stale copy while the store fails', async () => {
      const faulty = new FaultyStore(store);
      await store.putPolicy(makePolicy('gold'), 'create');
      let now = 0;
      const resolver = new PolicyResolver({ store: faulty.store, now: () => now, ttlMs: 1_000 });
      const task = makeTask({ policyId: 'gold', policy: null });
      await resolver.resolve([task]);
      const changed = makePolicy('gold', { policy: { ...makePolicy('gold').policy, maxAttempts: 9 } });
      await store.putPolicy(changed, 'replace');
      expect((await resolver.resolve([task]))[0]?.maxAttempts).toBe(5);
      resolver.invalidate(task.tenantId, 'gold');
      expect((await resolver.resolve([task]))[0]?.maxAttempts).toBe(9);
      now = 5_000;
      faulty.failing.add('getPolicy');
      expect((await resolver.resolve([task]))[0]?.maxAttempts).toBe(9);
      await expect(resolver.resolve([makeTask({ policyId: 'unknown', policy: null })])).rejects.toThrow('injected fault');
    });

    it('runs a task whose named policy is missing on the built-in default, and says so', async () => {
      const missing: PolicyNotFoundError[] = [];
      const resolver = new PolicyResolver({ store, now: () => 0, onMissing: (e) => missing.push(e) });
      expect(await resolver.resolve([makeTask({ policyId: 'gone', policy: null })])).toEqual([DEFAULT_SERVICE_POLICY]);
      expect(missing.map((e) => e.message)).toEqual(['policy "gone" of tenant "default" does not exist; using the built-in default policy']);
    });
  });

  describe('CompletionBatcher', () => {
    // On a manual clock with a seeded random: the back-off between failed writes is exact (seed 42 waits 30 ms,
    // then 45 ms; see engine-store-backoff.test.ts), and no test waits on real time.
    let clock: ManualClock;
    beforeEach(() => {
      clock = new ManualClock(T0);
    });

    /** Lets the batcher's `setImmediate` flush (and what it awaits) run. */
    const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

    async function claimedCompletions(n: number, leaseExpiresAt = T0 + 60_000): Promise<QueuedCompletion[]> {
      const tasks = Array.from({ length: n }, () => makeTask({ targetUrl: 'http://127.0.0.1:9/', policy: FAST_POLICY, policyId: null }));
      await store.insertTasks(tasks);
      const claimed: RetryTask[] = await store.claimDue(T0, { limit: n, leaseMs: 60_000, workerId: 'w' });
      return claimed.map((task) => ({
        task,
        completion: decideAttemptOutcome(
          task,
          { startedAt: T0, result: { kind: 'response', status: 200, headers: {}, bodySnippet: null } },
          { policy: FAST_POLICY, now: T0, random: Math.random, workerId: 'w', retention: DEFAULT_RETENTION },
        ),
        leaseExpiresAt,
      }));
    }

    function batcherOn(faulty: FaultyStore, log: { results: CompletionResult[]; writeErrors: number; givenUp: string[] }) {
      return new CompletionBatcher({
        store: faulty.store,
        clock,
        random: seededRandom(42),
        now: () => clock.now(),
        onResults: (_items, results) => log.results.push(...results),
        onWriteError: () => log.writeErrors++,
        onGiveUp: (item, reason) => log.givenUp.push(`${item.completion.taskId}: ${reason}`),
      });
    }

    it('writes the completions of one event-loop turn in one transaction, and the next ones as soon as it ends', async () => {
      const faulty = new FaultyStore(store);
      const log = { results: [] as CompletionResult[], writeErrors: 0, givenUp: [] as string[] };
      const batcher = batcherOn(faulty, log);
      const items = await claimedCompletions(60);
      const release = faulty.hold('completeAttempts');
      for (const item of items.slice(0, 20)) batcher.add(item);
      await turn();
      expect(faulty.calls.get('completeAttempts')).toBe(1);
      // While the first write is in progress, the rest queue up and go out together right after it.
      for (const item of items.slice(20)) batcher.add(item);
      expect(batcher.size).toBe(41);
      release();
      await batcher.drain();
      expect(faulty.calls.get('completeAttempts')).toBe(2);
      expect(log.results.map((r) => r.kind)).toEqual(Array(60).fill('applied'));
      expect(batcher.size).toBe(0);
    });

    it('keeps failed writes and retries them, after jittered waits, until the store is back', async () => {
      const faulty = new FaultyStore(store, () => clock.now());
      const log = { results: [] as CompletionResult[], writeErrors: 0, givenUp: [] as string[] };
      const batcher = batcherOn(faulty, log);
      const settled: (CompletionResult | undefined)[] = [];
      const [item] = await claimedCompletions(1);
      faulty.failing.add('completeAttempts');
      batcher.add({ ...item!, onSettled: (r) => settled.push(r) });
      await turn();
      await clock.advance(30);
      await clock.advance(45);
      expect(faulty.timesOf('completeAttempts')).toEqual([T0, T0 + 30, T0 + 75]);
      expect(log.writeErrors).toBe(3);
      faulty.failing.delete('completeAttempts');
      const drained = batcher.drain();
      await clock.runAll();
      await drained;
      expect(settled.map((r) => r?.kind)).toEqual(['applied']);
      expect(faulty.timesOf('completeAttempts')).toHaveLength(4);
      expect(log.givenUp).toEqual([]);
    });

    it('gives up a result whose lease lapsed while the store failed, and everything left at the drain deadline', async () => {
      const faulty = new FaultyStore(store);
      const log = { results: [] as CompletionResult[], writeErrors: 0, givenUp: [] as string[] };
      const batcher = batcherOn(faulty, log);
      const [lapsed] = await claimedCompletions(1, T0 - 1);
      const [live] = await claimedCompletions(1);
      faulty.failing.add('completeAttempts');
      const settled: (CompletionResult | undefined)[] = [];
      batcher.add({ ...lapsed!, onSettled: (r) => settled.push(r) });
      batcher.add(live!);
      await turn();
      expect(log.givenUp).toEqual([`${lapsed!.completion.taskId}: its lease lapsed while the store was failing`]);
      expect(settled).toEqual([undefined]);
      let drained = false;
      const draining = batcher.drain(T0 + 100).then(() => (drained = true));
      await clock.advance(99);
      expect(drained).toBe(false);
      await clock.advance(1);
      await draining;
      expect(log.givenUp[1]).toBe(`${live!.completion.taskId}: the engine stopped before the store accepted it`);
    });
  });
});
