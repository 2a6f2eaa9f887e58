import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '@retryd/core/testing';
import type { PurgedTask } from '../src/store/store.js';
import { Purger, PURGE_LEASE_KEY } from '../src/retention/purger.js';
import { T0, makeTask } from './fixtures/tasks.js';
import { opened, removeTempDir } from './sqlite-harness.js';
import { insertStoredTasks } from './fixtures/stored-tasks.js';

// The purge on a real SQLite store and a manual clock: batches until one is not full, one instance at a time through
// the purge lease, bodies kept apart deleted after their tasks.

afterAll(removeTempDir);

const ended = (i: number, expiresAt: number, bodyRef: string | null = null) =>
  makeTask({ status: 'SUCCEEDED', nextAttemptAt: null, attemptNumber: 1, expiresAt, bodyRef, body: bodyRef === null ? '{}' : null, idempotencyKey: `k-${i}` });

describe('Purger', () => {
  it('deletes every expired task in full batches and stops at the first short one; bodies kept apart go too', async () => {
    await using store = await opened();
    const clock = new ManualClock(T0 + 10_000);
    const expired = Array.from({ length: 25 }, (_, i) => ended(i, T0 + i, i % 5 === 0 ? `default/body-${i}` : null));
    const notYet = Array.from({ length: 5 }, (_, i) => ended(100 + i, T0 + 60_000));
    await insertStoredTasks(store, [...expired, ...notYet]);
    const deletedBodies: string[] = [];
    const batches: PurgedTask[][] = [];
    const purger = new Purger({
      store,
      blobs: { delete: async (ref) => void deletedBodies.push(ref) },
      clock,
      owner: 'a',
      batchSize: 10,
      pauseMs: 0,
      onPurged: (tasks) => batches.push([...tasks]),
      report: (error) => {
        throw error;
      },
    });
    let done = false;
    const running = purger.pass().finally(() => (done = true));
    // Between full batches it pauses (pauseMs, on the clock) so that dispatch gets the store.
    for (let spins = 0; !done && spins < 1_000; spins++) await clock.advance(0);
    expect(await running).toBe(25);
    expect(clock.sleeps).toEqual([0, 0]);
    expect(batches.map((b) => b.length)).toEqual([10, 10, 5]);
    expect(deletedBodies.sort()).toEqual(['default/body-0', 'default/body-10', 'default/body-15', 'default/body-20', 'default/body-5']);
    expect(await store.admin.countByStatus()).toMatchObject({ SUCCEEDED: 5 });
    expect(await purger.pass()).toBe(0);
  });

  it('looks again a second after a pass that deleted tasks, and an interval after one that found none', async () => {
    await using store = await opened();
    const clock = new ManualClock(T0 + 10_000);
    await insertStoredTasks(store, [ended(1, T0)]);
    const purger = new Purger({ store, clock, owner: 'a', intervalMs: 10_000, report: (error) => expect.fail(String(error)) });
    purger.start();
    const settle = async () => {
      for (let spins = 0; spins < 50; spins++) await clock.advance(0);
    };
    await settle();
    expect(await store.admin.countByStatus()).toMatchObject({ SUCCEEDED: 0 });
    expect(clock.sleeps).toEqual([1_000]);
    await clock.advance(1_000);
    await settle();
    // Nothing more had expired: back to the interval.
    expect(clock.sleeps).toEqual([1_000, 10_000]);
    await purger.stop();
  });

  it('purges on one instance at a time: the lease holder; another takes over once the lease lapsed', async () => {
    await using store = await opened();
    const clock = new ManualClock(T0 + 10_000);
    const report = (error: unknown) => {
      throw error;
    };
    const a = new Purger({ store, clock, owner: 'a', intervalMs: 1_000, report });
    const b = new Purger({ store, clock, owner: 'b', intervalMs: 1_000, report });
    await insertStoredTasks(store, [ended(1, T0)]);
    expect(await a.pass()).toBe(1);
    const lease = await store.targetState.getTargetState('default', PURGE_LEASE_KEY);
    expect(JSON.parse(lease?.value ?? '{}')).toEqual({ owner: 'a', until: T0 + 10_000 + 3_000 });

    await insertStoredTasks(store, [ended(2, T0)]);
    expect(await b.pass()).toBe(0);
    expect(await store.admin.countByStatus()).toMatchObject({ SUCCEEDED: 1 });
    // The holder renews it at every pass.
    await clock.advance(2_000);
    expect(await a.pass()).toBe(1);
    await insertStoredTasks(store, [ended(3, T0)]);
    // a stopped: three intervals after its last pass, b takes over.
    await clock.advance(2_999);
    expect(await b.pass()).toBe(0);
    await clock.advance(1);
    expect(await b.pass()).toBe(1);
    expect(JSON.parse((await store.targetState.getTargetState('default', PURGE_LEASE_KEY))?.value ?? '{}')).toMatchObject({ owner: 'b' });
    expect(await a.pass()).toBe(0);
  });
});
