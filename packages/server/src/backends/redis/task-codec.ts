import type { RetryPolicy, TaskStatus } from '@retryd/core';
import type { TaskCallback } from '../../domain/task-callback.js';
import type { AttemptLog, RetryTask, StoredPolicy } from '../../domain/task.js';
import { TASK_FIELDS, TASK_FIELD_SPECS } from '../../domain/task-fields.js';
import type { FieldCodec, FieldSpec, TaskFieldName } from '../../domain/task-fields.js';
import { compileTaskMapper, taskLiteral } from '../../domain/compile-task-mapper.js';
import type { AttemptCompletion, CompletionResult, TaskOutcome } from '../../store/store.js';
import { createdAtOfSortKey, sortTimeOf, taskIdOfSortKey } from './keys.js';
import { storedTargetUrl, targetUrlOfStored } from '../../domain/target-key.js';

// How a task is kept in Redis, derived from the one definition of its fields (domain/task-fields.ts): the fields
// whose `redis` placement names a hash field make up the task's record, its field in the partition's `tasks` hash
// (layout 6: a MessagePack array of their values in STATE_FIELDS order, without names; scripts read and write it
// whole and name the fields by position), the others one JSON text, its field in the partition's `data` hash, that
// no script parses. The store adds one field of its own to the record, `sortKey`: the listing key (keys.ts
// sortKeyOf), stored as its 16 time digits only (the id names the record), which scripts complete with the id when
// they read a state. As scripts return it, it holds the task's id and
// `createdAt`, so the data JSON leaves those two out, and the tenant (its partition's), since layout 5 (see
// DATA_ARRAY_FIELDS).
//
// Times stay exact: JavaScript writes every number with `String(n)` (the shortest text that reads back as the same
// double) and reads it with `Number`; scripts only compare numbers (`tonumber`, exact) and never format one —
// Lua's `tostring` keeps 14 digits and would round `1700000000000.375`. Scores go to ZADD as the same strings.

/** The store's own record field after the definition's: the task's listing key. */
export const SORT_KEY_FIELD = 'sortKey';

const HASH_SPECS = TASK_FIELD_SPECS.filter((spec) => spec.redis !== 'data');

/**
 * How many of the definition's record fields the records of layout 6 hold before `sortKey`. Records are read by
 * position, so a record field added to the definition since (`expiresAt`, as `expires`) goes after `sortKey`: a record
 * written before it ends early and reads it as absent, and no record needs rewriting.
 */
const FIELDS_BEFORE_SORT_KEY = 17;

/** The record's values in order: each a record field's definition, or null where `sortKey` is. */
const RECORD_SPECS: readonly ((typeof HASH_SPECS)[number] | null)[] = Object.freeze([
  ...HASH_SPECS.slice(0, FIELDS_BEFORE_SORT_KEY),
  null,
  ...HASH_SPECS.slice(FIELDS_BEFORE_SORT_KEY),
]);

/** The name of a task field that lives in the record (as scripts name it). Throws for a field kept in the JSON part. */
export function hashFieldOf(name: TaskFieldName): string {
  const placement = TASK_FIELDS[name].redis;
  if (placement === 'data') throw new Error(`Task field ${name} is kept in the data JSON, not in the record.`);
  return placement.hash;
}

/**
 * The record's fields in the order it holds their values and scripts take and return them: the definition's record
 * fields in row order, with {@link SORT_KEY_FIELD} after those layout 6 wrote (see {@link FIELDS_BEFORE_SORT_KEY}).
 * TASK_FIELDS of `lua/includes/task-state.lua` must be the same list. Records are read by position: a field added
 * later goes after `sortKey` (test/redis-lua-fields.test.ts pins the order layout 6 wrote).
 */
export const STATE_FIELDS: readonly string[] = Object.freeze(RECORD_SPECS.map((spec) => (spec === null ? SORT_KEY_FIELD : hashFieldOf(spec.name))));

/** The task fields kept in the data JSON, in row order (the property order of layout 4's JSON object). */
export const DATA_FIELDS: readonly TaskFieldName[] = Object.freeze(
  TASK_FIELD_SPECS.filter((spec) => spec.redis === 'data').map((spec) => spec.name),
);

/**
 * Data fields the task's keys already hold, so that the data JSON of layout 5 leaves them out: the tenant is its
 * partition's (keys.ts `partitionOf`), the id and `createdAt` are the listing key's (`sortKey`, in the record).
 */
const KEPT_BY_KEYS: ReadonlySet<TaskFieldName> = new Set<TaskFieldName>(['tenantId', 'taskId', 'createdAt']);

