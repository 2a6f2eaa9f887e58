import { isTerminal, TaskStatus } from '@retryd/core';
import { WebhookVerificationError, type WebhookVerifier } from '@retryd/client';
import type { FastifyInstance } from 'fastify';

/** Where the worker takes retryd's callbacks. */
export const CALLBACK_PATH = '/retryd/task-ended';

/** How a retryd task ended, as the settlement reads it: from a callback, or from the task itself at start-up. */
export interface TaskEnding {
  taskId: string;
  /** The task's idempotency key: the payment's own key. */
  idempotencyKey: string;
  /** SUCCEEDED, FAILED, EXHAUSTED or CANCELLED. */
  status: TaskStatus;
  /** Why a dead letter died (`max_attempts` …), or null. */
  reason: string | null;
  attempts: number;
  /** The last attempt's status, or null when it got no answer. */
  lastResponseStatus: number | null;
  lastError: string | null;
}

/** What a callback did: `settled` booked the payment; `duplicate` found it already final (a repeat: nothing done). */
export type CallbackOutcome = 'settled' | 'duplicate' | 'unknown_payment' | 'other_task';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const nullable = (v: unknown, type: 'string' | 'number'): boolean => v === null || typeof v === type;

/**
 * The `task.ended` event of a callback body, or the rule it breaks. Only what the settlement reads is checked; the
 * signature, checked first, says it is retryd's.
 */
export function parseTaskEnded(raw: string): TaskEnding | string {
  let event: unknown;
  try {
    event = JSON.parse(raw);
  } catch {
    return 'the body must be JSON';
  }
  if (!isObject(event) || event.type !== 'task.ended') return 'type must be task.ended';
  const { taskId, idempotencyKey, status, reason, attempts, lastResponse, lastError } = event;
  if (typeof taskId !== 'string' || taskId === '') return 'taskId must be a non-empty string';
  if (typeof idempotencyKey !== 'string' || idempotencyKey === '') return 'idempotencyKey must be a non-empty string';
  if (typeof status !== 'string' || !(Object.values(TaskStatus) as string[]).includes(status) || !isTerminal(status as TaskStatus)) {
    return 'status must be SUCCEEDED, FAILED, EXHAUSTED or CANCELLED';
  }
  if (!Number.isSafeInteger(attempts) || (attempts as number) < 0) return 'attempts must be an integer >= 0';
  if (!nullable(reason, 'string')) return 'reason must be a string or null';
  if (!nullable(lastError, 'string')) return 'lastError must be a string or null';
  if (lastResponse !== null && !(isObject(lastResponse) && nullable(lastResponse.status, 'number'))) return 'lastResponse must be null or have a numeric or null status';
  return {
    taskId,
    idempotencyKey,
    status: status as TaskStatus,
    reason: reason as string | null,
    attempts: attempts as number,
    lastResponseStatus: lastResponse === null ? null : (lastResponse.status as number | null),
    lastError: lastError as string | null,
  };
}

/**
 * Registers `POST /retryd/task-ended`, where retryd tells the end of each charge task. A callback may come more than
 * once (retryd sends it until it gets a 2xx; its answer may be lost), so settling is idempotent: the payment's status
 * says whether it was already booked.
 *
 * - The signature is checked on the exact bytes received, before anything else: `401` when it does not hold (retryd
 *   does not retry a 401; a forged request is refused);
 * - a body that is not a `task.ended` event: `400`; an event for a key the app does not know: `404`; for a task that
 *   is not the payment's: `409`: each is a dead letter in retryd, where an operator sees it;
 * - settled, or already final: `200`, answered only once the booking is committed;
 * - the gateway or the database failing: `5xx`, so retryd sends it again later.
 */
export function registerSettlementCallbacks(
  app: FastifyInstance,
  options: { verify: WebhookVerifier; settle: (ending: TaskEnding) => Promise<CallbackOutcome> },
): void {
  void app.register(async (scope) => {
    // The signature covers the body's bytes: this route reads its body as received, not parsed and re-serialised.
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => done(null, body));
    scope.post(CALLBACK_PATH, async (request, reply) => {
      const raw = typeof request.body === 'string' ? request.body : '';
      try {
        await options.verify(raw, request.headers as Record<string, string | string[] | undefined>);
      } catch (error) {
        if (error instanceof WebhookVerificationError) return reply.code(401).send({ code: 'invalid_signature', detail: error.message });
        throw error;
      }
      const ending = parseTaskEnded(raw);
      if (typeof ending === 'string') return reply.code(400).send({ code: 'invalid_event', detail: ending });
      const outcome = await options.settle(ending);
      if (outcome === 'unknown_payment') return reply.code(404).send({ code: outcome, detail: `no payment has the key ${ending.idempotencyKey}` });
      if (outcome === 'other_task') return reply.code(409).send({ code: outcome, detail: `task ${ending.taskId} is not the payment's task` });
      return reply.code(200).send({ outcome });
    });
  });
}
