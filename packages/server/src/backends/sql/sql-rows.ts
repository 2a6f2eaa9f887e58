import type { AttemptLog, AttemptLogOutcome } from '../../domain/task.js';
import type { TaskPatch } from '../../store/store.js';

// Row shapes that the two SQL stores (SQLite and PostgreSQL) share: their `attempts` tables have the same columns,
// and `updateTask` patches the same task columns in both.

/** An `attempts` row as either SQL driver returns it. */
export interface AttemptRow {
  tenant_id: string;
  task_id: string;
  attempt_number: number;
  started_at: number;
  duration_ms: number;
  response_status: number | null;
  error_message: string | null;
  outcome: AttemptLogOutcome;
  response_body_snippet: string | null;
  next_attempt_at: number | null;
  worker_id: string;
}

/** A stored attempt row as the domain's attempt log entry. */
export function attemptFromRow(row: AttemptRow): AttemptLog {
  return {
    tenantId: row.tenant_id,
    taskId: row.task_id,
    attemptNumber: row.attempt_number,
    startedAt: row.started_at,
    durationMs: row.duration_ms,
    responseStatus: row.response_status,
    errorMessage: row.error_message,
    outcome: row.outcome,
    responseBodySnippet: row.response_body_snippet,
    nextAttemptAt: row.next_attempt_at,
    workerId: row.worker_id,
  };
}

/** The column each field of a {@link TaskPatch} is stored in. */
export const PATCH_COLUMNS = {
  status: 'status',
  nextAttemptAt: 'next_attempt_at',
  cancelRequested: 'cancel_requested',
  runAttemptOffset: 'run_attempt_offset',
  runStartedAt: 'run_started_at',
  lastDelayMs: 'last_delay_ms',
  deadLetterReason: 'dead_letter_reason',
  lastError: 'last_error',
  lastResponseStatus: 'last_response_status',
  updatedAt: 'updated_at',
} as const satisfies { readonly [K in keyof Required<TaskPatch>]: string };

/** A column {@link PATCH_COLUMNS} names. */
export type PatchColumn = (typeof PATCH_COLUMNS)[keyof typeof PATCH_COLUMNS];
