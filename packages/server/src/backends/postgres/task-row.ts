import type { RetryPolicy, TaskStatus } from '@retryd/core';
import type { RetryTask, StoredPolicy } from '../../domain/task.js';
import { compileTaskMapper, taskLiteral } from '../../domain/compile-task-mapper.js';

/**
 * A `tasks` row as pg returns it, one property per column of `TASK_FIELDS`: jsonb and json decoded (the body's
 * `json` column back to its string), bigint as a number (see `connection.ts`). Statements may return more columns
 * (a claim's rank), which the mapping ignores.
 */
export type TaskRow = Readonly<Record<string, unknown>>;

/**
 * A stored row as the domain's task, in row order (the order of `TASK_FIELDS`). pg already decodes every codec but
 * `hex` to the value the field holds (a `bytea` comes back as a Buffer, read as its lower-case hex), so the mapping is
 * a copy, column to property, compiled once (see compile-task-mapper.ts).
 */
export const taskFromRow: (row: TaskRow) => RetryTask = compileTaskMapper(
  'taskFromRow(r)',
  `return ${taskLiteral((field) => {
    const value = `r.${field.column}`;
    if (field.codec !== 'hex') return value;
    return field.nullable ? `${value} === null ? null : ${value}.toString('hex')` : `${value}.toString('hex')`;
  })};`,
);

/**
 * PostgreSQL text cannot hold U+0000. Text values (free-text diagnostics above all: errors, reasons, a response
 * body's first bytes, which a binary response may contain) have it replaced by U+FFFD rather than failing the whole
 * batch they are written in. The request body keeps it: it is stored as JSON (see `001-init.sql`).
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
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    version: row.version,
  };
}
