// Generated from the task fields (src/domain/task-fields.ts) by packages/server/scripts/generate-row-mappers.mjs.
// Do not edit: run `npm run generate:row-mappers -w packages/server` after changing a field or a codec.
import type { RetryTask } from '../../../domain/task.js';
import { storedTargetUrl, targetUrlOfStored } from '../../../domain/target-key.js';
import { wellFormed } from '../../../domain/well-formed.js';
import type { TaskOutcome } from '../../../store/store.js';
import { createdAtOfSortKey, sortTimeOf, taskIdOfSortKey } from '../keys.js';
import { missingField } from '../missing-field.js';
import type { TaskReply } from '../task-codec.js';

/** A task's state as `insert-tasks.lua` takes it: see task-codec.ts. */
export function encodeTaskState(t: RetryTask): string {
  return '[' +
    (t.targetKey == null ? 'false' : JSON.stringify(wellFormed(t.targetKey))) + ',' +
    (t.policyId == null ? 'false' : JSON.stringify(wellFormed(t.policyId))) + ',' +
    (t.status == null ? 'false' : JSON.stringify(wellFormed(t.status))) + ',' +
    (t.attemptNumber == null ? 'false' : '"' + String(t.attemptNumber) + '"') + ',' +
    (t.runAttemptOffset == null ? 'false' : '"' + String(t.runAttemptOffset) + '"') + ',' +
    (t.runStartedAt == null ? 'false' : '"' + String(t.runStartedAt) + '"') + ',' +
    (t.lastDelayMs == null ? 'false' : '"' + String(t.lastDelayMs) + '"') + ',' +
    (t.nextAttemptAt == null ? 'false' : '"' + String(t.nextAttemptAt) + '"') + ',' +
    (t.updatedAt == null ? 'false' : '"' + String(t.updatedAt) + '"') + ',' +
    (t.leaseOwner == null ? 'false' : JSON.stringify(wellFormed(t.leaseOwner))) + ',' +
    (t.leaseExpiresAt == null ? 'false' : '"' + String(t.leaseExpiresAt) + '"') + ',' +
    (t.fencingToken == null ? 'false' : '"' + String(t.fencingToken) + '"') + ',' +
    (t.version == null ? 'false' : '"' + String(t.version) + '"') + ',' +
    (t.cancelRequested == null ? 'false' : (t.cancelRequested ? '"1"' : '"0"')) + ',' +
    (t.lastError == null ? 'false' : JSON.stringify(wellFormed(t.lastError))) + ',' +
    (t.lastResponseStatus == null ? 'false' : '"' + String(t.lastResponseStatus) + '"') + ',' +
    (t.deadLetterReason == null ? 'false' : JSON.stringify(wellFormed(t.deadLetterReason))) + ',' +
    '"' + sortTimeOf(t.createdAt) + '"' + ',' +
    (t.expiresAt == null ? 'false' : '"' + String(t.expiresAt) + '"') + ',' +
    (t.callback == null ? 'false' : JSON.stringify(JSON.stringify(t.callback))) + ',' +
    JSON.stringify(wellFormed(t.taskId)) + ',' +
    JSON.stringify(wellFormed(t.idempotencyKey)) + ']';
}

/** A task's fixed part as Redis keeps it, its trailing empty values left out: see task-codec.ts. */
export function encodeTaskData(t: RetryTask): string {
  const a = [
    t.idempotencyKey,
    t.requestHash,
    storedTargetUrl(t.targetUrl, t.targetKey, 'target_url'),
    t.method,
    t.headers,
    (t.body === null ? null : wellFormed(t.body)),
    t.bodyRef,
    t.policy,
    t.traceContext,
    (t.sensitiveBody || null),
    t.attemptTimeoutMs,
    t.connectTimeoutMs,
  ];
  let n = a.length;
  while (n > 5 && a[n - 1] === null) n--;
  if (n < a.length) a.length = n;
  return JSON.stringify(a);
}

/** An outcome as `complete-attempts.lua` takes it: see task-codec.ts. */
export function encodeOutcome(o: TaskOutcome): string {
  return (
    (o.status == null ? 'false' : JSON.stringify(wellFormed(o.status))) + ',' +
    (o.attemptNumber == null ? 'false' : '"' + String(o.attemptNumber) + '"') + ',' +
    (o.nextAttemptAt == null ? 'false' : '"' + String(o.nextAttemptAt) + '"') + ',' +
    (o.runStartedAt == null ? 'false' : '"' + String(o.runStartedAt) + '"') + ',' +
    (o.lastDelayMs == null ? 'false' : '"' + String(o.lastDelayMs) + '"') + ',' +
    (o.lastError == null ? 'false' : JSON.stringify(wellFormed(o.lastError))) + ',' +
    (o.lastResponseStatus == null ? 'false' : '"' + String(o.lastResponseStatus) + '"') + ',' +
    (o.deadLetterReason == null ? 'false' : JSON.stringify(wellFormed(o.deadLetterReason))) + ',' +
    (o.expiresAt == null ? 'false' : '"' + String(o.expiresAt) + '"')
  );
}

