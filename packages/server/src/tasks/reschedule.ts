import { MAX_POLICY_MS, TaskEvent, TaskStatus, canTransition, type RetryPolicy } from '@retryd/core';
import { RetrydError, type FieldError } from '../domain/errors.js';
import type { RetryTask } from '../domain/task.js';
import { durationText } from '../retention/retention-periods.js';
import { DEFAULT_POLICY_ID, DEFAULT_SERVICE_POLICY } from '../policies/default-policy.js';
import type { RescheduleChange, Store } from '../store/store.js';
import { callStore } from './store-failure.js';
import { isoDateTimeMs } from '../domain/iso-date-time.js';
import { MAX_EPOCH_MS } from './enqueue-input.js';

// Run now and reschedule (`POST /retry-tasks/{taskId}/run`, `/reschedule`): the body's check and the decision on the
// task as read. The store applies the decision with `rescheduleTask`, guarded by the status and the version it was
// made on.

/** When a PENDING task is to be due: at once, or at a time (epoch ms; a time already past means at once). */
export type RescheduleTime = 'now' | number;

/** The answer to a run-now or reschedule: moved, or left as it was because it was already due by then. Both 200. */
export type RescheduleResult = { kind: 'rescheduled' | 'already_due'; task: RetryTask };

/** The latest a task may be rescheduled to, as a distance from now: the longest delay any policy may ask for (10 years). */
export const MAX_RESCHEDULE_AHEAD_MS = MAX_POLICY_MS;

const TIME_RULE = 'epoch milliseconds (an integer >= 0) or an ISO 8601 date-time with a time zone';

/**
 * The time of a reschedule request's body, `{ "nextAttemptAt": <ISO 8601 date-time or epoch ms> }`; a 400 naming the
 * field and its rule otherwise (no body, another field, a time of another form).
 *
 * @example
 * ```ts
 * parseRescheduleBody({ nextAttemptAt: '2030-01-01T00:00:00Z' }); // 1893456000000
 * ```
 */
export function parseRescheduleBody(body: unknown): number {
  const errors: FieldError[] = [];
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    const rule = 'a JSON object with the field nextAttemptAt';
    throw RetrydError.validation([{ field: 'body', rule, message: `body must be ${rule}` }]);
  }
  for (const field of Object.keys(body)) {
    if (field !== 'nextAttemptAt') errors.push({ field, rule: 'absent (the only field is nextAttemptAt)', message: `${field} is not a field of a reschedule` });
  }
  const value = (body as { nextAttemptAt?: unknown }).nextAttemptAt;
  const ms = typeof value === 'string' ? isoDateTimeMs(value) : value;
  if (!(typeof ms === 'number' && Number.isInteger(ms) && ms >= 0 && ms <= MAX_EPOCH_MS)) {
    const got = value === undefined ? 'it is missing' : `got ${JSON.stringify(value)}`;
    errors.push({ field: 'nextAttemptAt', rule: TIME_RULE, message: `nextAttemptAt must be ${TIME_RULE}, ${got}` });
  }
  if (errors.length > 0) throw RetrydError.validation(errors);
  return ms as number;
}

/**
 * The latest time `task` may be due, running on `policy`, and the rule that says so: the end of its run's budget less the headroom for a call (`runStartedAt + totalBudgetMs − estimatedCallMs`,
 * the last moment an attempt may start), and never more than {@link MAX_RESCHEDULE_AHEAD_MS} after `now`. A task due
 * later than its budget allows would be EXHAUSTED without an attempt when it fell due.
 */
