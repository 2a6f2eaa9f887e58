import type { RetryTask } from '../../domain/task.js';
import { TASK_FIELD_SPECS, type FieldCodec } from '../../domain/task-fields.js';
import { jsonTextRecord, jsonbRecord } from './generated/insert-records.js';

// How a batch of new tasks travels to insert-tasks.sql: `$1`, a jsonb array with one positional array per task of the
// fields its tasks do not all share; `$8`, the batch's shared record (every field but those of `JSON_TEXT_FIELDS`, in
// row order, a field its tasks do not share as null); `$9`, each field's place in the tasks' arrays (null for a shared
// one); `$2`, a json array with one positional array per task of the `JSON_TEXT_FIELDS` values; and `$3`, a jsonb array
// of the batch's JSON values. Positional, not one object per task read by `json_to_recordset`: PostgreSQL then finds
// each column by its place instead of hashing every key of every record (about half the statement's reading of the
// batch), and the text sent holds no column names. A field every task of a batch holds alike (a new task's status and
// counters, the times of one request, its tenant, the many nulls) is written once, in `$8`: a W6 task's array keeps 5
// of its 33 fields, and the batch's `$1` went from 340 to 135 kB, which the service writes and sends and the server
// parses (a third of the server's reading of the batch).
//
// A JSON value (headers, an inline policy) travels in `$3` as its JSON text, a string the statement casts to json:
// the column then keeps that compact text, where a jsonb value cast to json would be printed with spaces. A task's
// array holds the value's place in `$3`, where each value object of the batch is written once: an application that
// gives every task of a batch one policy object (the transactional enqueue) sends and serialises it once, not once a
// task (it was a fifth of the bytes of such a batch, and of the work of writing it). A number travels as its decimal
// text (`BatchRepeats.numberText` says why), cast by the statement as a number's JSON would be. The body stays out
// of the jsonb, whose values hold at most 256 MB, while a flush of 5,000 tasks (the enqueue batcher's most)
// with bodies at the 64 KiB inline limit comes to about 440 MB. `$2` is `json`, kept as its text (up to 1 GB). The
// body, a `bytea` column, travels as the base64 of its UTF-8 bytes: text (and the `->>` that reads one) cannot hold
// U+0000.

/** A field of a task and its place in its task's array in `$1` or `$2`. */
export type RecordField = (typeof TASK_FIELD_SPECS)[number] & { readonly place: number };

const inJsonText = (codec: FieldCodec) => codec === 'json-string';

const placed = (keep: (codec: FieldCodec) => boolean): readonly RecordField[] =>
  Object.freeze(TASK_FIELD_SPECS.filter((spec) => keep(spec.codec)).map((spec, place) => Object.freeze({ ...spec, place })));

/** The fields of a task's array in `$1` (jsonb), in row order: every field but a `json-string`. */
export const JSONB_FIELDS: readonly RecordField[] = placed((codec) => !inJsonText(codec));

/** The fields of a task's array in `$2` (json), in row order: the `json-string` ones (the body). */
export const JSON_TEXT_FIELDS: readonly RecordField[] = placed(inJsonText);

const isNumber = (codec: FieldCodec) => codec === 'integer' || codec === 'bigint' || codec === 'real';

/** The `json` fields of a task's array in `$1`: each one's index here is its slot in a {@link BatchRepeats}. */
export const JSON_SLOTS: readonly string[] = JSONB_FIELDS.filter((field) => field.codec === 'json').map((field) => field.name);
/** The number fields of a task's array in `$1`: each one's index here is its slot in a {@link BatchRepeats}. */
export const NUMBER_SLOTS: readonly string[] = JSONB_FIELDS.filter((field) => isNumber(field.codec)).map((field) => field.name);

/** Never a field's value: the last value of a slot before any. */
const NONE: unique symbol = Symbol('none');

/**
 * What the tasks of one batch repeat, written once: the fields of a batch's tasks often hold what the task before held
 * (one policy object for every task an application enqueues; one "now" in the creation, update and run-start times of
 * every task of a request, and often one due time). Each field keeps its last value and its text in a slot of its own
 * (a task's own headers are not looked for in a map of every value). By identity, within one synchronous call, in which
 * nothing can change a value between two tasks that share it.
 */
export class BatchRepeats {
  /** The batch's JSON values, as texts: `$3`. */
  readonly texts: string[] = [];
  readonly #lastJson: unknown[] = JSON_SLOTS.map(() => NONE);
  readonly #lastPlace: number[] = JSON_SLOTS.map(() => -1);
  readonly #lastNumber: unknown[] = NUMBER_SLOTS.map(() => NONE);
  readonly #lastNumberText: (string | null)[] = NUMBER_SLOTS.map(() => null);

