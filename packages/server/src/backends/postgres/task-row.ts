import type { RetryPolicy, TaskStatus } from '@retryd/core';
import type { TaskCallback } from '../../domain/task-callback.js';
import type { RetryTask, StoredPolicy } from '../../domain/task.js';
import type { PurgedTask } from '../../store/store.js';
import { TASK_FIELD_SPECS } from '../../domain/task-fields.js';
import { purgedFromRow as generatedPurgedFromRow, taskFromRow as generatedTaskFromRow } from './generated/task-from-row.js';

/**
 * A `tasks` row as pg returns it, one property per column of `TASK_FIELDS`: json decoded, bytea as a Buffer, bigint as
 * a number (see `connection.ts`). Statements may return more columns (a claim's rank), which the mapping ignores.
 */
export type TaskRow = Readonly<Record<string, unknown>>;

/**
 * A stored row as the domain's task, in row order (the order of `TASK_FIELDS`). pg already decodes every codec but
 * the two kept as `bytea`, which come back as Buffers: `hex` (the request hash) is read as its lower-case hex,
 * `json-string` (the body) as its UTF-8 text; and the URL is joined to its target key again (`target-url`). The
 * mapping is otherwise a copy, column to property, generated from the field definitions (generated/task-from-row.ts,
 * written by row-mapper-source.ts).
 */
export const taskFromRow: (row: TaskRow) => RetryTask = generatedTaskFromRow;

/** The task fields a purge returns of each task it deletes: exactly those of {@link PurgedTask}. */
export const PURGED_FIELDS = { tenantId: true, taskId: true, status: true, bodyRef: true } as const satisfies Record<keyof PurgedTask, true>;

const isPurgedField = (field: { readonly name: string }) => Object.hasOwn(PURGED_FIELDS, field.name);

/**
 * The columns of {@link PurgedTask}'s fields, in row order: what purge-expired.sql returns of each task it deletes
 * (the macro `{{purged_tasks_from}}`, query-macros.ts).
 */
export const PURGED_COLUMNS: readonly string[] = Object.freeze(TASK_FIELD_SPECS.filter(isPurgedField).map((spec) => spec.column));

/** A row of purge-expired.sql as the task it deleted, read as {@link taskFromRow} reads those fields (a task id's text). */
export const purgedFromRow: (row: TaskRow) => PurgedTask = generatedPurgedFromRow;

/**
 * PostgreSQL text cannot hold U+0000. Text values (free-text diagnostics above all: errors, reasons, a response
 * body's first bytes, which a binary response may contain) have it replaced by U+FFFD rather than failing the whole
 * batch they are written in. The request body keeps it: it is stored as its bytes (see `010-task-request-space.sql`).
 */
export function text(value: string | null): string | null {
  return value === null || !value.includes('\u0000') ? value : value.replaceAll('\u0000', '\uFFFD');
}


/** What `complete-attempts` returns for each completion applied: its index in the call and a summary of the row. */
export interface CompletedRow {
  i: number;
  status: TaskStatus;
  next_attempt_at: number | null;
  version: number;
  cancel_requested: boolean;
}

/** A `policies` row as pg returns it (jsonb decoded). */
export interface PolicyRow {
  tenant_id: string;
  policy_id: string;
  policy: RetryPolicy;
  /** The policy's callback (a json column: parsed by pg), or null. */
  callback: TaskCallback | null;
  created_at: number;
  updated_at: number;
  version: number;
}

/** A stored policy row as the domain's named policy. */
export function policyFromRow(row: PolicyRow): StoredPolicy {
  return {
    tenantId: row.tenant_id,
    policyId: row.policy_id,
    policy: row.policy,
    callback: row.callback,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    version: row.version,
  };
}