/** A task from a script's reply and the tenant whose partition it came from: see task-codec.ts. */
export function decodeTask(reply: TaskReply, tenantId: string): RetryTask {
  const s = JSON.parse(reply[0]) as (string | false)[];
  const d = JSON.parse(reply[1]) as unknown[] | Record<string, unknown>;
  if (!Array.isArray(d)) {
    return {
      tenantId: d.tenantId as RetryTask['tenantId'],
      taskId: d.taskId as RetryTask['taskId'],
      idempotencyKey: d.idempotencyKey as RetryTask['idempotencyKey'],
      requestHash: d.requestHash as RetryTask['requestHash'],
      targetUrl: d.targetUrl as RetryTask['targetUrl'],
      targetKey: s[0] === false ? missingField('targetKey') : (s[0] as RetryTask['targetKey']),
      method: d.method as RetryTask['method'],
      headers: d.headers as RetryTask['headers'],
      body: (d.body as RetryTask['body'] | undefined) ?? null,
      bodyRef: (d.bodyRef as RetryTask['bodyRef'] | undefined) ?? null,
      policyId: s[1] === false ? null : (s[1] as RetryTask['policyId']),
      policy: (d.policy as RetryTask['policy'] | undefined) ?? null,
      status: s[2] === false ? missingField('status') : (s[2] as RetryTask['status']),
      attemptNumber: s[3] === false ? missingField('attemptNumber') : Number(s[3]),
      runAttemptOffset: s[4] === false ? missingField('runAttemptOffset') : Number(s[4]),
      runStartedAt: s[5] === false ? null : Number(s[5]),
      lastDelayMs: s[6] === false ? missingField('lastDelayMs') : Number(s[6]),
      nextAttemptAt: s[7] === false ? null : Number(s[7]),
      createdAt: d.createdAt as RetryTask['createdAt'],
      updatedAt: s[8] === false ? missingField('updatedAt') : Number(s[8]),
      leaseOwner: s[9] === false ? null : (s[9] as RetryTask['leaseOwner']),
      leaseExpiresAt: s[10] === false ? null : Number(s[10]),
      fencingToken: s[11] === false ? missingField('fencingToken') : Number(s[11]),
      version: s[12] === false ? missingField('version') : Number(s[12]),
      cancelRequested: s[13] === false ? missingField('cancelRequested') : s[13] === '1',
      lastError: s[14] === false ? null : (s[14] as RetryTask['lastError']),
      lastResponseStatus: s[15] === false ? null : Number(s[15]),
      deadLetterReason: s[16] === false ? null : (s[16] as RetryTask['deadLetterReason']),
      traceContext: (d.traceContext as RetryTask['traceContext'] | undefined) ?? null,
      sensitiveBody: d.sensitiveBody === true,
      expiresAt: s[18] === false ? null : Number(s[18]),
      attemptTimeoutMs: (d.attemptTimeoutMs as RetryTask['attemptTimeoutMs'] | undefined) ?? null,
      connectTimeoutMs: (d.connectTimeoutMs as RetryTask['connectTimeoutMs'] | undefined) ?? null,
      callback: s[19] === false ? null : (JSON.parse(s[19] as string) as RetryTask['callback']),
    };
  }
  const sortKey = s[17] as string;
  return {
    tenantId: tenantId,
    taskId: taskIdOfSortKey(sortKey),
    idempotencyKey: d[0] as RetryTask['idempotencyKey'],
    requestHash: d[1] as RetryTask['requestHash'],
    targetUrl: targetUrlOfStored(d[2] as string, s[0] === false ? missingField('targetKey') : (s[0] as RetryTask['targetKey'])),
    targetKey: s[0] === false ? missingField('targetKey') : (s[0] as RetryTask['targetKey']),
    method: d[3] as RetryTask['method'],
    headers: d[4] as RetryTask['headers'],
    body: (d[5] as RetryTask['body'] | undefined) ?? null,
    bodyRef: (d[6] as RetryTask['bodyRef'] | undefined) ?? null,
    policyId: s[1] === false ? null : (s[1] as RetryTask['policyId']),
    policy: (d[7] as RetryTask['policy'] | undefined) ?? null,
    status: s[2] === false ? missingField('status') : (s[2] as RetryTask['status']),
    attemptNumber: s[3] === false ? missingField('attemptNumber') : Number(s[3]),
    runAttemptOffset: s[4] === false ? missingField('runAttemptOffset') : Number(s[4]),
    runStartedAt: s[5] === false ? null : Number(s[5]),
    lastDelayMs: s[6] === false ? missingField('lastDelayMs') : Number(s[6]),
    nextAttemptAt: s[7] === false ? null : Number(s[7]),
    createdAt: createdAtOfSortKey(sortKey),
    updatedAt: s[8] === false ? missingField('updatedAt') : Number(s[8]),
    leaseOwner: s[9] === false ? null : (s[9] as RetryTask['leaseOwner']),
    leaseExpiresAt: s[10] === false ? null : Number(s[10]),
    fencingToken: s[11] === false ? missingField('fencingToken') : Number(s[11]),
    version: s[12] === false ? missingField('version') : Number(s[12]),
    cancelRequested: s[13] === false ? missingField('cancelRequested') : s[13] === '1',
    lastError: s[14] === false ? null : (s[14] as RetryTask['lastError']),
    lastResponseStatus: s[15] === false ? null : Number(s[15]),
    deadLetterReason: s[16] === false ? null : (s[16] as RetryTask['deadLetterReason']),
    traceContext: (d[8] as RetryTask['traceContext'] | undefined) ?? null,
    sensitiveBody: d[9] === true,
    expiresAt: s[18] === false ? null : Number(s[18]),
    attemptTimeoutMs: (d[10] as RetryTask['attemptTimeoutMs'] | undefined) ?? null,
    connectTimeoutMs: (d[11] as RetryTask['connectTimeoutMs'] | undefined) ?? null,
    callback: s[19] === false ? null : (JSON.parse(s[19] as string) as RetryTask['callback']),
  };
}
