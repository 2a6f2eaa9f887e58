// Generated from the task fields (src/domain/task-fields.ts) by packages/server/scripts/generate-row-mappers.mjs.
// Do not edit: run `npm run generate:row-mappers -w packages/server` after changing a field or a codec.
import { isLive } from '@retryd/core';
import type { RetryTask } from '../../../domain/task.js';
import { storedTargetUrl, targetUrlOfStored } from '../../../domain/target-key.js';
import { wellFormed } from '../../../domain/well-formed.js';
import { hexBytes } from '../../sql/digest-bytes.js';
import { hyphenatedUuid, uuidBytes } from '../../sql/task-id-params.js';
import type { JsonCache } from '../../../store/json-cache.js';
import { statusCode, statusOfCode } from '../status-guards.js';
import type { SqlValue } from '../task-row.js';

/** A stored row (possibly followed by more columns) as the domain's task: see task-row.ts. */
export function taskFromRow(r: readonly SqlValue[], json: JsonCache): RetryTask {
  return {
    tenantId: r[0] as string,
    taskId: hyphenatedUuid(r[1] as string),
    idempotencyKey: r[2] as string,
    requestHash: r[3] as string,
    targetUrl: targetUrlOfStored(r[4] as string, r[5] as string),
    targetKey: r[5] as string,
    method: r[6] as string,
    headers: json.parse(r[7] as string) as RetryTask['headers'],
    body: r[8] as string | null,
    bodyRef: r[9] as string | null,
    policyId: r[10] as string | null,
    policy: r[11] === null ? null : (json.parse(r[11] as string) as RetryTask['policy']),
    status: statusOfCode(r[12] as number),
    attemptNumber: r[13] as number,
    runAttemptOffset: r[14] as number,
    runStartedAt: r[15] as number | null,
    lastDelayMs: r[16] as number,
    nextAttemptAt: r[17] as number | null,
    createdAt: r[18] as number,
    updatedAt: r[19] as number,
    leaseOwner: r[20] as string | null,
    leaseExpiresAt: r[21] as number | null,
    fencingToken: r[22] as number,
    version: r[23] as number,
    cancelRequested: r[24] === 1,
    lastError: r[25] as string | null,
    lastResponseStatus: r[26] as number | null,
    deadLetterReason: r[27] as string | null,
    traceContext: r[28] as string | null,
    sensitiveBody: r[29] === 1,
    expiresAt: r[30] as number | null,
    attemptTimeoutMs: r[31] as number | null,
    connectTimeoutMs: r[32] as number | null,
    callback: r[33] === null ? null : (json.parse(r[33] as string) as RetryTask['callback']),
  };
}

/** A task as parameters of the task INSERT, its queue's number in place of its target key, then `ended_at`: see task-row.ts. */
export function taskToParams(t: RetryTask, queueId: number): SqlValue[] {
  return [
    t.tenantId,
    uuidBytes(t.taskId, 'task_id'),
    t.idempotencyKey,
    hexBytes(t.requestHash, 'request_hash'),
    storedTargetUrl(t.targetUrl, t.targetKey, 'target_url'),
    queueId,
    t.method,
    JSON.stringify(t.headers),
    t.body === null ? null : wellFormed(t.body),
    t.bodyRef,
    t.policyId,
    t.policy === null ? null : JSON.stringify(t.policy),
    statusCode(t.status),
    t.attemptNumber,
    t.runAttemptOffset,
    t.runStartedAt,
    t.lastDelayMs,
    t.nextAttemptAt,
    t.createdAt,
    t.updatedAt,
    t.leaseOwner,
    t.leaseExpiresAt,
    t.fencingToken,
    t.version,
    t.cancelRequested ? 1 : 0,
    t.lastError,
    t.lastResponseStatus,
    t.deadLetterReason,
    t.traceContext,
    t.sensitiveBody ? 1 : 0,
    t.expiresAt,
    t.attemptTimeoutMs,
    t.connectTimeoutMs,
    t.callback === null ? null : JSON.stringify(t.callback),
    isLive(t.status) ? null : t.updatedAt,
  ];
}
