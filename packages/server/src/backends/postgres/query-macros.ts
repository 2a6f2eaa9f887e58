import type { FieldCodec } from '../../domain/task-fields.js';
import { TASK_FIELD_SPECS } from '../../domain/task-fields.js';
import { TARGET_KEY_COLUMN as TARGET_KEY, TASK_COLUMN_NAMES, TASK_STORED_COLUMN_NAMES } from '../sql/task-columns.js';
import { completionInput } from './completion-columns.js';
import { JSONB_FIELDS, JSON_TEXT_FIELDS, type RecordField } from './insert-records.js';
import { PURGED_COLUMNS } from './task-row.js';
import { TaskEvent, transition } from '@retryd/core';
import { DUE_STATUS, LEASED_STATUS, REPLAYED_STATUS } from '../../store/transition-guards.js';

// The statement files never spell a task's columns out: they name them through macros, expanded once when the
// statements are loaded, from the one definition of a task's fields (domain/task-fields.ts). A field added there is
// then read, written and returned by every statement without touching one of them (its migration aside).

// `releaseLeases` hands a lease back as a lapsed one would go, and replay-task.sql keeps the target queue's hint for
// the task it makes due: both are written for a move to the due status, which the lifecycle must still say.
for (const [what, status] of [
  ['a released lease', transition(LEASED_STATUS, TaskEvent.LEASE_EXPIRED)],
  ['a replay', REPLAYED_STATUS],
] as const) {
  if (status !== DUE_STATUS) throw new Error(`The PostgreSQL store expects ${what} to lead to ${DUE_STATUS}, not ${status}.`);
}

/**
 * A scalar column read from its task's array in `insert-tasks`' `$1` (`task`, a jsonb array), by its place: `->>` gives
 * the element as text (a JSON null as NULL), cast to the column's type. Read as text, not cast from jsonb, so that a
 * fractional number meant for an integer column is refused rather than rounded.
 */
const SCALAR_CASTS: Readonly<Record<Exclude<FieldCodec, 'json' | 'json-string'>, (element: string) => string>> = {
  text: (element) => element,
  status: (element) => element,
  'target-url': (element) => element,
  integer: (element) => `(${element})::integer`,
  bigint: (element) => `(${element})::bigint`,
  real: (element) => `(${element})::float8`,
  boolean: (element) => `(${element})::boolean`,
  // The mapping checked the text to be lower-case hex (see insert-records.ts): decode() would take upper-case hex too.
  hex: (element) => `decode(${element}, 'hex')`,
  // The mapping checked the text to be a task id in canonical form (see insert-records.ts): uuid takes other forms too.
  uuid: (element) => `(${element})::uuid`,
};

/**
 * The expression reading one field of a new task from `task` (its array in `$1`, the fields its batch does not share,
 * at the place `places` gives) or `shared_<place>` (the batch's shared field, `$8`, cast once), `texts` (its array in
 * `$2`), and `json_values` (the batch's JSON values, `$3`). See insert-records.ts.
 */
function recordValue(field: RecordField): string {
  // The body's UTF-8 bytes, sent as base64: text could not hold the U+0000 a body may contain (see 010).
  if (field.codec === 'json-string') return `decode(texts->>${field.place}, 'base64')`;
  // A field is in one of the two: a shared one is read once for the batch ({{task_shared_values}}), not for each task.
  return `CASE WHEN places[${field.place + 1}] IS NULL THEN shared_${field.place} ELSE ${typedValue(field, `task->>places[${field.place + 1}]`, 'json_values')} END`;
}

/**
 * A field's value from its text `element` (`->>` of a jsonb array: a JSON null reads as NULL), cast to its column's
 * type. A JSON value travels as its text, in `values` (`$3`) at the place the element gives (null for a JSON null,
 * which reads as NULL): cast to json, it is kept as sent.
 */
function typedValue(field: RecordField, element: string, values: string): string {
  if (field.codec === 'json') return `(${values}->>(${element})::integer)::json`;
  if (field.codec === 'json-string') throw new Error(`The field ${field.name} travels in $2, not in a record.`);
  return SCALAR_CASTS[field.codec](element);
}

