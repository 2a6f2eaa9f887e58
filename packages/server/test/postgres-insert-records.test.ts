import { describe, expect, it } from 'vitest';
import { insertTaskValues, JSONB_FIELDS, packedRecords } from '../src/backends/postgres/insert-records.js';
import type { RetryTask } from '../src/domain/task.js';
import { dueChannel } from '../src/backends/postgres/connection.js';
import { loadQueries } from '../src/backends/postgres/queries.js';
import { createPgEnqueuer } from '../src/pg-enqueue/index.js';
import { makeStore, withClient } from './postgres-harness.js';
import { makeTask, T0 } from './fixtures/tasks.js';

// How a batch travels to insert-tasks.sql (insert-records.ts): a JSON value its tasks share is written once, and a
// number as its decimal text. The statement must read every task back as it was given.

const placeOf = (name: string) => JSONB_FIELDS.find((field) => field.name === name)?.place as number;
/** Each task's full record, as insert-tasks.sql reads it back from its array in `$1`, `$8` and `$9`. */
const fullRecords = (tasks: readonly RetryTask[]): unknown[][] => {
  const [jsonb, , , , , , , shared, places] = insertTaskValues(tasks, 'retryd_due_test');
  const sharedRecord = JSON.parse(shared) as unknown[];
  return (JSON.parse(jsonb) as unknown[][]).map((own) => places.map((place, field) => (place === null ? sharedRecord[field] : own[place])));
};
const POLICY = { maxAttempts: 5, backoffType: 'EXPONENTIAL', initialDelayMs: 1, multiplier: 2, maxDelayMs: 10, jitterType: 'FULL' } as const;

describe('insertTaskValues', () => {
  it("writes a JSON value once for the tasks that share it, and each task's own value apart", () => {
    const other = { ...POLICY, maxAttempts: 7 };
    const tasks = [POLICY, POLICY, other, POLICY, null].map((policy, i) => makeTask({ policy, policyId: null, headers: { 'x-request': `r${i}` } }));
    const jsonValues = insertTaskValues(tasks, 'retryd_due_test')[2];
    const records = fullRecords(tasks);
    const texts = JSON.parse(jsonValues) as string[];
    const policies = records.map((record) => record[placeOf('policy')] as number | null);
    expect(policies[0]).toBe(policies[1]);
    expect(policies[2]).not.toBe(policies[1]);
    expect(policies[4]).toBeNull();
    expect(policies.map((place) => (place === null ? null : JSON.parse(texts[place] as string)))).toEqual([POLICY, POLICY, other, POLICY, null]);
    // Each task's own headers, in the order given: five of them, and the three policies (the first one again after another).
    expect(texts).toHaveLength(5 + 3);
    expect(records.map((record) => JSON.parse(texts[record[placeOf('headers')] as number] as string))).toEqual(tasks.map((t) => t.headers));
  });

  it('writes numbers as the text JSON gives them, and none for NaN or an infinity, as JSON does', () => {
    const tasks = [makeTask({ lastDelayMs: 1.5, nextAttemptAt: T0 }), makeTask({ lastDelayMs: Number.NaN, nextAttemptAt: T0 }), makeTask({ lastDelayMs: Infinity, nextAttemptAt: 1e21 })];
    const records = fullRecords(tasks);
    expect(records.map((record) => record[placeOf('lastDelayMs')])).toEqual(['1.5', null, null]);
    expect(records.map((record) => record[placeOf('nextAttemptAt')])).toEqual([String(T0), String(T0), '1e+21']);
    expect(records.map((record) => record[placeOf('attemptNumber')])).toEqual(['0', '0', '0']);
  });
});

/** `packedRecords` of these full records. */
const packed = (full: readonly unknown[][]) =>
  packedRecords(full.length, full[0]?.length ?? 0, (i, out) => (full[i] as unknown[]).forEach((value, field) => (out[field] = value)));

describe('packedRecords', () => {
  it("writes a field its tasks hold alike once, and each task's own value of the others, a null among them too", () => {
    const { records, shared, places } = packed([
      ['a', 'x', null, '1', false],
      ['a', 'y', null, null, false],
      ['a', 'z', null, '1', false],
    ]);
    expect(shared).toEqual(['a', null, null, null, false]);
    expect(places).toEqual([null, 0, null, 1, null]);
    expect(records).toEqual([
      ['x', '1'],
      ['y', null],
      ['z', '1'],
    ]);
  });

  it('gives a field its own column from the first record on when a later record first differs in it', () => {
    const { records, shared, places } = packed([
      ['a', '1', 'p'],
      ['a', '1', 'q'],
      ['a', '2', 'q'],
      ['b', '1', 'q'],
    ]);
    expect(shared).toEqual([null, null, null]);
    expect(places).toEqual([0, 1, 2]);
    expect(records).toEqual([
      ['a', '1', 'p'],
      ['a', '1', 'q'],
      ['a', '2', 'q'],
      ['b', '1', 'q'],
    ]);
  });

  it('writes every field of a single task in the shared record, and an empty array for the task', () => {
    expect(packed([['a', null, '3']])).toEqual({ records: [[]], shared: ['a', null, '3'], places: [null, null, null] });
  });
});