/**
 * The data JSON's elements since layout 5: a JSON array of these fields' values, in row order (what the caller sent
 * first, then the optional fields, which all come last), its trailing empty values (null, false) left out. An array
 * rather than an object: no property names stored with each task (about 90 bytes), and with the three fields the
 * keys hold gone too, the usual small task's JSON fits Redis's 256-byte allocation instead of a 448-byte one
 * (`store-space.mjs --store redis`). Layout 4's objects read the same (see {@link decodeTask}).
 */
export const DATA_ARRAY_FIELDS: readonly TaskFieldName[] = Object.freeze(DATA_FIELDS.filter((name) => !KEPT_BY_KEYS.has(name)));
const SORT_KEY_INDEX = STATE_FIELDS.indexOf(SORT_KEY_FIELD);
const HEADERS_AT = DATA_ARRAY_FIELDS.indexOf('headers');
const BODY_AT = DATA_ARRAY_FIELDS.indexOf('body');

/** The properties of an outcome in the order `complete-attempts.lua` receives them. */
const OUTCOME_PROPERTIES = [
  'status',
  'attemptNumber',
  'nextAttemptAt',
  'runStartedAt',
  'lastDelayMs',
  'lastError',
  'lastResponseStatus',
  'deadLetterReason',
  'expiresAt',
] as const satisfies readonly (keyof TaskOutcome & TaskFieldName)[];
// Fails to compile when TaskOutcome gains a property the list above does not send.
const OUTCOME_COMPLETE: Exclude<keyof TaskOutcome, (typeof OUTCOME_PROPERTIES)[number]> extends never ? true : never = true;
void OUTCOME_COMPLETE;

/** Outcome hash fields in the order `complete-attempts.lua` receives them (its OUTCOME_FIELDS must match). */
export const OUTCOME_FIELDS: readonly string[] = Object.freeze(OUTCOME_PROPERTIES.map(hashFieldOf));

type Scalar = string | number | boolean | null;

/**
 * One value as a script argument: `''` is null (the field is deleted: an absent field reads back as null) and
 * anything else is `=` followed by the value, so an empty string stays distinct from null.
 */
export function encodeValue(value: Scalar): string {
  if (value === null) return '';
  if (typeof value === 'boolean') return value ? '=1' : '=0';
  return `=${String(value)}`;
}

/** `text` with each lone surrogate replaced by U+FFFD (ES2024's `String.prototype.toWellFormed`, in Node 20). */
function wellFormed(text: string): string {
  return (text as string & { toWellFormed(): string }).toWellFormed();
}

/** How a hash value is written and read back: by codec, as a small integer so the loops below stay monomorphic. */
const NUMBER = 0;
const TEXT = 1;
const BOOLEAN = 2;
const JSON_VALUE = 3;

function kindOf(codec: FieldCodec): number {
  switch (codec) {
    case 'integer':
    case 'bigint':
    case 'real':
      return NUMBER;
    case 'boolean':
      return BOOLEAN;
    case 'json':
      return JSON_VALUE;
    case 'text':
    case 'status':
    case 'target-url':
    case 'json-string':
    case 'hex':
    case 'uuid':
      return TEXT;
  }
}

/**
 * JavaScript writing a hash field's value (`value`, an expression) as an element of a JSON array for `cjson.decode`:
 * `false` for null (an absent field), else a JSON string holding the text Redis stores, numbers as `String(n)` writes
 * them (a JSON number would come back from cjson as a Lua double, which scripts must never format: see above).
 * `toWellFormed` first, so that a lone surrogate becomes U+FFFD, as writing the text as UTF-8 makes it (cjson refuses
 * the `\ud800` escape JSON.stringify would write); it returns a string without surrogates as it is.
 */
function hashJsonSource(spec: FieldSpec, value: string): string {
  const kind = kindOf(spec.codec);
  const set =
    kind === JSON_VALUE
      ? `JSON.stringify(JSON.stringify(${value}))`
      : kind === BOOLEAN
        ? `(${value} ? '"1"' : '"0"')`
        : kind === NUMBER
          ? `'"' + String(${value}) + '"'`
          : `JSON.stringify(${value}.toWellFormed())`;
  // `== null`: a value left undefined (a caller in JavaScript, or built before the field existed) is null too, never
  // the text "undefined" (which a score would refuse, after the script's first writes).
  return `(${value} == null ? 'false' : ${set})`;
}

