import { TASK_FIELDS, type FieldCodec } from '../../domain/task-fields.js';
import { generatedModule, quoted, taskLiteral, type GeneratedFile, type PlacedField } from '../../codegen/task-literal.js';
import { PURGED_FIELDS } from './task-row.js';
import { JSONB_FIELDS, JSON_SLOTS, JSON_TEXT_FIELDS, NUMBER_SLOTS, type RecordField } from './insert-records.js';

// The source of PostgreSQL's row mappers (generated/*.ts): how each codec is read from a row pg decoded, and how it
// travels to insert-tasks.sql (see insert-records.ts).

/** The codecs kept as `bytea`, and the encoding their Buffer is read back as text in. */
const BYTEA_TEXT: Partial<Record<FieldCodec, BufferEncoding>> = { hex: 'hex', 'json-string': 'utf8' };

/** TypeScript reading one field's value from a row `r` (see task-row.ts `taskFromRow`). */
function rowValue(field: PlacedField): string {
  const value = `r.${field.column}`;
  if (field.codec === 'target-url') return `targetUrlOfStored(${value} as string, r.${TASK_FIELDS.targetKey.column} as string)`;
  const encoding = BYTEA_TEXT[field.codec];
  // pg decodes every other codec (see connection.ts): the value is the field's already.
  if (encoding === undefined) return `${value} as RetryTask['${field.name}']`;
  const text = `(${value} as Buffer).toString('${encoding}')`;
  return field.nullable ? `${value} === null ? null : ${text}` : text;
}

/** TypeScript giving a field's value (`t.<name>`) as it travels in its array (see insert-records.ts). */
function recordValue(field: RecordField): string {
  const value = `t.${field.name}`;
  // The body's UTF-8 bytes in base64 (a lone surrogate, with no UTF-8 form, as U+FFFD), decoded by the statement into its bytea column.
  if (field.codec === 'json-string') return `${value} === null ? null : Buffer.from(${value}, 'utf8').toString('base64')`;
  // A JSON value as its place in `$3`, which holds its text (the statement casts it to json).
  if (field.codec === 'json') return `${value} === null ? null : repeats.jsonPlace(${value}, ${JSON_SLOTS.indexOf(field.name)})`;
  // A number as its text, which the statement casts (see `BatchRepeats.numberText`).
  if (NUMBER_SLOTS.includes(field.name)) return `repeats.numberText(${value}, ${NUMBER_SLOTS.indexOf(field.name)})`;
  if (field.codec === 'text' || field.codec === 'status') return `text(${value})`;
  // Kept after its target key (see domain/target-key.ts), as text.
  if (field.codec === 'target-url') return `text(storedTargetUrl(${value}, t.targetKey, ${quoted(field.column)}))`;
  // Refused here, before the statement: decode() would take upper-case hex, whose bytes read back as other text.
  if (field.codec === 'hex') return `${value} === null ? null : checkedHex(${value}, ${quoted(field.column)})`;
  // Refused here too: the uuid type takes upper case, braces and no hyphens, which would read back as other text.
  if (field.codec === 'uuid') return `${value} === null ? null : checkedTaskId(${value}, ${quoted(field.column)})`;
  return value;
}

function recordFunction(name: string, fields: readonly RecordField[], what: string): string {
  const values = fields.map((field, place) => `  out[${place}] = ${recordValue(field)};`).join('\n');
  return `/** A task's array in ${what} of insert-tasks.sql, written into \`out\` (a new array by default): see insert-records.ts. */
export function ${name}(t: RetryTask, ${values.includes('repeats.') ? 'repeats' : '_repeats'}: BatchRepeats, out: unknown[] = new Array<unknown>(${fields.length})): unknown[] {
${values}
  return out;
}`;
}

/** PostgreSQL's row mappers: `taskFromRow` and `purgedFromRow`, then the insert's `jsonbRecord` and `jsonTextRecord`. */
export function postgresMapperFiles(): GeneratedFile[] {
  return [
    generatedModule(
      'backends/postgres/generated/task-from-row.ts',
      [
        "import type { RetryTask } from '../../../domain/task.js';",
        "import { targetUrlOfStored } from '../../../domain/target-key.js';",
        "import type { PurgedTask } from '../../../store/store.js';",
        "import type { TaskRow } from '../task-row.js';",
      ],
      [
        `/** A stored row as the domain's task: see task-row.ts. */
export function taskFromRow(r: TaskRow): RetryTask {
  return ${taskLiteral(rowValue)};
}`,
        `/** A row of purge-expired.sql as the task it deleted: see task-row.ts. */
export function purgedFromRow(r: TaskRow): PurgedTask {
  return ${taskLiteral(rowValue, (field) => Object.hasOwn(PURGED_FIELDS, field.name))};
}`,
      ],
    ),
    generatedModule(
      'backends/postgres/generated/insert-records.ts',
      [
        "import type { RetryTask } from '../../../domain/task.js';",
        "import { storedTargetUrl } from '../../../domain/target-key.js';",
        "import { checkedTaskId } from '../../../domain/task-id.js';",
        "import { checkedHex } from '../../sql/digest-bytes.js';",
        "import type { BatchRepeats } from '../insert-records.js';",
        "import { text } from '../task-row.js';",
      ],
      [recordFunction('jsonbRecord', JSONB_FIELDS, '`$1` (jsonb)'), recordFunction('jsonTextRecord', JSON_TEXT_FIELDS, '`$2` (json)')],
    ),
  ];
}
