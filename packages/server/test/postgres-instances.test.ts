import pg from 'pg';
import { describe, expect, it, vi } from 'vitest';
import type { RetryTask } from '../src/domain/task.js';
import type { PurgedTask } from '../src/store/store.js';
import { DuplicateAttemptError } from '../src/store/store-errors.js';
import { dueChannel } from '../src/backends/postgres/connection.js';
import { T0, makeAttempt, makePolicy, makeTask, retryOutcome } from './fixtures/tasks.js';
import { postgresInstances, withClient } from './postgres-harness.js';
import { waitFor } from './wait-for.js';
import { insertStoredTasks } from './fixtures/stored-tasks.js';

const instances = postgresInstances();

/** Counts the statements sent while `fn` runs (each pg `query` call is one round trip). */
async function roundTrips<T>(fn: () => Promise<T>): Promise<{ result: T; trips: number }> {
  const spy = vi.spyOn(pg.Client.prototype, 'query');
  try {
    const result = await fn();
    return { result, trips: spy.mock.calls.length };
  } finally {
    spy.mockRestore();
  }
}

describe('PostgresStore across instances', () => {
  it('never hands one task to two instances claiming at once from separate pools', async () => {
    const stores = await instances(3);
    const tasks = Array.from({ length: 600 }, (_, i) => makeTask({ nextAttemptAt: T0 + (i % 13) }));
    await stores[0]?.insertTasks(tasks);
    const claimed: RetryTask[] = [];
    // Every instance claims in a loop, 4 claims in flight each, until nothing is due.
    await Promise.all(
      stores.flatMap((store, s) =>
        Array.from({ length: 4 }, async (_, c) => {
          for (;;) {
            const batch = await store.claimDue(T0 + 20, { limit: 16, leaseMs: 30_000, workerId: `w${s}-${c}` });
            if (batch.length === 0) return;
            claimed.push(...batch);
          }
        }),
      ),
    );
    const ids = claimed.map((t) => t.taskId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids)).toEqual(new Set(tasks.map((t) => t.taskId)));
    expect(new Set(claimed.map((t) => t.leaseOwner?.slice(0, 2)))).toEqual(new Set(['w0', 'w1', 'w2']));
    expect((await stores[1]?.admin.countByStatus())?.IN_FLIGHT).toBe(600);
  });

  it('never purges one task twice when instances purge at once, and steps over a task another transaction holds', async () => {
    const stores = await instances(3);
    const [first] = stores;
    if (first === undefined) throw new Error('expected three stores');
    const ended = Array.from({ length: 300 }, (_, i) =>
      makeTask({ status: 'SUCCEEDED', nextAttemptAt: null, attemptNumber: 1, updatedAt: T0 + 1, expiresAt: T0 + (i % 17) }),
    );
    await insertStoredTasks(first, ended);
    const [held] = ended;
    if (held === undefined) throw new Error('expected a task');
    const purged = await withClient(first.schema, async (locker) => {
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM tasks WHERE task_id = $1 FOR UPDATE', [held.taskId]);
      const taken: PurgedTask[] = [];
      // Every instance purges in a loop, 3 purges in flight each, until nothing it may take is left. A purge that
      // waited on the held row instead of stepping over it would never end.
      await Promise.all(
        stores.flatMap((store) =>
          Array.from({ length: 3 }, async () => {
            for (;;) {
              const batch = await store.purgeExpired(T0 + 100, 16);
              if (batch.length === 0) return;
              taken.push(...batch);
            }
          }),
        ),
      );
      await locker.query('ROLLBACK');
      return taken;
    });
    const ids = purged.map((t) => t.taskId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids)).toEqual(new Set(ended.filter((t) => t !== held).map((t) => t.taskId)));
    // The held task, once let go, in one statement.
    const last = await roundTrips(() => first.purgeExpired(T0 + 100, 16));
    expect(last).toEqual({ result: [{ tenantId: 'default', taskId: held.taskId, status: 'SUCCEEDED', bodyRef: null }], trips: 1 });
    expect(await first.admin.countByStatus()).toMatchObject({ SUCCEEDED: 0 });
  });

  it('wakes the other instances when one inserts a due task, releases leases or re-drives a task', async () => {
    const [writer, reader] = await instances(2);
    if (writer === undefined || reader === undefined) throw new Error('expected two stores');
    let wakes = 0;
    const dueTimes: (number | undefined)[] = [];
    const unsubscribe = reader.onDue((dueAt) => {
      wakes++;
      dueTimes.push(dueAt);
    });
    await reader.whenListening();

    // An insert's wake-up carries the earliest due time of its PENDING tasks; the others carry none.
    await writer.insertTasks([makeTask({ nextAttemptAt: T0 + 9_000 }), makeTask({ nextAttemptAt: T0 + 4_000 })]);
    await waitFor('the wake-up of an insert', () => wakes === 1);
    expect(dueTimes).toEqual([T0 + 4_000]);

    const [held] = await writer.claimDue(T0 + 4_000, { limit: 1, leaseMs: 1_000, workerId: 'w' });
    if (held === undefined) throw new Error('expected a claim');
    await writer.releaseLeases([{ tenantId: 'default', taskId: held.taskId, fencingToken: held.fencingToken }], T0 + 4_001);
    await waitFor('the wake-up of a release', () => wakes === 2);
    expect(dueTimes).toEqual([T0 + 4_000, undefined]);

    const dead = makeTask({ status: 'FAILED', nextAttemptAt: null });
    await insertStoredTasks(writer, [dead]); // not PENDING: no wake-up
    await writer.replayTask(
      { tenantId: 'default', taskId: dead.taskId },
      { expectedVersion: dead.version, runAttemptOffset: 0, runStartedAt: null, nextAttemptAt: T0 + 5, updatedAt: T0 + 5 },
    );
    await waitFor('the wake-up of a replay', () => wakes === 3);

    unsubscribe();
    await writer.insertTasks([makeTask()]);
    await expect(reader.whenListening()).rejects.toThrow('Nothing is subscribed');
  });

  it('stays quiet on changes that make nothing newly due', async () => {
    const [store] = await instances(1);
    if (store === undefined) throw new Error('expected a store');
    await store.insertTasks([makeTask()]);
    const [held] = await store.claimDue(T0, { limit: 1, leaseMs: 1_000, workerId: 'w' });
    if (held === undefined) throw new Error('expected a claim');
    const heard = await withClient(store.schema, async (client) => {
      const payloads: string[] = [];
      client.on('notification', (message) => payloads.push(message.payload ?? ''));
      await client.query(`LISTEN ${dueChannel(store.schema)}`);
      await store.requestCancel({ tenantId: 'default', taskId: held.taskId }, T0);
      const stale = { tenantId: 'default', taskId: held.taskId, fencingToken: held.fencingToken + 1 };
      await store.releaseLeases([stale], T0);
      await insertStoredTasks(store, [makeTask({ status: 'SUCCEEDED', nextAttemptAt: null })]);
      await store.completeAttempts([{ ...held, next: retryOutcome(held, T0 + 5) }], T0 + 1);
      // Notifications arrive in commit order: once the marker is in, anything the changes above sent is too.
      await client.query(`SELECT pg_notify($1, 'marker')`, [dueChannel(store.schema)]);
      await waitFor('the marker notification', () => payloads.includes('marker'));
      return payloads;
    });
    expect(heard).toEqual(['marker']);
  });

  it('inserts a 1,000-task batch in one round trip, two when some keys were stored before, three for a new target', async () => {
    const [store] = await instances(1);
    if (store === undefined) throw new Error('expected a store');
    // The target's first batch: the insert finds no queue, the queue is made, the insert goes again (011).
    const opening = await roundTrips(() => store.insertTasks([makeTask()]));
    expect(opening.trips).toBe(3);
    expect(opening.result.map((r) => r.kind)).toEqual(['inserted']);
    const first = Array.from({ length: 1_000 }, () => makeTask());
    const fresh = await roundTrips(() => store.insertTasks(first));
    expect(fresh.trips).toBe(1);
    expect(fresh.result.every((r) => r.kind === 'inserted')).toBe(true);

    const mixed = first.map((task, i) => makeTask(i % 2 === 0 ? { idempotencyKey: task.idempotencyKey } : {}));
    const replay = await roundTrips(() => store.insertTasks(mixed));
    expect(replay.trips).toBe(2);
    expect(replay.result.map((r) => r.kind)).toEqual(mixed.map((_, i) => (i % 2 === 0 ? 'duplicate' : 'inserted')));
    expect(replay.result[0]).toEqual({ kind: 'duplicate', task: first[0] });
  });

  it('claims and completes a 1,000-task batch in one round trip each', async () => {
    const [store] = await instances(1);
    if (store === undefined) throw new Error('expected a store');
    await store.insertTasks(Array.from({ length: 1_000 }, () => makeTask()));
    const claim = await roundTrips(() => store.claimDue(T0, { limit: 1_000, leaseMs: 5_000, workerId: 'w' }));
    expect(claim.trips).toBe(1);
    expect(claim.result).toHaveLength(1_000);
    const completions = claim.result.map((task) => ({
      tenantId: task.tenantId,
      taskId: task.taskId,
      fencingToken: task.fencingToken,
      attempt: makeAttempt(task),
      next: retryOutcome(task, T0 + 1_000),
    }));
    const complete = await roundTrips(() => store.completeAttempts(completions, T0 + 10));
    expect(complete.trips).toBe(1);
    expect(complete.result.every((r) => r.kind === 'applied')).toBe(true);
    expect((await store.admin.countByStatus()).PENDING).toBe(1_000);
  });

  it('applies the first holding completion of a task named twice; a repeated attempt is DUPLICATE_ATTEMPT', async () => {
    const [store] = await instances(1);
    if (store === undefined) throw new Error('expected a store');
    await store.insertTasks([makeTask()]);
    const [task] = await store.claimDue(T0, { limit: 1, leaseMs: 1_000, workerId: 'w' });
    if (task === undefined) throw new Error('expected a claim');
    const ref = { tenantId: task.tenantId, taskId: task.taskId, fencingToken: task.fencingToken };
    const reaper = { ...ref, requireLeaseExpiredBy: T0 + 500, next: retryOutcome(task, T0 + 9_000) };
    const worker = { ...ref, attempt: makeAttempt(task), next: retryOutcome(task, T0 + 2_000) };
    // The reaper's completion comes first but does not hold (the lease lapses at T0+1000): the worker's applies.
    const results = await store.completeAttempts([reaper, worker, worker], T0 + 50);
    expect(results.map((r) => r.kind)).toEqual(['fenced_out', 'applied', 'fenced_out']);
    expect((await store.getTask('default', task.taskId))?.nextAttemptAt).toBe(T0 + 2_000);

    const [again] = await store.claimDue(T0 + 2_000, { limit: 1, leaseMs: 1_000, workerId: 'w' });
    if (again === undefined) throw new Error('expected a claim');
    const next = retryOutcome(again, T0 + 3_000);
    const duplicate = { ...ref, fencingToken: again.fencingToken, attempt: makeAttempt(task), next };
    const error = await store.completeAttempts([duplicate], T0 + 2_100).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DuplicateAttemptError);
    expect(error).toMatchObject({ code: 'DUPLICATE_ATTEMPT', taskId: task.taskId, attemptNumber: 1 });
  });

  it('inserts every field as given through the batch arrays: fractions, extremes, quotes, a leased hand-off', async () => {
    const [store] = await instances(1);
    if (store === undefined) throw new Error('expected a store');
    const quoted = 'a "b" \\ c,{NULL} é ✓ 😀';
    const pending = makeTask({
      idempotencyKey: quoted,
      headers: { 'x-quoted': quoted, 'x-empty': '' },
      body: `{"k":${JSON.stringify(quoted)}}`,
      nextAttemptAt: T0 + 1 / 3,
      runStartedAt: 1e21,
      lastDelayMs: 5e-324,
      createdAt: T0 + 0.1,
      updatedAt: Number.MAX_VALUE,
      traceContext: quoted,
    });
    const handOff = makeTask({
      status: 'IN_FLIGHT',
      body: '',
      bodyRef: 'null',
      policyId: null,
      policy: makePolicy('inline').policy,
      attemptNumber: 3,
      runAttemptOffset: 1,
      nextAttemptAt: null,
      leaseOwner: 'null',
      leaseExpiresAt: T0 + 0.5,
      fencingToken: 2 ** 53 - 1,
      version: 7,
      cancelRequested: true,
      lastError: 'true',
      lastResponseStatus: 503,
      deadLetterReason: '',
      sensitiveBody: true,
    });
    expect(await store.insertTasks([pending, handOff])).toEqual([
      { kind: 'inserted', task: pending },
      { kind: 'inserted', task: handOff },
    ]);
    for (const task of [pending, handOff]) expect(await store.getTask('default', task.taskId)).toEqual(task);
    // A null policy is SQL NULL, not the JSON null (which pg would read back as null too).
    const nulls = await withClient(store.schema, (client) => client.query('SELECT task_id FROM tasks WHERE policy IS NULL'));
    expect(nulls.rows).toEqual([{ task_id: pending.taskId }]);
    // Read as text and cast, not rounded: a fraction where an integer belongs fails the batch, as a key would.
    const fractional = makeTask({ attemptNumber: 1.5 });
    await expect(store.insertTasks([makeTask(), fractional])).rejects.toThrow('invalid input syntax for type integer: "1.5"');
  });

  it('keeps a body holding U+0000 exactly; diagnostics holding it are stored with U+FFFD', async () => {
    const [store] = await instances(1);
    if (store === undefined) throw new Error('expected a store');
    const task = makeTask({ body: 'a\u0000b "quoted" \\ é', lastError: 'bad\u0000byte' });
    await store.insertTasks([task]);
    expect(await store.getTask('default', task.taskId)).toEqual({ ...task, lastError: 'bad\uFFFDbyte' });
    const [held] = await store.claimDue(T0, { limit: 1, leaseMs: 1_000, workerId: 'w' });
    if (held === undefined) throw new Error('expected a claim');
    const attempt = makeAttempt(held, { responseBodySnippet: '\u0000\u0001PNG' });
    await store.completeAttempts([{ ...held, attempt, next: retryOutcome(held, T0 + 5) }], T0 + 1);
    const [logged] = (await store.listAttempts('default', task.taskId, { limit: 5 })).items;
    expect(logged?.responseBodySnippet).toBe('\uFFFD\u0001PNG');
  });
});