function latestDue(task: RetryTask, policy: RetryPolicy, now: number): { at: number; rule: string } {
  const ahead = { at: now + MAX_RESCHEDULE_AHEAD_MS, rule: `at most ${MAX_RESCHEDULE_AHEAD_MS} ms (${durationText(MAX_RESCHEDULE_AHEAD_MS)}) after now` };
  // A task with no run start yet (stored before budgets counted from creation) counts its budget from its first attempt.
  if (policy.totalBudgetMs === undefined || task.runStartedAt === null) return ahead;
  const at = task.runStartedAt + policy.totalBudgetMs - (policy.estimatedCallMs ?? 0);
  if (at >= ahead.at) return ahead;
  const headroom = policy.estimatedCallMs === undefined ? '' : ` − policy.estimatedCallMs ${policy.estimatedCallMs}`;
  return {
    at,
    rule: `at or before ${new Date(at).toISOString()}, the end of the task's time budget (runStartedAt ${new Date(task.runStartedAt).toISOString()} + policy.totalBudgetMs ${policy.totalBudgetMs}${headroom})`,
  };
}

/**
 * The policy `task` runs on, as the engine resolves it: its inline one, or its named one as the store holds it (the
 * built-in default when it is gone). A store that fails is 503 STORE_UNAVAILABLE.
 */
export async function policyOfTask(store: Pick<Store, 'kind' | 'getPolicy'>, task: RetryTask): Promise<RetryPolicy> {
  if (task.policy !== null) return task.policy;
  const named = await callStore(store.kind, 'read the policy', () => store.getPolicy(task.tenantId, task.policyId ?? DEFAULT_POLICY_ID));
  return named?.policy ?? DEFAULT_SERVICE_POLICY;
}

/** What {@link decideReschedule} decided: the store's change, or nothing to change. */
export type RescheduleDecision = { kind: 'rescheduled'; change: RescheduleChange } | { unchanged: 'already_due' };

/**
 * The change that makes `task` due at `at` ('now', or a time: one already past is now), decided on the task as read at
 * `now`; `policy` is the task's (read only when the time is in the future). Throws the caller's error:
 *
 * - an IN_FLIGHT task: 409 TASK_RUNNING (its attempt's outcome decides when it runs next);
 * - a finished task: 409 TASK_NOT_PENDING;
 * - a time later than {@link latestDue}: 422 RESCHEDULE_OUT_OF_RANGE naming `nextAttemptAt` and the rule.
 *
 * A task already due by the time asked is left as it is (`already_due`): moving it to now would put it behind the
 * tasks of its target that fell due after it. Neither the attempt count nor the run's budget changes.
 */
export function decideReschedule(task: RetryTask, at: RescheduleTime, now: number, policy: RetryPolicy | undefined): RescheduleDecision {
  if (!canTransition(task.status, TaskEvent.RESCHEDULE)) {
    if (task.status === TaskStatus.IN_FLIGHT) {
      throw new RetrydError(
        'TASK_RUNNING',
        `task ${task.taskId} is IN_FLIGHT: an attempt is running now, and its outcome decides when the next one is due; only PENDING tasks can be run now or rescheduled`,
      );
    }
    const replay = task.status === TaskStatus.FAILED || task.status === TaskStatus.EXHAUSTED ? ' (replay it to run it again)' : '';
    throw new RetrydError('TASK_NOT_PENDING', `task ${task.taskId} is ${task.status}: only PENDING tasks can be run now or rescheduled${replay}`);
  }
  const dueAt = at === 'now' ? now : Math.max(at, now);
  if (dueAt === now && task.nextAttemptAt !== null && task.nextAttemptAt <= now) return { unchanged: 'already_due' };
  if (dueAt > now) {
    if (policy === undefined) throw new Error('decideReschedule needs the task policy for a time in the future');
    const latest = latestDue(task, policy, now);
    if (dueAt > latest.at) {
      const error: FieldError = { field: 'nextAttemptAt', rule: latest.rule, message: `nextAttemptAt must be ${latest.rule}, got ${new Date(dueAt).toISOString()}` };
      throw new RetrydError('RESCHEDULE_OUT_OF_RANGE', error.message, [error]);
    }
  }
  return { kind: 'rescheduled', change: { expectedVersion: task.version, nextAttemptAt: dueAt, updatedAt: now } };
}
