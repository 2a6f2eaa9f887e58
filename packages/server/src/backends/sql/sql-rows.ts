import type { AttemptLog, AttemptLogOutcome, RetryDelayReason } from '../../domain/task.js';

// Row shapes that the two SQL stores (SQLite and PostgreSQL) share: their `attempts` tables have the same columns.

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
  delayed_by: RetryDelayReason | null;
  backoff_at: number | null;
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
    delayedBy: row.delayed_by,
    backoffAt: row.backoff_at,
  };
}