  /** The place in `$3` of a JSON value (field `slot`): the task before's, when it is the same object. */
  jsonPlace(value: unknown, slot: number): number {
    if (value === this.#lastJson[slot]) return this.#lastPlace[slot] as number;
    const place = this.texts.push(JSON.stringify(value)) - 1;
    this.#lastJson[slot] = value;
    this.#lastPlace[slot] = place;
    return place;
  }

  /**
   * A number (field `slot`) as the decimal text JSON would write, or null for none (and, as JSON writes them, for NaN
   * and the infinities, which the columns refuse as NULL). Text rather than a JSON number: the JavaScript of a number
   * in the epoch-ms range was a third of the writing of the batch, and the server keeps a jsonb number as a `numeric`
   * that `->>` writes back out as text, where a string is read as it is.
   */
  numberText(value: number | null, slot: number): string | null {
    if (value === this.#lastNumber[slot]) return this.#lastNumberText[slot] as string | null;
    const text = value === null || !Number.isFinite(value) ? null : String(value);
    this.#lastNumber[slot] = value;
    this.#lastNumberText[slot] = text;
    return text;
  }
}

/**
 * `insert-tasks`' values for a batch, `$1` to `$10`, in its order (the statement numbers the tasks by their place): the
 * arrays of its tasks (the fields they do not share), the texts of its JSON values, the number of its tasks, its
 * distinct target queues (`queueKeysOf`), the wake-up channel, the batch's shared record and the places of the
 * fields its tasks do not share ({@link packedRecords}), then whether its commit skips the WAL flush (`asyncCommit`:
 * the service's hand-off, made durable by flush-wal.sql before the enqueue answers).
 *
 * @example
 * ```ts
 * client.query(queries['insert-tasks'].text, insertTaskValues(tasks, dueChannel(schema)));
 * ```
 * @throws Error naming the column when a `hex` value is not lower-case hex
 */
export function insertTaskValues(tasks: readonly RetryTask[], channel: string, asyncCommit = false): InsertTaskValues {
  const repeats = new BatchRepeats();
  const { records, shared, places } = packedRecords(tasks.length, JSONB_FIELDS.length, (i, out) => jsonbRecord(tasks[i] as RetryTask, repeats, out));
  const texts = tasks.map((task) => jsonTextRecord(task, repeats));
  const [tenants, keys] = queueKeysOf(tasks);
  return [JSON.stringify(records), JSON.stringify(texts), JSON.stringify(repeats.texts), tasks.length, tenants, keys, channel, JSON.stringify(shared), places, asyncCommit];
}

/** `insert-tasks`' `$1` to `$10` (see {@link insertTaskValues}). */
export type InsertTaskValues = [
  jsonb: string,
  json: string,
  jsonValues: string,
  count: number,
  tenants: string[],
  keys: string[],
  channel: string,
  shared: string,
  places: (number | null)[],
  asyncCommit: boolean,
];

/**
 * A batch's full records (`width` fields each, in row order, written by `write(i, out)` for record `i`, from 0) split
 * into what its records share and what they do not: `shared`, one full record holding each field every record holds
 * alike (by `===`: the values are texts, numbers' texts, places in `$3`, booleans and nulls) and null for the others;
 * `places`, for each field, its place in the records' `records`, or null when shared; `records`, each record's values of
 * the fields not shared, in row order. insert-tasks.sql reads a field from the task's array when `places` gives it a
 * place, else from `shared` (cast once for the batch); a field that is not shared is null in `shared`.
 *
 * No full record is kept for each: each is written into one scratch array and compared with the first, and a field gets
 * a column of its own (the first record's value for the records before) only once some record holds another value. A
 * thousand full records of 33 fields a batch, alive together until they were packed, were the largest share of the
 * insert's garbage.
 */
export function packedRecords(
  count: number,
  width: number,
  write: (index: number, out: unknown[]) => void,
): { records: unknown[][]; shared: unknown[]; places: (number | null)[] } {
  if (count === 0) return { records: [], shared: [], places: [] };
  const shared = new Array<unknown>(width);
  write(0, shared);
  const columns: (unknown[] | undefined)[] = new Array<unknown[] | undefined>(width).fill(undefined);
  const scratch = new Array<unknown>(width);
  for (let i = 1; i < count; i++) {
    write(i, scratch);
    for (let field = 0; field < width; field++) {
      const value = scratch[field];
      const column = columns[field];
      if (column !== undefined) column[i] = value;
      else if (value !== shared[field]) {
        const own = new Array<unknown>(count).fill(shared[field], 0, i);
        own[i] = value;
        columns[field] = own;
      }
    }
  }
  const places: (number | null)[] = [];
  const kept: unknown[][] = [];
  for (let field = 0; field < width; field++) {
    const column = columns[field];
    if (column === undefined) places.push(null);
    else {
      places.push(kept.length);
      kept.push(column);
      shared[field] = null;
    }
  }
  const records = new Array<unknown[]>(count);
  for (let i = 0; i < count; i++) {
    const own = new Array<unknown>(kept.length);
    for (let j = 0; j < kept.length; j++) own[j] = (kept[j] as unknown[])[i];
    records[i] = own;
  }
  return { records, shared, places };
}

/**
 * The distinct target queues of a batch, as two arrays by place: tenant ids and target keys. `insert-tasks` reads
 * their numbers, and `add-target-queues` makes those that do not exist yet.
 */
export function queueKeysOf(tasks: readonly RetryTask[]): [tenants: string[], keys: string[]] {
  const tenants: string[] = [];
  const keys: string[] = [];
  const seen = new Set<string>();
  for (const task of tasks) {
    // The tasks of a batch mostly come in runs to one queue: no key text made for each of them.
    if (task.targetKey === keys[keys.length - 1] && task.tenantId === tenants[tenants.length - 1]) continue;
    const queue = `${task.tenantId}\u0000${task.targetKey}`;
    if (seen.has(queue)) continue;
    seen.add(queue);
    tenants.push(task.tenantId);
    keys.push(task.targetKey);
  }
  return [tenants, keys];
}
