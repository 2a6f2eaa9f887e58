import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { arrayLiteral, arrayLiteralOf, nullArrayLiteral } from '../src/backends/postgres/array-literal.js';
import { COMPLETION_COLUMNS, completionArrays } from '../src/backends/postgres/completion-columns.js';
import type { AttemptCompletion } from '../src/store/store.js';
import { T0, finalOutcome, makeAttempt, makeTask, retryOutcome } from './fixtures/tasks.js';
import { withClient } from './postgres-harness.js';

/** What PostgreSQL reads back from one array literal, element by element, as JavaScript values. */
async function readBack(literal: string, type: string): Promise<unknown[]> {
  return withClient('public', async (client) => {
    const { rows } = await client.query<{ v: unknown }>(`SELECT v FROM unnest($1::${type}[]) WITH ORDINALITY AS u(v, n) ORDER BY n`, [literal]);
    return rows.map((row) => row.v);
  });
}

describe('arrayLiteral', () => {
  it('reads back every text as it was, quotes, backslashes, braces, commas, blanks and the word NULL included', async () => {
    const texts = ['', 'plain', 'NULL', 'null', 'a,b', '{x}', ' lead and trail ', 'say "hi"', 'back\\slash', '\\"', 'é ☃ 𝄞', '\t\n', null];
    expect(await readBack(arrayLiteral(texts, 'text'), 'text')).toEqual(texts);
  });

  it('reads back any string without U+0000', async () => {
    const strings = fc.array(fc.option(fc.string({ unit: 'binary' }).map((s) => s.replaceAll('\u0000', '')), { nil: null }), { maxLength: 40 });
    const samples = fc.sample(strings, 25);
    for (const values of samples) expect(await readBack(arrayLiteral(values, 'text'), 'text')).toEqual(values);
  });

  it('reads back numbers exactly, and makes what JSON cannot hold NULL', async () => {
    const floats = [0, -0.5, 0.39081061862836197, 1795745583232.123, Number.MAX_VALUE, 5e-324, NaN, Infinity, -Infinity, null, undefined];
    expect(await readBack(arrayLiteral(floats, 'float8'), 'float8')).toEqual([0, -0.5, 0.39081061862836197, 1795745583232.123, Number.MAX_VALUE, 5e-324, null, null, null, null, null]);
    expect(await readBack(arrayLiteral([1, -2, 2_147_483_647, null], 'integer'), 'integer')).toEqual([1, -2, 2_147_483_647, null]);
    // pg returns bigint as text unless told otherwise; the store's connections parse it (connection.ts).
    expect(await readBack(arrayLiteral([0, 9_007_199_254_740_991, null], 'bigint'), 'bigint')).toEqual(['0', '9007199254740991', null]);
    expect(await readBack(arrayLiteral([true, false, null], 'boolean'), 'boolean')).toEqual([true, false, null]);
  });

  it('refuses a value of another kind than its type takes, which PostgreSQL might read as something else', async () => {
    expect(() => arrayLiteral(['yes'], 'boolean')).toThrow('A boolean array element must be a boolean or null; got string.');
    expect(() => arrayLiteral([1], 'text')).toThrow('A text array element must be a string or null; got number.');
    expect(() => arrayLiteral(['1'], 'float8')).toThrow('A float8 array element must be a number or null; got string.');
    // A fraction for an integer column is PostgreSQL's to refuse.
    await expect(readBack(arrayLiteral([1.5], 'integer'), 'integer')).rejects.toMatchObject({ code: '22P02' });
  });

  it('is an empty array for no values', async () => {
    expect(arrayLiteral([], 'text')).toBe('{}');
    expect(await readBack('{}', 'text')).toEqual([]);
  });
});

describe('arrayLiteralOf and nullArrayLiteral', () => {
  it('make the literal arrayLiteral makes of the values', async () => {
    const rows = fc.sample(fc.array(fc.option(fc.string(), { nil: null }), { maxLength: 30 }), 20);
    for (const values of rows) expect(arrayLiteralOf(values, 'text', (value) => value)).toBe(arrayLiteral(values, 'text'));
    expect(arrayLiteralOf([{ n: 1 }, { n: 2.5 }], 'float8', (row, i) => row.n + i)).toBe('{1,3.5}');
    expect(() => arrayLiteralOf([{ n: '1' }], 'float8', (row) => row.n)).toThrow('A float8 array element must be a number or null; got string.');
    for (const length of [0, 1, 3, 1000]) expect(nullArrayLiteral(length)).toBe(arrayLiteral(new Array(length).fill(null), 'text'));
    expect(await readBack(nullArrayLiteral(3), 'float8')).toEqual([null, null, null]);
  });
});

describe('completionArrays', () => {
  /** The literals built column by column, with no shortcut: what completionArrays must equal. */
  const plainly = (completions: AttemptCompletion[]) => COMPLETION_COLUMNS.map(({ type, value }) => arrayLiteral(completions.map(value), type));
  const completion = (cancel: boolean): AttemptCompletion => {
    const task = makeTask({ status: 'IN_FLIGHT', fencingToken: 2, attemptNumber: 1 });
    const attempt = makeAttempt(task, { outcome: 'failed', responseStatus: 503, errorMessage: 'HTTP 503 "busy"' });
    return {
      tenantId: task.tenantId,
      taskId: task.taskId,
      fencingToken: task.fencingToken,
      attempt,
      next: retryOutcome(task, T0 + 1_000),
      ...(cancel ? { ifCancelRequested: finalOutcome(task, 'CANCELLED'), attemptIfCancelRequested: { ...attempt, outcome: 'cancelled' as const } } : {}),
    };
  };

  it('repeats the outcome and leaves the cancel attempt NULL in a call without a cancel, as building each column would', () => {
    const call = [completion(false), completion(false), completion(false)];
    const literals = completionArrays(call);
    expect(literals).toEqual(plainly(call));
    const at = (column: string) => literals[COMPLETION_COLUMNS.findIndex((c) => c.column === column)];
    expect(at('c_status')).toBe('{"PENDING","PENDING","PENDING"}');
    expect(at('ac_outcome')).toBe('{NULL,NULL,NULL}');
  });

  it('builds every column of a call in which any completion has a cancel', () => {
    const call = [completion(false), completion(true), completion(false)];
    const literals = completionArrays(call);
    expect(literals).toEqual(plainly(call));
    expect(literals[COMPLETION_COLUMNS.findIndex((c) => c.column === 'c_status')]).toBe('{"PENDING","CANCELLED","PENDING"}');
  });
});
