import type { AttemptLog } from '../../domain/task.js';
import type { AttemptCompletion, TaskOutcome } from '../../store/store.js';
import { arrayLiteralOf, nullArrayLiteral, type ArrayElementType } from './array-literal.js';
import { text } from './task-row.js';

/** One column of `complete-attempts`' input: its name in the statement, its type, and its value for a completion. */
interface CompletionColumn {
  readonly column: string;
  readonly type: ArrayElementType;
  readonly value: (completion: AttemptCompletion, i: number) => unknown;
  /**
   * What the column is when no completion of the call has `ifCancelRequested` (the usual call): NULL in every row, or
   * the same as the column of that name. Its literal is then not built again.
   */
  readonly withoutCancel?: 'null' | { readonly sameAs: string };
}

type Field<T> = readonly [suffix: string, type: ArrayElementType, value: (from: T) => unknown];

const OUTCOME_FIELDS: readonly Field<TaskOutcome>[] = [
  ['status', 'text', (o) => o.status],
  ['attempt_number', 'integer', (o) => o.attemptNumber],
  ['next_attempt_at', 'float8', (o) => o.nextAttemptAt],
  ['run_started_at', 'float8', (o) => o.runStartedAt],
  ['last_delay_ms', 'float8', (o) => o.lastDelayMs],
  ['last_error', 'text', (o) => text(o.lastError)],
  ['last_response_status', 'integer', (o) => o.lastResponseStatus],
  ['dead_letter_reason', 'text', (o) => text(o.deadLetterReason)],
  ['expires_at', 'float8', (o) => o.expiresAt],
];

const ATTEMPT_FIELDS: readonly Field<AttemptLog>[] = [
  ['tenant_id', 'text', (a) => a.tenantId],
  ['task_id', 'uuid', (a) => a.taskId],
  ['attempt_number', 'integer', (a) => a.attemptNumber],
  ['started_at', 'float8', (a) => a.startedAt],
  ['duration_ms', 'float8', (a) => a.durationMs],
  ['response_status', 'integer', (a) => a.responseStatus],
  ['error_message', 'text', (a) => text(a.errorMessage)],
  ['outcome', 'text', (a) => a.outcome],
  ['response_body_snippet', 'text', (a) => text(a.responseBodySnippet)],
  ['next_attempt_at', 'float8', (a) => a.nextAttemptAt],
  ['worker_id', 'text', (a) => a.workerId],
  ['delayed_by', 'text', (a) => a.delayedBy],
  ['backoff_at', 'float8', (a) => a.backoffAt],
];

/**
 * `fields` under `prefix`, each read from what `pick` finds in a completion (every column NULL where it finds none);
 * `withoutCancel`, when given, is what each column is in a call with no `ifCancelRequested`: NULL, or the column of
 * the same field with no prefix (`plain`).
 */
function prefixed<T>(
  prefix: string,
  fields: readonly Field<T>[],
  pick: (c: AttemptCompletion) => T | undefined,
  withoutCancel?: 'null' | 'plain',
): CompletionColumn[] {
  return fields.map(([suffix, type, value]) => ({
    column: `${prefix}${suffix}`,
    type,
    value: (completion) => {
      const from = pick(completion);
      return from === undefined ? null : value(from);
    },
    ...(withoutCancel === undefined
      ? {}
      : { withoutCancel: withoutCancel === 'null' ? 'null' : { sameAs: suffix } }),
  }));
}

/**
 * The columns of `complete-attempts`' input, in parameter order: `i` (the completion's index in the call), the lease
 * it must hold, the outcome both plain and `c_`-prefixed (the one applied when a cancel was requested; the plain one
 * again when the completion has none), the attempt to log `a_`-prefixed and the attempt logged instead when the `c_`
 * outcome applies `ac_`-prefixed (only with `ifCancelRequested`, which alone can make it apply).
 */
export const COMPLETION_COLUMNS: readonly CompletionColumn[] = [
  { column: 'i', type: 'integer', value: (_, i) => i },
  { column: 'tenant_id', type: 'text', value: (c) => c.tenantId },
  { column: 'task_id', type: 'uuid', value: (c) => c.taskId },
  { column: 'fencing_token', type: 'bigint', value: (c) => c.fencingToken },
  { column: 'require_lease_expired_by', type: 'float8', value: (c) => c.requireLeaseExpiredBy },
  { column: 'has_cancel', type: 'boolean', value: (c) => c.ifCancelRequested !== undefined },
  ...prefixed('', OUTCOME_FIELDS, (c) => c.next),
  ...prefixed('c_', OUTCOME_FIELDS, (c) => c.ifCancelRequested ?? c.next, 'plain'),
  ...prefixed('a_', ATTEMPT_FIELDS, (c) => c.attempt),
  ...prefixed('ac_', ATTEMPT_FIELDS, (c) => (c.ifCancelRequested === undefined ? undefined : c.attemptIfCancelRequested), 'null'),
];

/** For each column, the index of the column it equals in a call without `ifCancelRequested` (or -1). */
const SAME_AS_WITHOUT_CANCEL: readonly number[] = COMPLETION_COLUMNS.map(({ column, withoutCancel }, k) => {
  if (withoutCancel === undefined || withoutCancel === 'null') return -1;
  const index = COMPLETION_COLUMNS.findIndex((other) => other.column === withoutCancel.sameAs);
  // completionArrays reuses a literal already built: the column repeated must come first.
  if (index < 0 || index >= k) throw new Error(`completion column ${column} repeats ${withoutCancel.sameAs}, which is not a column before it`);
  return index;
});

/**
 * The input of `complete-attempts` as SQL: `unnest($first::integer[], …) AS r(i, …)`, one array parameter per column
 * of {@link COMPLETION_COLUMNS}, numbered from `first`.
 */
export function completionInput(first: number): string {
  const arrays = COMPLETION_COLUMNS.map(({ type }, k) => `$${first + k}::${type}[]`).join(', ');
  return `unnest(${arrays}) AS r(${COMPLETION_COLUMNS.map(({ column }) => column).join(', ')})`;
}

/**
 * The parameters {@link completionInput} reads: one array literal per column, the completions in call order. In the
 * usual call, with no `ifCancelRequested`, the `c_` columns repeat the plain outcome's literals and the `ac_` ones are
 * NULL throughout: 22 of the 50 are then not built, on the hottest write of PostgreSQL's path.
 */
export function completionArrays(completions: readonly AttemptCompletion[]): string[] {
  const anyCancel = completions.some((c) => c.ifCancelRequested !== undefined);
  const literals: string[] = [];
  for (let k = 0; k < COMPLETION_COLUMNS.length; k++) {
    const { type, value, withoutCancel } = COMPLETION_COLUMNS[k] as CompletionColumn;
    const sameAs = SAME_AS_WITHOUT_CANCEL[k] as number;
    if (anyCancel || withoutCancel === undefined) literals.push(arrayLiteralOf(completions, type, value));
    else if (withoutCancel === 'null') literals.push(nullArrayLiteral(completions.length));
    else literals.push(literals[sameAs] as string);
  }
  return literals;
}