/**
 * A task's state as `insert-tasks.lua` takes it: one JSON array (text), the values of {@link STATE_FIELDS} in
 * order (`sortKey` as stored: the listing key's 16 time digits), then the task id and the idempotency key. One
 * argument a task (with {@link encodeTaskData}) instead of one per field: each argument costs ioredis a length and
 * a concatenation and Redis a Lua string, and a batch's states travel joined in one argument that the script
 * decodes with one `cjson.decode`. Compiled once from the field definitions (as the SQL stores' mappers are) into
 * one string expression.
 */
export const encodeTaskState: (task: RetryTask) => string = compileTaskMapper<(task: RetryTask) => string>(
  'encodeTaskState(t)',
  `return '[' +
${RECORD_SPECS.map((spec) => `    ${spec === null ? `'"' + sortTimeOf(t.createdAt) + '"'` : hashJsonSource(spec, `t.${spec.name}`)} + ',' +`).join('\n')}
    JSON.stringify(t.taskId.toWellFormed()) + ',' +
    JSON.stringify(t.idempotencyKey.toWellFormed()) + ']';`,
  { sortTimeOf },
);

/**
 * A task's fixed part as Redis keeps it (its field in the `data` hash): the values of {@link DATA_ARRAY_FIELDS} as a JSON array, the
 * trailing ones that hold nothing (a nullable field that is null, a boolean that is false) left out; one in the
 * middle that holds nothing is written `null` (only `body` can be, in practice). Compiled once from the field
 * definitions.
 */
export const encodeTaskData: (task: RetryTask) => string = compileTaskMapper<(task: RetryTask) => string>(
  'encodeTaskData(t)',
  `const a = [${DATA_ARRAY_FIELDS.map((name) => dataValueSource(TASK_FIELDS[name], `t.${name}`)).join(', ')}];
  let n = a.length;
  while (n > ${firstOptional()} && a[n - 1] === null) n--;
  if (n < a.length) a.length = n;
  return JSON.stringify(a);`,
  { wellFormed, storedTargetUrl },
);

/**
 * JavaScript writing a data JSON element (`value`, an expression): `null` when it holds nothing. The body well-formed
 * (a lone surrogate as U+FFFD): the script's cjson would store the `\ud800` escape as WTF-8, read back as three.
 */
