import type { RetryPolicy } from '@retryd/core';
import type { EnqueueRequest, PgEnqueuer } from '@retryd/server/pg';
import type pg from 'pg';
import type { ChargeCall } from '../gateway/payment-gateway.js';

/** Options of {@link RetrydHandoff}. */
export interface RetrydHandoffOptions {
  /** `createPgEnqueuer` on retryd's schema in the app's database. */
  enqueuer: PgEnqueuer;
  /** Where retryd tells the end of each charge task: the app's `POST /retryd/task-ended` (see settlement-callbacks.ts). */
  callbackUrl: string;
  /** The registered policy retryd retries the callback under (see retryd-setup.ts). */
  callbackPolicyId: string;
}

/**
 * The hand-off of a charge to retryd, as a task written in the payment's own transaction: the charge as an HTTP call,
 * the payment's key as the task's `idempotencyKey` (retryd sends it as `Idempotency-Key` on every attempt, so the
 * gateway charges it at most once), the gateway's durable policy, and a completion callback to the app.
 */
export class RetrydHandoff {
  constructor(private readonly options: RetrydHandoffOptions) {}

  /** The `POST /retry-tasks` body of the charge's task. */
  chargeTask(call: ChargeCall, idempotencyKey: string, policy: RetryPolicy): EnqueueRequest {
    // retryd sends the task's own key as Idempotency-Key: the call's copy of it is not sent twice.
    const { 'idempotency-key': _sentByRetryd, ...headers } = call.headers;
    return {
      targetUrl: call.url,
      method: call.method,
      headers,
      body: call.body,
      idempotencyKey,
      policy,
      callback: { url: this.options.callbackUrl, policyId: this.options.callbackPolicyId },
    };
  }

  /** Enqueues the charge's task on `client`, inside its open transaction: it exists only if that transaction commits. */
  enqueue(client: pg.PoolClient, call: ChargeCall, idempotencyKey: string, policy: RetryPolicy): Promise<{ taskId: string }> {
    return this.options.enqueuer.enqueue(client, this.chargeTask(call, idempotencyKey, policy));
  }
}