const RECORD_FIELDS = [...JSONB_FIELDS, ...JSON_TEXT_FIELDS];

/**
 * The task's columns as a SELECT or RETURNING list reading a `tasks` row (`alias`, or the table itself), each under its
 * own name, in row order. The table has no target key: it is read through the row's queue number (one look-up of
 * target_queues_id), or taken from `keyFrom.target_key` when the statement has the queue at hand.
 */
function taskReadColumns(alias: string | undefined, keyFrom: string | undefined): string {
  const row = alias ?? 'tasks';
  return TASK_COLUMN_NAMES.map((column) => {
    if (column === TARGET_KEY) {
      return keyFrom !== undefined
        ? `${keyFrom}.${TARGET_KEY} AS ${TARGET_KEY}`
        : `(SELECT key_of.target_key FROM target_queues AS key_of WHERE key_of.queue_id = ${row}.queue_id) AS ${TARGET_KEY}`;
    }
    return alias === undefined ? column : `${alias}.${column}`;
  }).join(', ');
}

/** Each macro, by name: its expansion, given the optional arguments after `:` (a table alias, a relation). */
const MACROS: Readonly<Record<string, (alias: string | undefined, keyFrom: string | undefined) => string>> = {
  /**
   * Every task column, in row order, reading a `tasks` row: a SELECT or RETURNING list (`{{task_columns:t}}`:
   * `t.tenant_id, …`), the target key read through the queue's number (`{{task_columns:t:kept}}`: from `kept`).
   */
  task_columns: (alias, keyFrom) => taskReadColumns(alias, keyFrom),
  /** Every task column by its plain name, in row order: a SELECT list over a relation that already has them all. */
  task_names: noAlias('task_names', () => TASK_COLUMN_NAMES.join(', ')),
  /**
   * The columns `tasks` stores, in row order: the task's columns with `queue_id` in place of the target key. An INSERT
   * list, or a SELECT list over a relation that has them.
   */
  task_stored_columns: noAlias('task_stored_columns', () => TASK_STORED_COLUMN_NAMES.join(', ')),
  /**
   * The SELECT list reading a new task's columns, each under its own name, in `{{task_names}}` order, from `task`
   * (its array in insert-tasks' `$1`), `places` (`$9`), the `shared_<place>` values ({{task_shared_values}}), `texts`
   * (its array in `$2`) and `json_values` (`$3`): see insert-records.ts.
   */
  task_record_values: noAlias('task_record_values', () =>
    TASK_FIELD_SPECS.map((spec) => {
      const field = RECORD_FIELDS.find((candidate) => candidate.name === spec.name);
      if (field === undefined) throw new Error(`The field ${spec.name} travels in no array of insert-tasks.`);
      return `${recordValue(field)} AS ${spec.column}`;
    }).join(', '),
  ),
  /**
   * The batch's shared fields (`$8`, by place), each cast once for the statement: `, (SELECT …) AS shared_<place>` for
   * every field of a task's array, to follow the FROM subquery's other uncorrelated values (InitPlans, read once).
   */
  task_shared_values: noAlias('task_shared_values', () =>
    JSONB_FIELDS.map((field) => `, (SELECT ${typedValue(field, `$8::jsonb->>${field.place}`, '$3::jsonb')}) AS shared_${field.place}`).join(''),
  ),
  /**
   * The deletes of a purge (purge-expired.sql, delete-finished-tasks.sql), as CTEs after the one that locked the rows
   * to delete (`{{purged_tasks_from:expired}}`: a relation of their `ctid`s): `purged`, the deleted tasks (the columns
   * of `PurgedTask`, task-row.ts), and the deletes of their attempts. The statement ends `SELECT * FROM purged`.
   *
   * Each task is deleted by ctid, as claim-due.sql updates: the FOR UPDATE that locked it keeps it from moving before
   * the statement ends, and each one is a TID scan whatever the statistics of a young table say. The idempotency key
   * is a column of the task row (tasks_idempotency_key), so deleting the row frees it. `attempts` keeps no foreign key
   * to `tasks` (008-attempts-unchecked.sql): nothing cascades, so the deleted tasks' attempts are deleted here, through
   * attempts_pkey (it leads by tenant and task), from the keys unnested from arrays, which the planner takes for a few
   * rows whatever the batch's size: each task's attempts are then looked up in attempts_pkey. Joined to `purged`
   * itself, the batch was hashed or sorted and joined to a walk of the whole of attempts_pkey whenever the planner took
   * the log for small (a young table) or the batch for large (a generic plan takes `LIMIT $2` for a tenth of the
   * expired tasks).
   */
  purged_tasks_from: (locked, keyFrom) => {
    if (locked === undefined || keyFrom !== undefined) throw new Error('{{purged_tasks_from}} takes exactly one relation: {{purged_tasks_from:expired}}.');
    return [
      `purged AS (DELETE FROM tasks AS t USING ${locked} AS e WHERE t.ctid = e.ctid RETURNING ${PURGED_COLUMNS.map((c) => `t.${c}`).join(', ')}),`,
      'keys AS (SELECT array_agg(tenant_id) AS tenants, array_agg(task_id) AS ids FROM purged),',
      'forgotten AS (DELETE FROM attempts AS a USING keys AS k CROSS JOIN LATERAL unnest(k.tenants, k.ids) AS p(tenant_id, task_id)',
      '  WHERE a.tenant_id = p.tenant_id AND a.task_id = p.task_id)',
    ].join('\n');
  },
  /** `complete-attempts`' input: `unnest($2::integer[], …) AS r(i, …)`, its arrays from `$2` on (completion-columns.ts). */
  completion_records: noAlias('completion_records', () => completionInput(2)),
  /** The status claims take tasks from, as an SQL literal (`'PENDING'`): the one the partial index tasks_due names. */
  due_status: noAlias('due_status', () => `'${DUE_STATUS}'`),
  /** The status of a leased task, as an SQL literal (`'IN_FLIGHT'`): the one the partial index tasks_lease names. */
  leased_status: noAlias('leased_status', () => `'${LEASED_STATUS}'`),
};