function dataValueSource(spec: FieldSpec, value: string): string {
  if (spec.codec === 'json-string') return `(${value} === null ? null : wellFormed(${value}))`;
  // Kept after its target key, which the record holds (see domain/target-key.ts).
  if (spec.codec === 'target-url') return `storedTargetUrl(${value}, t.targetKey, ${JSON.stringify(spec.column)})`;
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

/**
 * An outcome as `complete-attempts.lua` takes it: the values of {@link OUTCOME_FIELDS} in order, as elements of a
 * JSON array (see {@link encodeTaskState}: strings, `false` for null). Compiled once from the outcome's fields.
 */
const encodeOutcome: (outcome: TaskOutcome) => string = compileTaskMapper<(outcome: TaskOutcome) => string>(
  'encodeOutcome(o)',
  `return ${OUTCOME_PROPERTIES.map((name) => hashJsonSource(TASK_FIELDS[name], `o.${name}`)).join(" + ',' +\n    ")};`,
);

/**
 * An attempt to log as two elements of a completion's array: its number and where its log entry is among the
 * script's arguments (the entry itself is pushed onto `args`: as an argument of its own it is sent as it is, where
 * inside the JSON it would be escaped a second time), or `false,false`.
 */
function attemptElements(log: AttemptLog | undefined, args: string[]): string {
  if (log === undefined) return 'false,false';
  args.push(encodeAttempt(log));
  return `"${log.attemptNumber}",${args.length}`;
}

/**
 * One completion as `complete-attempts.lua` takes it (see its contract for the layout): one JSON array, so that a
 * batch of completions travels as one argument, decoded by one `cjson.decode`, instead of 24 arguments each. Its
 * attempt log entries are pushed onto `args`, the script's arguments so far.
 */
export function encodeCompletion(c: AttemptCompletion, args: string[]): string {
  const cancel = c.ifCancelRequested;
  const requireBy = c.requireLeaseExpiredBy === undefined ? 'false' : `"${c.requireLeaseExpiredBy}"`;
  return (
    `[${JSON.stringify(wellFormed(c.taskId))},"${c.fencingToken}",${requireBy},${cancel === undefined ? 'false' : 'true'},` +
    `${attemptElements(c.attempt, args)},${attemptElements(c.attemptIfCancelRequested, args)},${encodeOutcome(c.next)}` +
    `${cancel === undefined ? '' : `,${encodeOutcome(cancel)}`}]`
  );
}

/** What `complete-attempts.lua` returns for an applied completion: status, due, version, cancel flag. */
export type CompletionReply = [status: string, due: string | null, version: string, cancel: string];

/** The summary of an applied completion (the port's `CompletionResult`). */
export function decodeCompletion(taskId: string, reply: CompletionReply): CompletionResult {
  const [status, due, version, cancel] = reply;
  return {
    kind: 'applied',
    taskId,
    status: status as TaskStatus,
    nextAttemptAt: due === null ? null : Number(due),
    version: Number(version),
    cancelRequested: cancel === '1',
  };
}

/**
 * What scripts return for a task: a JSON array of the values of {@link STATE_FIELDS} (strings, `false` where absent,
 * `sortKey` the whole listing key; `task_reply` and `read_state` in lua/includes/task-state.lua), and the data JSON.
 */
export type TaskReply = [state: string, data: string];

/** JavaScript reading a hash value (`text`, an expression: a string, or false when the field is absent). */
function hashValueSource(codec: FieldCodec, nullable: boolean, text: string, name: string): string {
  const kind = kindOf(codec);
  const value = kind === NUMBER ? `Number(${text})` : kind === BOOLEAN ? `${text} === '1'` : kind === JSON_VALUE ? `JSON.parse(${text})` : text;
  // A non-nullable field that is absent means keys of another layout: fail loudly rather than invent a value.
  return nullable ? `${text} === false ? null : ${value}` : `${text} === false ? missing(${JSON.stringify(name)}) : ${value}`;
}

/** JavaScript reading a data field (`value`, an expression: its JSON value, `undefined` when left out). */
function dataReadSource(spec: FieldSpec, value: string): string {
  // A boolean added to the JSON part later (sensitiveBody) is absent from tasks stored before it: false.
  return `${value}${spec.nullable ? ' ?? null' : spec.codec === 'boolean' ? ' === true' : ''}`;
}

/** JavaScript reading a hash field of the state array `s`. */
function stateReadSource(spec: FieldSpec & { name: TaskFieldName }): string {
  const placement = spec.redis;
  if (placement === 'data') throw new Error(`Task field ${spec.name} is kept in the data JSON, not in the record.`);
  return hashValueSource(spec.codec, spec.nullable, `s[${STATE_FIELDS.indexOf(placement.hash)}]`, spec.name);
}

/**
 * Rebuilds a task from a script's reply and the tenant whose partition it came from: the hash's fields through their
 * codecs; the data JSON's as they are, from its array (layout 5: the id and `createdAt` from the listing key, the
 * tenant from the caller) or from its object (layout 4, which spells every field out). Compiled once from the field
 * definitions into two object literals in row order (see compile-task-mapper.ts), so both give tasks of one shape.
 */
export const decodeTask: (reply: TaskReply, tenantId: string) => RetryTask = compileTaskMapper(
  'decodeTask(reply, tenantId)',
  `const s = JSON.parse(reply[0]);
  const d = JSON.parse(reply[1]);
  if (!Array.isArray(d)) {
    return ${taskLiteral((field) => (field.redis === 'data' ? dataReadSource(field, `d.${field.name}`) : stateReadSource(field)))};
  }
  const sortKey = s[${SORT_KEY_INDEX}];
  return ${taskLiteral((field) => {
    if (field.name === 'tenantId') return 'tenantId';
    if (field.name === 'taskId') return 'taskIdOfSortKey(sortKey)';
    if (field.name === 'createdAt') return 'createdAtOfSortKey(sortKey)';
    if (field.codec === 'target-url') {
      return `targetUrlOfStored(${dataReadSource(field, `d[${DATA_ARRAY_FIELDS.indexOf(field.name)}]`)}, ${stateReadSource({ ...TASK_FIELDS.targetKey, name: 'targetKey' })})`;
    }
    return field.redis === 'data' ? dataReadSource(field, `d[${DATA_ARRAY_FIELDS.indexOf(field.name)}]`) : stateReadSource(field);
  })};`,
  {
    taskIdOfSortKey,
    createdAtOfSortKey,
    targetUrlOfStored,
    missing: (name: string): never => {
      throw new Error(`A stored task has no ${name}: its keys are not in this version's layout.`);
    },
  },
);

/** The sealed parts (headers and body) of a data JSON, in either layout's form. */
export function sealedPartsOfData(json: string): { headers: unknown; body: string | null } {
  const d = JSON.parse(json) as unknown;
  if (Array.isArray(d)) return { headers: d[HEADERS_AT], body: (d[BODY_AT] as string | null | undefined) ?? null };
  const o = d as Record<string, unknown>;
  return { headers: o['headers'], body: (o['body'] as string | null | undefined) ?? null };
}

/**
 * A data JSON with its headers and body replaced, every other field as it was, in the form it was written in (an
 * array stays an array: its elements keep their places; an object keeps its property order).
 */
export function dataWithSealedParts(json: string, headers: unknown, body: string | null): string {
  const d = JSON.parse(json) as unknown;
  if (!Array.isArray(d)) return JSON.stringify({ ...(d as Record<string, unknown>), headers, body });
  const next = [...d];
  next[HEADERS_AT] = headers;
  next[BODY_AT] = body;
  return JSON.stringify(next);
}

/**
 * The fields of an attempt log entry as stored since layout 7, in the order of its JSON array: those that always hold
 * something first, then the nullable ones, whose trailing nulls are left out. The tenant and the task id are left out
 * too: the entry's key names them. An array rather than an object: about 200 bytes less an entry (its field names,
 * the tenant and the id) in Redis's memory and, twice a completion, on the wire (the entry and the one to log instead
 * if a cancel was requested).
 */
const ATTEMPT_ARRAY_FIELDS = [
  'attemptNumber',
  'startedAt',
  'durationMs',
  'outcome',
  'workerId',
  'responseStatus',
  'nextAttemptAt',
  'errorMessage',
  'responseBodySnippet',
  // Last: almost always null (a retry the budget did not delay), so they cost an entry nothing. An entry stored before
  // them is shorter, and reads them as null.
  'delayedBy',
  'backoffAt',
] as const satisfies readonly Exclude<keyof AttemptLog, 'tenantId' | 'taskId'>[];
// Fails to compile when AttemptLog gains a field the list above does not store.
const ATTEMPT_COMPLETE: Exclude<keyof AttemptLog, (typeof ATTEMPT_ARRAY_FIELDS)[number] | 'tenantId' | 'taskId'> extends never ? true : never = true;
void ATTEMPT_COMPLETE;
/** How many of {@link ATTEMPT_ARRAY_FIELDS} always hold something: an entry is never cut shorter. */
const ATTEMPT_REQUIRED = ATTEMPT_ARRAY_FIELDS.indexOf('responseStatus');

/**
 * An attempt log entry as stored (a sorted-set member: unique, since it holds the attempt number): the values of
 * {@link ATTEMPT_ARRAY_FIELDS} as a JSON array, its trailing nulls left out. Numbers as JSON writes them (the
 * shortest text that reads back as the same double).
 */
export function encodeAttempt(a: AttemptLog): string {
  const values: unknown[] = ATTEMPT_ARRAY_FIELDS.map((name) => a[name]);
  let n = values.length;
  while (n > ATTEMPT_REQUIRED && values[n - 1] === null) n--;
  values.length = n;
  return JSON.stringify(values);
}

/**
 * An attempt log entry of the task `taskId` of `tenantId` back from its member: the array of layout 7, or the object
 * of the layouts before it, which spells out every field it had then (entries are never rewritten); a field an entry
 * was stored without (a retry's delay) reads as null.
 */
export function decodeAttempt(member: string, tenantId: string, taskId: string): AttemptLog {
  const stored = JSON.parse(member) as unknown;
  if (!Array.isArray(stored)) return { delayedBy: null, backoffAt: null, ...(stored as Partial<AttemptLog>) } as AttemptLog;
  const entry: Record<string, unknown> = { tenantId, taskId };
  ATTEMPT_ARRAY_FIELDS.forEach((name, i) => {
    entry[name] = (stored[i] as unknown) ?? null;
  });
  return entry as unknown as AttemptLog;
}

/** A policy's hash as HGETALL returns it (`policy`, `created`, `updated`, `version`), back to a stored policy. */
export function decodePolicy(tenantId: string, policyId: string, flat: readonly string[]): StoredPolicy {
  const fields = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) fields.set(flat[i] as string, flat[i + 1] as string);
  return {
    tenantId,
    policyId,
    policy: JSON.parse(fields.get('policy') ?? 'null') as RetryPolicy,
    callback: fields.has('callback') ? (JSON.parse(fields.get('callback') as string) as TaskCallback) : null,
    createdAt: Number(fields.get('created')),
    updatedAt: Number(fields.get('updated')),
    version: Number(fields.get('version')),
  };
}