describe('PostgresStore insertTasks', () => {
  it('reads back every task of a batch whose tasks share JSON values and times as it was given', async () => {
    await using store = makeStore();
    await store.init();
    const other = { ...POLICY, retryableStatusCodes: [503] };
    const given: RetryTask[] = [POLICY, POLICY, other, POLICY, null].map((policy, i) =>
      makeTask({ policy, policyId: policy === null ? 'default' : null, headers: { 'x-request': `r${i}` }, lastDelayMs: i === 1 ? 12.25 : 0, nextAttemptAt: T0 + (i % 2), runStartedAt: T0 }),
    );
    const results = await store.insertTasks(given);
    expect(results.map((r) => r.kind)).toEqual(given.map(() => 'inserted'));
    for (const task of given) expect(await store.getTask(task.tenantId, task.taskId)).toEqual(task);
  });

  it("reads back a task whose fields differ from its batch's in a null, a leased status and a callback", async () => {
    await using store = makeStore();
    await store.init();
    const given: RetryTask[] = [
      makeTask({ lastError: 'refused', traceContext: null, nextAttemptAt: T0 }),
      makeTask({ lastError: null, traceContext: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', nextAttemptAt: T0 + 1 }),
      makeTask({ status: 'IN_FLIGHT', leaseOwner: 'w1', leaseExpiresAt: T0 + 30_000, nextAttemptAt: null, callback: { url: 'https://cb.example/done', on: ['succeeded'], policyId: null } }),
    ];
    const results = await store.insertTasks(given);
    expect(results.map((r) => r.kind)).toEqual(given.map(() => 'inserted'));
    for (const task of given) expect(await store.getTask(task.tenantId, task.taskId)).toEqual(task);
  });
});

describe("insert-tasks' commit without the WAL flush (the hand-off's, $10) and flush-wal", () => {
  it('skips the flush for its own transaction alone, and only when asked', async () => {
    await using store = makeStore();
    await store.init();
    // The target's queue made first: the statement makes none itself.
    await store.insertTasks([makeTask()]);
    const queries = await loadQueries();
    const commitModes = await withClient(store.schema, async (client) => {
      const modes: unknown[] = [];
      for (const asyncCommit of [true, false]) {
        await client.query('BEGIN');
        const { rows } = await client.query<{ inserted: number; async_commit: string | null }>(queries['insert-tasks'].text, insertTaskValues([makeTask()], dueChannel(store.schema), asyncCommit));
        const inside = (await client.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0]?.synchronous_commit;
        await client.query('COMMIT');
        const after = (await client.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0]?.synchronous_commit;
        modes.push({ asyncCommit, inserted: rows[0]?.inserted, reported: rows[0]?.async_commit, inside, after });
      }
      return modes;
    }, 'store');
    expect(commitModes).toEqual([
      { asyncCommit: true, inserted: 1, reported: 'off', inside: 'off', after: 'on' },
      { asyncCommit: false, inserted: 1, reported: null, inside: 'on', after: 'on' },
    ]);
  });

  it('answers insertTasksVisible once its tasks are visible, and `durable` once the WAL is flushed past them', async () => {
    await using store = makeStore();
    await store.init();
    const task = makeTask({ status: 'IN_FLIGHT', leaseOwner: 'local-engine', leaseExpiresAt: T0 + 60_000, fencingToken: 1 });
    const { results, durable } = await store.insertTasksVisible([task]);
    expect(results).toEqual([{ kind: 'inserted', task }]);
    await withClient(store.schema, async (client) => {
      // Another connection sees it at once; the WAL written so far ends past its commit.
      expect((await client.query(`SELECT 1 FROM tasks WHERE idempotency_key = $1`, [task.idempotencyKey])).rowCount).toBe(1);
      const written = (await client.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn')).rows[0]?.lsn;
      await durable;
      const flushed = await client.query<{ past: boolean }>('SELECT pg_current_wal_flush_lsn() >= $1::pg_lsn AS past', [written]);
      expect(flushed.rows[0]?.past).toBe(true);
    });
  });

  it("leaves the application's own commit as it set it: the transactional enqueue never skips the flush", async () => {
    await using store = makeStore();
    await store.init();
    const enqueuer = createPgEnqueuer({ schema: store.schema, allowTargets: '127.0.0.1/32' });
    const modes = await withClient('public', async (client) => {
      const seen: string[] = [];
      for (const mode of ['on', 'remote_write']) {
        await client.query('BEGIN');
        await client.query(`SET LOCAL synchronous_commit = ${mode}`);
        await enqueuer.enqueue(client, { targetUrl: 'http://127.0.0.1:9/hook', method: 'POST' });
        seen.push((await client.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0]?.synchronous_commit ?? '');
        await client.query('COMMIT');
      }
      return seen;
    });
    expect(modes).toEqual(['on', 'remote_write']);
  });
});