function noAlias(name: string, expand: () => string): (alias: string | undefined, keyFrom: string | undefined) => string {
  return (alias, keyFrom) => {
    if (alias !== undefined || keyFrom !== undefined) {
      throw new Error(`{{${name}}} takes no argument; got {{${name}:${[alias, keyFrom].filter((a) => a !== undefined).join(':')}}}.`);
    }
    return expand();
  };
}

const MACRO = /\{\{([a-z_]+)(?::([a-z_][a-z0-9_]*))?(?::([a-z_][a-z0-9_]*))?\}\}/g;

/**
 * Expands the macros of one statement file: `{{task_columns}}`, `{{task_columns:t}}`, `{{task_columns:t:kept}}`,
 * `{{task_names}}`, `{{task_stored_columns}}`, `{{task_record_values}}`, `{{task_shared_values}}`,
 * `{{purged_tasks_from:expired}}`, `{{completion_records}}`, `{{due_status}}`, `{{leased_status}}`.
 *
 * @param file - the file's name, for the error
 * @throws Error naming the file and the macro when a macro is unknown or takes no argument
 * @example
 * ```ts
 * expandMacros('get-task.sql', 'SELECT {{task_columns}} FROM tasks'); // 'SELECT tenant_id, task_id, … FROM tasks'
 * ```
 */
export function expandMacros(file: string, text: string): string {
  const expanded = text.replace(MACRO, (_match, name: string, alias: string | undefined, keyFrom: string | undefined) => {
    const macro = MACROS[name];
    if (macro === undefined || !Object.hasOwn(MACROS, name)) throw new Error(`${file}: unknown macro {{${name}}}.`);
    try {
      return macro(alias, keyFrom);
    } catch (error) {
      throw new Error(`${file}: ${(error as Error).message}`);
    }
  });
  if (expanded.includes('{{')) throw new Error(`${file}: a macro is malformed (expected {{name}}, {{name:alias}} or {{name:alias:relation}}).`);
  return expanded;
}
