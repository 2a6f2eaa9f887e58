// Generated from the task fields (src/domain/task-fields.ts) by packages/server/scripts/generate-row-mappers.mjs.
// Do not edit: run `npm run generate:row-mappers -w packages/server` after changing a field or a codec.
import type { RetryTask } from '../../../domain/task.js';
import { storedTargetUrl } from '../../../domain/target-key.js';
import { checkedTaskId } from '../../../domain/task-id.js';
import { checkedHex } from '../../sql/digest-bytes.js';
import type { BatchRepeats } from '../insert-records.js';
import { text } from '../task-row.js';

/** A task's array in `$1` (jsonb) of insert-tasks.sql, written into `out` (a new array by default): see insert-records.ts. */
export function jsonbRecord(t: RetryTask, repeats: BatchRepeats, out: unknown[] = new Array<unknown>(33)): unknown[] {
  out[0] = text(t.tenantId);
  out[1] = t.taskId === null ? null : checkedTaskId(t.taskId, 'task_id');
  out[2] = text(t.idempotencyKey);
  out[3] = t.requestHash === null ? null : checkedHex(t.requestHash, 'request_hash');
  out[4] = text(storedTargetUrl(t.targetUrl, t.targetKey, 'target_url'));
  out[5] = text(t.targetKey);
  out[6] = text(t.method);
  out[7] = t.headers === null ? null : repeats.jsonPlace(t.headers, 0);
  out[8] = text(t.bodyRef);
  out[9] = text(t.policyId);
  out[10] = t.policy === null ? null : repeats.jsonPlace(t.policy, 1);
  out[11] = text(t.status);
  out[12] = repeats.numberText(t.attemptNumber, 0);
  out[13] = repeats.numberText(t.runAttemptOffset, 1);
  out[14] = repeats.numberText(t.runStartedAt, 2);
  out[15] = repeats.numberText(t.lastDelayMs, 3);
  out[16] = repeats.numberText(t.nextAttemptAt, 4);
  out[17] = repeats.numberText(t.createdAt, 5);
  out[18] = repeats.numberText(t.updatedAt, 6);
  out[19] = text(t.leaseOwner);
  out[20] = repeats.numberText(t.leaseExpiresAt, 7);
  out[21] = repeats.numberText(t.fencingToken, 8);
  out[22] = repeats.numberText(t.version, 9);
  out[23] = t.cancelRequested;
  out[24] = text(t.lastError);
  out[25] = repeats.numberText(t.lastResponseStatus, 10);
  out[26] = text(t.deadLetterReason);
  out[27] = text(t.traceContext);
  out[28] = t.sensitiveBody;
  out[29] = repeats.numberText(t.expiresAt, 11);
  out[30] = repeats.numberText(t.attemptTimeoutMs, 12);
  out[31] = repeats.numberText(t.connectTimeoutMs, 13);
  out[32] = t.callback === null ? null : repeats.jsonPlace(t.callback, 2);
  return out;
}

/** A task's array in `$2` (json) of insert-tasks.sql, written into `out` (a new array by default): see insert-records.ts. */
export function jsonTextRecord(t: RetryTask, _repeats: BatchRepeats, out: unknown[] = new Array<unknown>(1)): unknown[] {
  out[0] = t.body === null ? null : Buffer.from(t.body, 'utf8').toString('base64');
  return out;
}
