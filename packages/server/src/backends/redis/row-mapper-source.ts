import { TASK_FIELDS, type FieldCodec, type FieldSpec, type TaskFieldName } from '../../domain/task-fields.js';
import { generatedModule, quoted, taskLiteral, type GeneratedFile } from '../../codegen/task-literal.js';
import { DATA_ARRAY_FIELDS, OUTCOME_PROPERTIES, RECORD_SPECS, SORT_KEY_FIELD, STATE_FIELDS } from './task-codec.js';

// The source of Redis's task codec (generated/task-codec.ts): how each codec is written to and read from a task's
// record (as the strings scripts keep) and its data JSON. See task-codec.ts for the layout.

type NamedSpec = FieldSpec & { readonly name: TaskFieldName };

/** How a record value is written and read back, by codec. */
type Kind = 'number' | 'text' | 'boolean' | 'json';

function kindOf(codec: FieldCodec): Kind {
  switch (codec) {
    case 'integer':
    case 'bigint':
    case 'real':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'json':
      return 'json';
    case 'text':
    case 'status':
    case 'target-url':
    case 'json-string':
    case 'hex':
    case 'uuid':
      return 'text';
  }
}

/**
 * TypeScript writing a record field's value (`value`, an expression) as an element of a JSON array for `cjson.decode`:
 * `false` for null (an absent field), else a JSON string holding the text Redis stores, numbers as `String(n)` writes
 * them (a JSON number would come back from cjson as a Lua double, which scripts must never format: see task-codec.ts).
 * Well-formed first, so that a lone surrogate becomes U+FFFD, as writing the text as UTF-8 makes it (cjson refuses
 * the `\ud800` escape JSON.stringify would write).
 */
function hashJsonSource(spec: FieldSpec, value: string): string {
  const kind = kindOf(spec.codec);
  const set =
    kind === 'json'
      ? `JSON.stringify(JSON.stringify(${value}))`
      : kind === 'boolean'
        ? `(${value} ? '"1"' : '"0"')`
        : kind === 'number'
          ? `'"' + String(${value}) + '"'`
          : `JSON.stringify(wellFormed(${value}))`;
  // `== null`: a value left undefined (a caller in JavaScript, or built before the field existed) is null too, never
  // the text "undefined" (which a score would refuse, after the script's first writes).
  return `(${value} == null ? 'false' : ${set})`;
}

/**
 * TypeScript writing a data JSON element (`t.<name>`): `null` when it holds nothing. The body well-formed (a lone
 * surrogate as U+FFFD): the script's cjson would store the `\ud800` escape as WTF-8, read back as three.
 */
function dataValueSource(spec: NamedSpec): string {
  const value = `t.${spec.name}`;
  if (spec.codec === 'json-string') return `(${value} === null ? null : wellFormed(${value}))`;
  // Kept after its target key, which the record holds (see domain/target-key.ts).
  if (spec.codec === 'target-url') return `storedTargetUrl(${value}, t.targetKey, ${quoted(spec.column)})`;
  if (spec.nullable) return value;
  return spec.codec === 'boolean' ? `(${value} || null)` : value;
}

/**
 * How many of {@link DATA_ARRAY_FIELDS} come before the first that may hold nothing: an array is never cut shorter.
 * Throws if a field that always holds something follows one that may not (it could not be cut off the end).
 */
function firstOptional(): number {
  const optional = (name: TaskFieldName) => TASK_FIELDS[name].nullable || TASK_FIELDS[name].codec === 'boolean';
  const first = DATA_ARRAY_FIELDS.findIndex(optional);
  if (first === -1) return DATA_ARRAY_FIELDS.length;
  const required = DATA_ARRAY_FIELDS.slice(first).filter((name) => !optional(name));
  if (required.length > 0) throw new Error(`Data fields ${required.join(', ')} must come before the optional ones.`);
  return first;
}

/** TypeScript reading a record field of the state array `s` (a string, or false when the field is absent). */
function stateReadSource(spec: NamedSpec): string {
  const placement = spec.redis;
  if (placement === 'data') throw new Error(`Task field ${spec.name} is kept in the data JSON, not in the record.`);
  const text = `s[${STATE_FIELDS.indexOf(placement.hash)}]`;
  const kind = kindOf(spec.codec);
  const value =
    kind === 'number'
      ? `Number(${text})`
      : kind === 'boolean'
        ? `${text} === '1'`
        : kind === 'json'
          ? `(JSON.parse(${text} as string) as RetryTask['${spec.name}'])`
          : `(${text} as RetryTask['${spec.name}'])`;
  // A non-nullable field that is absent means keys of another layout: fail loudly rather than invent a value.
  return spec.nullable ? `${text} === false ? null : ${value}` : `${text} === false ? missingField(${quoted(spec.name)}) : ${value}`;
}

