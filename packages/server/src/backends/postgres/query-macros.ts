import type { FieldCodec } from '../../domain/task-fields.js';
import { TASK_FIELD_SPECS } from '../../domain/task-fields.js';
import { taskColumnList } from '../sql/task-columns.js';
import { completionInput } from './completion-columns.js';
import { JSONB_FIELDS, JSON_TEXT_FIELDS, type RecordField } from './insert-records.js';
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

/** The expression reading one field of a new task from `task` (its array in `$1`) or `texts` (its array in `$2`). */
function recordValue(field: RecordField): string {
  // The body's UTF-8 bytes, sent as base64: text could not hold the U+0000 a body may contain (see 010).
  if (field.codec === 'json-string') return `decode(texts->>${field.place}, 'base64')`;
  // A JSON value travels as its text (a JSON null as null, which `->>` reads as NULL): cast to json, it is kept as sent.
  if (field.codec === 'json') return `(task->>${field.place})::json`;
  return SCALAR_CASTS[field.codec](`task->>${field.place}`);
}

const RECORD_FIELDS = [...JSONB_FIELDS, ...JSON_TEXT_FIELDS];

/** Each macro, by name: its expansion, given the optional argument after `:` (a table alias). */
const MACROS: Readonly<Record<string, (alias: string | undefined) => string>> = {
  /** Every task column, in row order: a SELECT, RETURNING or INSERT list (`{{task_columns:t}}`: `t.tenant_id, …`). */
  task_columns: (alias) => taskColumnList(alias),
  /**
   * The SELECT list reading a new task's columns, each under its own name, in `{{task_columns}}` order, from `task`
   * (its array in insert-tasks' `$1`) and `texts` (its array in `$2`): see insert-records.ts.
   */
  task_record_values: noAlias('task_record_values', () =>
    TASK_FIELD_SPECS.map((spec) => {
      const field = RECORD_FIELDS.find((candidate) => candidate.name === spec.name);
      if (field === undefined) throw new Error(`The field ${spec.name} travels in no array of insert-tasks.`);
      return `${recordValue(field)} AS ${spec.column}`;
    }).join(', '),
  ),
  /** `complete-attempts`' input: `unnest($2::integer[], …) AS r(i, …)`, its arrays from `$2` on (completion-columns.ts). */
  completion_records: noAlias('completion_records', () => completionInput(2)),
  /** The status claims take tasks from, as an SQL literal (`'PENDING'`): the one the partial index tasks_due names. */
  due_status: noAlias('due_status', () => `'${DUE_STATUS}'`),
  /** The status of a leased task, as an SQL literal (`'IN_FLIGHT'`): the one the partial index tasks_lease names. */
  leased_status: noAlias('leased_status', () => `'${LEASED_STATUS}'`),
};

function noAlias(name: string, expand: () => string): (alias: string | undefined) => string {
  return (alias) => {
    if (alias !== undefined) throw new Error(`{{${name}}} takes no argument; got {{${name}:${alias}}}.`);
    return expand();
  };
}

const MACRO = /\{\{([a-z_]+)(?::([a-z_][a-z0-9_]*))?\}\}/g;

/**
 * Expands the macros of one statement file: `{{task_columns}}`, `{{task_columns:t}}`, `{{task_record_values}}`,
 * `{{completion_records}}`, `{{due_status}}`, `{{leased_status}}`.
 *
 * @param file - the file's name, for the error
 * @throws Error naming the file and the macro when a macro is unknown or takes no argument
 * @example
 * ```ts
 * expandMacros('get-task.sql', 'SELECT {{task_columns}} FROM tasks'); // 'SELECT tenant_id, task_id, … FROM tasks'
 * ```
 */
export function expandMacros(file: string, text: string): string {
  const expanded = text.replace(MACRO, (_match, name: string, alias: string | undefined) => {
    const macro = MACROS[name];
    if (macro === undefined || !Object.hasOwn(MACROS, name)) throw new Error(`${file}: unknown macro {{${name}}}.`);
    try {
      return macro(alias);
    } catch (error) {
      throw new Error(`${file}: ${(error as Error).message}`);
    }
  });
  if (expanded.includes('{{')) throw new Error(`${file}: a macro is malformed (expected {{name}} or {{name:alias}}).`);
  return expanded;
}
