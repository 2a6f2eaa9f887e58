import type { RetryPolicy, TaskStatus } from '@retryd/core';
import type { TaskCallback } from '../../domain/task-callback.js';
import type { AttemptLog, RetryTask, StoredPolicy } from '../../domain/task.js';
import { TASK_FIELDS, TASK_FIELD_SPECS } from '../../domain/task-fields.js';
import type { TaskFieldName } from '../../domain/task-fields.js';
import { wellFormed } from '../../domain/well-formed.js';
import { decodeTask as generatedDecodeTask, encodeOutcome, encodeTaskData as generatedEncodeTaskData, encodeTaskState as generatedEncodeTaskState } from './generated/task-codec.js';
import type { AttemptCompletion, CompletionResult, TaskOutcome } from '../../store/store.js';

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
export const RECORD_SPECS: readonly ((typeof HASH_SPECS)[number] | null)[] = Object.freeze([
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
const HEADERS_AT = DATA_ARRAY_FIELDS.indexOf('headers');
const BODY_AT = DATA_ARRAY_FIELDS.indexOf('body');

/** The properties of an outcome in the order `complete-attempts.lua` receives them. */
export const OUTCOME_PROPERTIES = [
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

/**
 * A task's state as `insert-tasks.lua` takes it: one JSON array (text), the values of {@link STATE_FIELDS} in
 * order (`sortKey` as stored: the listing key's 16 time digits), then the task id and the idempotency key. One
 * argument a task (with {@link encodeTaskData}) instead of one per field: each argument costs ioredis a length and
 * a concatenation and Redis a Lua string, and a batch's states travel joined in one argument that the script
 * decodes with one `cjson.decode`. Generated from the field definitions (as the SQL stores' mappers are) into one
 * string expression: generated/task-codec.ts, written by row-mapper-source.ts.
 */
export const encodeTaskState: (task: RetryTask) => string = generatedEncodeTaskState;

/**
 * A task's fixed part as Redis keeps it (its field in the `data` hash): the values of {@link DATA_ARRAY_FIELDS} as a JSON array, the
 * trailing ones that hold nothing (a nullable field that is null, a boolean that is false) left out; one in the
 * middle that holds nothing is written `null` (only `body` can be, in practice). Generated from the field
 * definitions.
 */
export const encodeTaskData: (task: RetryTask) => string = generatedEncodeTaskData;

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

/**
 * Rebuilds a task from a script's reply and the tenant whose partition it came from: the hash's fields through their
 * codecs; the data JSON's as they are, from its array (layout 5: the id and `createdAt` from the listing key, the
 * tenant from the caller) or from its object (layout 4, which spells every field out). Generated from the field
 * definitions as two object literals in row order (see row-mapper-source.ts), so both give tasks of one shape.
 */
export const decodeTask: (reply: TaskReply, tenantId: string) => RetryTask = generatedDecodeTask;

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
