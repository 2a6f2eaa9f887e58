import type { FieldCodec } from '../../domain/task-fields.js';
import { TASK_FIELD_SPECS } from '../../domain/task-fields.js';
import { taskColumnList } from '../sql/task-columns.js';
import { completionInput } from './completion-columns.js';
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
 * How each codec travels in a `json_to_recordset` record. A `json-string` (the body) arrives as its JSON text and is
 * cast to `json` on insert: text could not hold the U+0000 a body may contain (see 001-init.sql).
 */
const RECORD_TYPES: Readonly<Record<FieldCodec, string>> = {
  text: 'text',
  integer: 'integer',
  bigint: 'bigint',
  real: 'float8',
  boolean: 'boolean',
  json: 'jsonb',
  'json-string': 'text',
  hex: 'text',
};

/**
 * What a record column becomes on insert, when it is not stored as it arrives: the body's JSON text as `json`, a hex
 * digest as its bytes (`bytea`; the text was checked to be lower-case hex by the mapping, see task-row.ts).
 */
const INSERT_VALUES: Partial<Record<FieldCodec, (column: string) => string>> = {
  'json-string': (column) => `${column}::json`,
  hex: (column) => `decode(${column}, 'hex')`,
};

const prefixed = (alias: string | undefined, column: string) => (alias === undefined ? column : `${alias}.${column}`);

/** Each macro, by name: its expansion, given the optional argument after `:` (a table alias). */
const MACROS: Readonly<Record<string, (alias: string | undefined) => string>> = {
  /** Every task column, in row order: a SELECT, RETURNING or INSERT list (`{{task_columns:t}}`: `t.tenant_id, …`). */
  task_columns: (alias) => taskColumnList(alias),
  /** The column definitions of a task record in `json_to_recordset(...) AS r(…)`. */
  task_record_types: noAlias('task_record_types', () =>
    TASK_FIELD_SPECS.map((spec) => `${spec.column} ${RECORD_TYPES[spec.codec]}`).join(', '),
  ),
  /** The SELECT list that inserts a task record's columns (in `{{task_columns}}` order), cast where stored otherwise. */
  task_insert_values: (alias) =>
    TASK_FIELD_SPECS.map((spec) => {
      const column = prefixed(alias, spec.column);
      return INSERT_VALUES[spec.codec]?.(column) ?? column;
    }).join(', '),
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
 * Expands the macros of one statement file: `{{task_columns}}`, `{{task_columns:t}}`, `{{task_record_types}}`,
 * `{{task_insert_values}}`, `{{completion_records}}`, `{{due_status}}`, `{{leased_status}}`.
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
