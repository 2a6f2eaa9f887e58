import { isTerminal, retry } from '@retryd/core';
import type { ChargeOutcome, ChargeRequest, PaymentGateway } from '../gateway/payment-gateway.js';
import { PaymentEvent, PaymentStatus } from '../payment/payment-status.js';
import type { Payment, PaymentStore } from './payment-store.js';
import type { RetrydTask, RetrydTasks } from './retryd-tasks.js';
import type { GatewayRetryStrategy } from './retry-strategy.js';

/** What {@link PaymentProcessor} works with. */
export interface PaymentProcessorDeps {
  store: PaymentStore;
  gateway: PaymentGateway;
  strategy: GatewayRetryStrategy;
  retryd: RetrydTasks;
  /** Aborts every retry loop at shutdown. */
  signal: AbortSignal;
  /** Epoch ms. Default `Date.now`. */
  now?: () => number;
}

function chargeRequestOf(payment: Payment): ChargeRequest {
  return { paymentId: payment.paymentId, amountCents: payment.amountCents, card: payment.card, idempotencyKey: payment.idempotencyKey };
}

/**
 * Moves payments through their lifecycle: the first send in process (a short `retry` from `@retryd/core`), the
 * hand-off to the retryd service on a transient or ambiguous failure, and the settlement of what retryd did.
 *
 * Every path carries the payment's journaled key, so any number of sends — in process, after a crash, by retryd —
 * is at most one charge. Nothing here is lost with the process: each step starts from the store.
 */
export class PaymentProcessor {
  private readonly now: () => number;
  /** Payments a step of this process is working on: no second step starts on them meanwhile. */
  private readonly busy = new Set<string>();

  constructor(private readonly deps: PaymentProcessorDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** A PENDING payment: marks it SENDING, sends it in process, then books the answer or hands it off. */
  send(paymentId: string): Promise<void> {
    return this.exclusive(paymentId, undefined, () => this.sendNow(paymentId));
  }

  /** A SENDING payment whose outcome is unknown or transient: enqueued in retryd with its key, then BACKOFF. */
  handOff(paymentId: string): Promise<void> {
    return this.exclusive(paymentId, undefined, () => this.handOffNow(paymentId));
  }

  /**
   * A BACKOFF payment: reads its retryd task and, once the task has ended, settles the key with the gateway and
   * books what the gateway says. The gateway's word, not the task's status, decides: an EXHAUSTED task whose
   * last attempt was charged but lost its answer is DONE, and a closed key cannot be charged by a straggler later.
   * Returns whether the payment is now final.
   */
  settle(paymentId: string): Promise<boolean> {
    return this.exclusive(paymentId, false, () => this.settleNow(paymentId));
  }

  /**
   * Hands to retryd the SENDING payments untouched for `olderThanMs` that no step of this process is working on:
   * a step that failed (the store or retryd answered an error) left them there, and only a restart would find them
   * otherwise.
   */
  async sweepStranded(olderThanMs: number): Promise<void> {
    const before = this.now() - olderThanMs;
    for (const payment of this.deps.store.withStatus([PaymentStatus.SENDING])) {
      if (payment.updatedAt < before && !this.busy.has(payment.paymentId)) await this.handOff(payment.paymentId);
    }
  }

  private async exclusive<T>(paymentId: string, whenBusy: T, step: () => Promise<T>): Promise<T> {
    if (this.busy.has(paymentId)) return whenBusy;
    this.busy.add(paymentId);
    try {
      return await step();
    } finally {
      this.busy.delete(paymentId);
    }
  }

  private async sendNow(paymentId: string): Promise<void> {
    const { store, gateway, strategy, signal } = this.deps;
    const pending = store.get(paymentId);
    if (pending?.status !== PaymentStatus.PENDING) return;
    // SENDING is on disk before the first byte goes out: a crash from here on leaves a payment whose charge may
    // have landed, and recovery hands it to retryd with the same key rather than forgetting it.
    const payment = await store.move(paymentId, [PaymentEvent.SEND], {}, this.now());
    const request = chargeRequestOf(payment);
    let outcome: ChargeOutcome | undefined;
    try {
      outcome = await retry(
        ({ signal: attemptSignal }) => gateway.charge(request, AbortSignal.any([attemptSignal, AbortSignal.timeout(strategy.attemptTimeoutMs)])),
        strategy.inProcessPolicy,
        { signal, retryOnResult: (o) => strategy.isRetryable(o), retryOnError: () => true },
      );
    } catch (error) {
      if (signal.aborted) throw error;
      // Attempts ran out on a timeout, a lost answer or a 5xx: unknown or transient, retryd takes over.
    }
    if (outcome?.kind === 'charged') {
      await store.move(paymentId, [PaymentEvent.CHARGED], { chargeId: outcome.chargeId }, this.now());
    } else if (outcome?.kind === 'declined') {
      await store.move(paymentId, [PaymentEvent.DECLINE], { reason: `declined: ${outcome.code}` }, this.now());
    } else if (outcome?.kind === 'failed' && !strategy.isRetryable(outcome)) {
      await store.move(paymentId, [PaymentEvent.DECLINE], { reason: `refused: ${outcome.code} (status ${outcome.status})` }, this.now());
    } else {
      await this.handOffNow(paymentId);
    }
  }

  private async handOffNow(paymentId: string): Promise<void> {
    const { store, gateway, strategy, retryd } = this.deps;
    const payment = store.get(paymentId);
    if (payment?.status !== PaymentStatus.SENDING) return;
    const task = await retryd.enqueue(gateway.chargeCall(chargeRequestOf(payment)), payment.idempotencyKey, strategy.durablePolicy);
    await store.move(paymentId, [PaymentEvent.BACK_OFF], { retryTaskId: task.taskId }, this.now());
  }

  private async settleNow(paymentId: string): Promise<boolean> {
    const { store, gateway, retryd, signal } = this.deps;
    const payment = store.get(paymentId);
    if (payment?.status !== PaymentStatus.BACKOFF || payment.retryTaskId === null) return false;
    const task = await retryd.get(payment.retryTaskId);
    if (!isTerminal(task.status)) return false;
    const settlement = await gateway.closeKey(chargeRequestOf(payment), signal);
    const now = this.now();
    if (settlement.state === 'charged') {
      await store.move(paymentId, [PaymentEvent.SEND, PaymentEvent.CHARGED], { chargeId: settlement.chargeId }, now);
    } else if (settlement.state === 'declined') {
      await store.move(paymentId, [PaymentEvent.SEND, PaymentEvent.DECLINE], { reason: `declined: ${settlement.code}` }, now);
    } else {
      await store.move(paymentId, [PaymentEvent.EXHAUST], { reason: exhaustedReason(task) }, now);
    }
    return true;
  }
}

function exhaustedReason(task: RetrydTask): string {
  const why = task.deadLetterReason ?? task.status.toLowerCase();
  const last = task.lastError ?? (task.lastResponseStatus === null ? 'no answer' : `status ${task.lastResponseStatus}`);
  return `${task.status === 'EXHAUSTED' ? 'exhausted' : 'failed'}: ${why} after ${task.attemptNumber} attempts in retryd (last: ${last})`;
}
