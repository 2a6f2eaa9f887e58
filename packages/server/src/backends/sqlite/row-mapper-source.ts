import { TASK_FIELD_NAMES, TASK_FIELD_SPECS, type FieldSpec, type TaskFieldName } from '../../domain/task-fields.js';
import { generatedModule, quoted, taskLiteral, type GeneratedFile } from '../../codegen/task-literal.js';
import { TARGET_KEY_COLUMN } from '../sql/task-columns.js';

// The source of SQLite's row mappers (generated/task-mappers.ts): how each codec is read from and written to SQLite.

const position = (name: TaskFieldName): number => TASK_FIELD_NAMES.indexOf(name);

/** The type of a field's value as better-sqlite3 returns it (BLOBs are read as hex text: see TASK_READ_COLUMNS). */
function rawType(spec: FieldSpec): string {
  const type = spec.codec === 'integer' || spec.codec === 'bigint' || spec.codec === 'real' || spec.codec === 'boolean' || spec.codec === 'status' ? 'number' : 'string';
  return spec.nullable ? `${type} | null` : type;
}

/** TypeScript reading a field's SQLite value (at `r[index]`) as the domain's value. */
function decodeSource(spec: FieldSpec & { readonly name: TaskFieldName }, index: number): string {
  const value = `r[${index}]`;
  const nonNull = `${value} as ${spec.codec === 'status' ? 'number' : 'string'}`;
  switch (spec.codec) {
    case 'boolean':
      return `${value} === 1`;
    case 'status': // Its number (see status-guards.ts).
      return `statusOfCode(${nonNull})`;
    case 'json': {
      const parsed = `json.parse(${nonNull}) as RetryTask['${spec.name}']`;
      return spec.nullable ? `${value} === null ? null : (${parsed})` : parsed;
    }
    case 'uuid': // Read as hex text (see TASK_READ_COLUMNS).
      return spec.nullable ? `${value} === null ? null : hyphenatedUuid(${nonNull})` : `hyphenatedUuid(${nonNull})`;
    case 'target-url': // Kept after its target key (see domain/target-key.ts).
      return `targetUrlOfStored(${nonNull}, r[${position('targetKey')}] as string)`;
    case 'hex': // Read as hex text already (see TASK_READ_COLUMNS).
    case 'text':
    case 'json-string': // SQLite TEXT holds U+0000, so a body is kept as it is (its UTF-8).
    case 'integer':
    case 'bigint':
    case 'real':
      return `${value} as ${rawType(spec)}`;
  }
}

/** TypeScript writing a field's domain value (`t.<name>`) as its SQLite value. */
function encodeSource(spec: FieldSpec & { readonly name: TaskFieldName }): string {
  const value = `t.${spec.name}`;
  const orNull = (source: string) => (spec.nullable ? `${value} === null ? null : ${source}` : source);
  switch (spec.codec) {
    case 'boolean':
      return `${value} ? 1 : 0`;
    case 'status':
      return `statusCode(${value})`;
    case 'json':
      return orNull(`JSON.stringify(${value})`);
    case 'hex':
      return orNull(`hexBytes(${value}, ${quoted(spec.column)})`);
    case 'uuid':
      return orNull(`uuidBytes(${value}, ${quoted(spec.column)})`);
    case 'target-url':
      return `storedTargetUrl(${value}, t.targetKey, ${quoted(spec.column)})`;
    case 'json-string': // A lone surrogate as U+FFFD: better-sqlite3 would write its WTF-8 bytes, read back as three.
      return orNull(`wellFormed(${value})`);
    case 'text':
    case 'integer':
    case 'bigint':
    case 'real':
      return value;
  }
}

/** SQLite's row mappers: `taskFromRow` and `taskToParams`. */
export function sqliteMapperFile(): GeneratedFile {
  return generatedModule(
    'backends/sqlite/generated/task-mappers.ts',
    [
      "import { isLive } from '@retryd/core';",
      "import type { RetryTask } from '../../../domain/task.js';",
      "import { storedTargetUrl, targetUrlOfStored } from '../../../domain/target-key.js';",
      "import { wellFormed } from '../../../domain/well-formed.js';",
      "import { hexBytes } from '../../sql/digest-bytes.js';",
      "import { hyphenatedUuid, uuidBytes } from '../../sql/task-id-params.js';",
      "import type { JsonCache } from '../../../store/json-cache.js';",
      "import { statusCode, statusOfCode } from '../status-guards.js';",
      "import type { SqlValue } from '../task-row.js';",
    ],
    [
      `/** A stored row (possibly followed by more columns) as the domain's task: see task-row.ts. */
export function taskFromRow(r: readonly SqlValue[], json: JsonCache): RetryTask {
  return ${taskLiteral((field) => decodeSource(field, field.index))};
}`,
      `/** A task as parameters of the task INSERT, its queue's number in place of its target key, then \`ended_at\`: see task-row.ts. */
export function taskToParams(t: RetryTask, queueId: number): SqlValue[] {
  return [
${TASK_FIELD_SPECS.map((spec) => `    ${spec.column === TARGET_KEY_COLUMN ? 'queueId' : encodeSource(spec)},`).join('\n')}
    isLive(t.status) ? null : t.updatedAt,
  ];
}`,
    ],
  );
}
