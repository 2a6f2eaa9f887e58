import type { RetryPolicy, TaskStatus } from '@retryd/core';
import type { AttemptLog, RetryTask, StoredPolicy } from '../../domain/task.js';
import type { AttemptCompletion, CompletionResult, TaskOutcome, TaskPatch } from '../../store/store.js';
import { sortKeyOf } from './keys.js';

// How a task is kept in Redis: its changing state in a hash (`task:<id>`, small values, so Redis keeps it in the
// compact listpack encoding) and its fixed part as one JSON string (`data:<id>`). Scripts read and write the hash
// by the field names below; they never parse the JSON.
//
// Times stay exact: JavaScript writes every number with `String(n)` (the shortest text that reads back as the same
// double) and reads it with `Number`; scripts only compare numbers (`tonumber`, exact) and never format one —
// Lua's `tostring` keeps 14 digits and would round `1700000000000.375`. Scores go to ZADD as the same strings.

/** State hash fields in the order scripts take and return them (TASK_FIELDS of `lua/includes/task-state.lua`). */
export const STATE_FIELDS = [
  'status',
  'attempt',
  'runOffset',
  'runStart',
  'lastDelay',
  'due',
  'updated',
  'owner',
  'leaseUntil',
  'token',
  'version',
  'cancel',
  'error',
  'httpStatus',
  'deadReason',
  'policyId',
  'sortKey',
] as const;

/** Outcome fields in the order `complete-attempts.lua` receives them (its OUTCOME_FIELDS must match). */
export const OUTCOME_FIELDS = ['status', 'attempt', 'due', 'runStart', 'lastDelay', 'error', 'httpStatus', 'deadReason'] as const;

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

/** The fixed part of a task, stored as JSON. */
interface TaskData {
  tenantId: string;
  taskId: string;
  idempotencyKey: string;
  requestHash: string;
  targetUrl: string;
  method: string;
  headers: Record<string, string>;
  body: string | null;
  bodyRef: string | null;
  policy: RetryPolicy | null;
  createdAt: number;
  traceContext: string | null;
}

/** A task as `insert-tasks.lua` takes it: id, idempotency key, data JSON, then each of {@link STATE_FIELDS}. */
export function encodeTask(task: RetryTask): string[] {
  const data: TaskData = {
    tenantId: task.tenantId,
    taskId: task.taskId,
    idempotencyKey: task.idempotencyKey,
    requestHash: task.requestHash,
    targetUrl: task.targetUrl,
    method: task.method,
    headers: task.headers,
    body: task.body,
    bodyRef: task.bodyRef,
    policy: task.policy,
    createdAt: task.createdAt,
    traceContext: task.traceContext,
  };
  const state: Record<(typeof STATE_FIELDS)[number], Scalar> = {
    status: task.status,
    attempt: task.attemptNumber,
    runOffset: task.runAttemptOffset,
    runStart: task.runStartedAt,
    lastDelay: task.lastDelayMs,
    due: task.nextAttemptAt,
    updated: task.updatedAt,
    owner: task.leaseOwner,
    leaseUntil: task.leaseExpiresAt,
    token: task.fencingToken,
    version: task.version,
    cancel: task.cancelRequested,
    error: task.lastError,
    httpStatus: task.lastResponseStatus,
    deadReason: task.deadLetterReason,
    policyId: task.policyId,
    sortKey: sortKeyOf(task.createdAt, task.taskId),
  };
  return [task.taskId, task.idempotencyKey, JSON.stringify(data), ...STATE_FIELDS.map((f) => encodeValue(state[f]))];
}

/** An outcome as the eight values `complete-attempts.lua` takes, in {@link OUTCOME_FIELDS} order. */
export function encodeOutcome(outcome: TaskOutcome): string[] {
  const values: Record<(typeof OUTCOME_FIELDS)[number], Scalar> = {
    status: outcome.status,
    attempt: outcome.attemptNumber,
    due: outcome.nextAttemptAt,
    runStart: outcome.runStartedAt,
    lastDelay: outcome.lastDelayMs,
    error: outcome.lastError,
    httpStatus: outcome.lastResponseStatus,
    deadReason: outcome.deadLetterReason,
  };
  return OUTCOME_FIELDS.map((f) => encodeValue(values[f]));
}

