// Generated from the task fields (src/domain/task-fields.ts) by packages/server/scripts/generate-row-mappers.mjs.
// Do not edit: run `npm run generate:row-mappers -w packages/server` after changing a field or a codec.
import type { RetryTask } from '../../../domain/task.js';
import { storedTargetUrl } from '../../../domain/target-key.js';
import { checkedTaskId } from '../../../domain/task-id.js';
import { checkedHex } from '../../sql/digest-bytes.js';
import type { BatchRepeats } from '../insert-records.js';
import { text } from '../task-row.js';

/** A task's array in `$1` (jsonb) of insert-tasks.sql: see insert-records.ts. */
export function jsonbRecord(t: RetryTask, repeats: BatchRepeats): unknown[] {
  return [
    text(t.tenantId),
    t.taskId === null ? null : checkedTaskId(t.taskId, 'task_id'),
    text(t.idempotencyKey),
    t.requestHash === null ? null : checkedHex(t.requestHash, 'request_hash'),
    text(storedTargetUrl(t.targetUrl, t.targetKey, 'target_url')),
    text(t.targetKey),
    text(t.method),
    t.headers === null ? null : repeats.jsonPlace(t.headers, 0),
    text(t.bodyRef),
    text(t.policyId),
    t.policy === null ? null : repeats.jsonPlace(t.policy, 1),
    text(t.status),
    repeats.numberText(t.attemptNumber, 0),
    repeats.numberText(t.runAttemptOffset, 1),
    repeats.numberText(t.runStartedAt, 2),
    repeats.numberText(t.lastDelayMs, 3),
    repeats.numberText(t.nextAttemptAt, 4),
    repeats.numberText(t.createdAt, 5),
    repeats.numberText(t.updatedAt, 6),
    text(t.leaseOwner),
    repeats.numberText(t.leaseExpiresAt, 7),
    repeats.numberText(t.fencingToken, 8),
    repeats.numberText(t.version, 9),
    t.cancelRequested,
    text(t.lastError),
    repeats.numberText(t.lastResponseStatus, 10),
    text(t.deadLetterReason),
    text(t.traceContext),
    t.sensitiveBody,
    repeats.numberText(t.expiresAt, 11),
    repeats.numberText(t.attemptTimeoutMs, 12),
    repeats.numberText(t.connectTimeoutMs, 13),
    t.callback === null ? null : repeats.jsonPlace(t.callback, 2),
  ];
}

/** A task's array in `$2` (json) of insert-tasks.sql: see insert-records.ts. */
export function jsonTextRecord(t: RetryTask, _repeats: BatchRepeats): unknown[] {
  return [
    t.body === null ? null : Buffer.from(t.body, 'utf8').toString('base64'),
  ];
}