/** TypeScript reading a data field (`value`, an expression: its JSON value, `undefined` when left out). */
function dataReadSource(spec: NamedSpec, value: string): string {
  // A boolean added to the JSON part later (sensitiveBody) is absent from tasks stored before it: false.
  if (spec.nullable) return `(${value} as RetryTask['${spec.name}'] | undefined) ?? null`;
  return spec.codec === 'boolean' ? `${value} === true` : `${value} as RetryTask['${spec.name}']`;
}

const TARGET_KEY: NamedSpec = { ...TASK_FIELDS.targetKey, name: 'targetKey' };

/** Redis's task codec: `encodeTaskState`, `encodeTaskData`, `encodeOutcome` and `decodeTask`. */
export function redisMapperFile(): GeneratedFile {
  const dataAt = (name: TaskFieldName) => `d[${DATA_ARRAY_FIELDS.indexOf(name)}]`;
  return generatedModule(
    'backends/redis/generated/task-codec.ts',
    [
      "import type { RetryTask } from '../../../domain/task.js';",
      "import { storedTargetUrl, targetUrlOfStored } from '../../../domain/target-key.js';",
      "import { wellFormed } from '../../../domain/well-formed.js';",
      "import type { TaskOutcome } from '../../../store/store.js';",
      "import { createdAtOfSortKey, sortTimeOf, taskIdOfSortKey } from '../keys.js';",
      "import { missingField } from '../missing-field.js';",
      "import type { TaskReply } from '../task-codec.js';",
    ],
    [
      `/** A task's state as \`insert-tasks.lua\` takes it: see task-codec.ts. */
export function encodeTaskState(t: RetryTask): string {
  return '[' +
${RECORD_SPECS.map((spec) => `    ${spec === null ? `'"' + sortTimeOf(t.createdAt) + '"'` : hashJsonSource(spec, `t.${spec.name}`)} + ',' +`).join('\n')}
    JSON.stringify(wellFormed(t.taskId)) + ',' +
    JSON.stringify(wellFormed(t.idempotencyKey)) + ']';
}`,
      `/** A task's fixed part as Redis keeps it, its trailing empty values left out: see task-codec.ts. */
export function encodeTaskData(t: RetryTask): string {
  const a = [
${DATA_ARRAY_FIELDS.map((name) => `    ${dataValueSource({ ...TASK_FIELDS[name], name })},`).join('\n')}
  ];
  let n = a.length;
  while (n > ${firstOptional()} && a[n - 1] === null) n--;
  if (n < a.length) a.length = n;
  return JSON.stringify(a);
}`,
      `/** An outcome as \`complete-attempts.lua\` takes it: see task-codec.ts. */
export function encodeOutcome(o: TaskOutcome): string {
  return (
    ${OUTCOME_PROPERTIES.map((name) => hashJsonSource(TASK_FIELDS[name], `o.${name}`)).join(" + ',' +\n    ")}
  );
}`,
      `/** A task from a script's reply and the tenant whose partition it came from: see task-codec.ts. */
export function decodeTask(reply: TaskReply, tenantId: string): RetryTask {
  const s = JSON.parse(reply[0]) as (string | false)[];
  const d = JSON.parse(reply[1]) as unknown[] | Record<string, unknown>;
  if (!Array.isArray(d)) {
    return ${taskLiteral((field) => (field.redis === 'data' ? dataReadSource(field, `d.${field.name}`) : stateReadSource(field)), undefined, '    ')};
  }
  const sortKey = s[${STATE_FIELDS.indexOf(SORT_KEY_FIELD)}] as string;
  return ${taskLiteral((field) => {
    if (field.name === 'tenantId') return 'tenantId';
    if (field.name === 'taskId') return 'taskIdOfSortKey(sortKey)';
    if (field.name === 'createdAt') return 'createdAtOfSortKey(sortKey)';
    if (field.codec === 'target-url') return `targetUrlOfStored(${dataAt(field.name)} as string, ${stateReadSource(TARGET_KEY)})`;
    return field.redis === 'data' ? dataReadSource(field, dataAt(field.name)) : stateReadSource(field);
  })};
}`,
    ],
  );
}