/** The arguments of one completion for `complete-attempts.lua` (see its contract for the layout). */
export function encodeCompletion(c: AttemptCompletion): string[] {
  const cancelOutcome = c.ifCancelRequested ?? c.next;
  const attempt = (log: AttemptLog | undefined) => (log === undefined ? ['', ''] : [String(log.attemptNumber), encodeAttempt(log)]);
  return [
    c.taskId,
    String(c.fencingToken),
    c.requireLeaseExpiredBy === undefined ? '' : String(c.requireLeaseExpiredBy),
    c.ifCancelRequested === undefined ? '0' : '1',
    ...attempt(c.attempt),
    ...attempt(c.attemptIfCancelRequested),
    ...encodeOutcome(c.next),
    ...encodeOutcome(cancelOutcome),
  ];
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

const PATCH_FIELDS: { readonly [K in keyof Required<TaskPatch>]: (typeof STATE_FIELDS)[number] } = {
  status: 'status',
  nextAttemptAt: 'due',
  cancelRequested: 'cancel',
  runAttemptOffset: 'runOffset',
  runStartedAt: 'runStart',
  lastDelayMs: 'lastDelay',
  deadLetterReason: 'deadReason',
  lastError: 'error',
  lastResponseStatus: 'httpStatus',
  updatedAt: 'updated',
};

/** A patch as `field, value` pairs for `update-task.lua`; fields absent from the patch are not sent. */
export function encodePatch(patch: TaskPatch): string[] {
  const pairs: string[] = [];
  for (const [property, field] of Object.entries(PATCH_FIELDS) as [keyof TaskPatch, string][]) {
    const value = patch[property];
    if (value !== undefined) pairs.push(field, encodeValue(value));
  }
  return pairs;
}

/** What scripts return for a task: the values of {@link STATE_FIELDS} (null where absent), and the data JSON. */
export type TaskReply = [state: (string | null)[], data: string];

const FIELD_INDEX = new Map<string, number>(STATE_FIELDS.map((field, i) => [field, i]));

/** Rebuilds a task from a script's reply. */
export function decodeTask(reply: TaskReply): RetryTask {
  const [values, json] = reply;
  const data = JSON.parse(json) as TaskData;
  const text = (field: (typeof STATE_FIELDS)[number]) => values[FIELD_INDEX.get(field) as number] ?? null;
  const num = (field: (typeof STATE_FIELDS)[number]) => {
    const value = text(field);
    return value === null ? null : Number(value);
  };
  return {
    tenantId: data.tenantId,
    taskId: data.taskId,
    idempotencyKey: data.idempotencyKey,
    requestHash: data.requestHash,
    targetUrl: data.targetUrl,
    method: data.method,
    headers: data.headers,
    body: data.body,
    bodyRef: data.bodyRef,
    policyId: text('policyId'),
    policy: data.policy,
    status: text('status') as TaskStatus,
    attemptNumber: num('attempt') ?? 0,
    runAttemptOffset: num('runOffset') ?? 0,
    runStartedAt: num('runStart'),
    lastDelayMs: num('lastDelay') ?? 0,
    nextAttemptAt: num('due'),
    createdAt: data.createdAt,
    updatedAt: num('updated') ?? data.createdAt,
    leaseOwner: text('owner'),
    leaseExpiresAt: num('leaseUntil'),
    fencingToken: num('token') ?? 0,
    version: num('version') ?? 0,
    cancelRequested: text('cancel') === '1',
    lastError: text('error'),
    lastResponseStatus: num('httpStatus'),
    deadLetterReason: text('deadReason'),
    traceContext: data.traceContext,
  };
}

/** An attempt log entry as stored (a sorted-set member: unique, since it holds the attempt number). */
export function encodeAttempt(attempt: AttemptLog): string {
  return JSON.stringify(attempt);
}

export function decodeAttempt(member: string): AttemptLog {
  return JSON.parse(member) as AttemptLog;
}

/** A policy's hash as HGETALL returns it (`policy`, `created`, `updated`, `version`), back to a stored policy. */
export function decodePolicy(tenantId: string, policyId: string, flat: readonly string[]): StoredPolicy {
  const fields = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) fields.set(flat[i] as string, flat[i + 1] as string);
  return {
    tenantId,
    policyId,
    policy: JSON.parse(fields.get('policy') ?? 'null') as RetryPolicy,
    createdAt: Number(fields.get('created')),
    updatedAt: Number(fields.get('updated')),
    version: Number(fields.get('version')),
  };
}
