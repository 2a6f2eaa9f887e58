import { describe, expect, it } from 'vitest';
import { insertTaskValues, JSONB_FIELDS, packedRecords } from '../src/backends/postgres/insert-records.js';
import type { RetryTask } from '../src/domain/task.js';
import { makeStore } from './postgres-harness.js';
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
