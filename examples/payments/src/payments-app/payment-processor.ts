import { isTerminal, retry } from '@retryd/core';
import type { ChargeOutcome, ChargeRequest, PaymentGateway } from '../gateway/payment-gateway.js';
import { isFinalPayment, PaymentEvent, PaymentStatus } from '../payment/payment-status.js';
import type { Payment, PaymentStore } from './payment-store.js';
import type { RetrydHandoff } from './retryd-handoff.js';
import type { RetrydTasks } from './retryd-tasks.js';
import type { GatewayRetryStrategy } from './retry-strategy.js';
import type { CallbackOutcome, TaskEnding } from './settlement-callbacks.js';

/** What {@link PaymentProcessor} works with. */
export interface PaymentProcessorDeps {
  store: PaymentStore;
  gateway: PaymentGateway;
  strategy: GatewayRetryStrategy;
  /** Writes the charge's retryd task in the hand-off's transaction. */
  handoff: RetrydHandoff;
  /** Reads a task at start-up ({@link PaymentProcessor.reconcileHandedOff}). */
  tasks: RetrydTasks;
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
 * hand-off to retryd on a transient or ambiguous failure (the task committed with the move to BACKOFF), and the
 * settlement when retryd's callback tells that the task ended.
 *
 * Every path carries the payment's journaled key, so any number of sends — in process, after a crash, by retryd —
 * is at most one charge. Nothing here is lost with the process: each step starts from the store. The steps of one
 * payment run one after another in this process (a callback repeated while the first is being settled waits for it,
 * then finds the payment final); the store's row lock orders them against any other process.
 */
export class PaymentProcessor {
  private readonly now: () => number;
  /** The last step queued for each payment a step of this process is working on. */
  private readonly steps = new Map<string, Promise<unknown>>();

  constructor(private readonly deps: PaymentProcessorDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** A PENDING payment: marks it SENDING, sends it in process, then books the answer or hands it off. */
  send(paymentId: string): Promise<void> {
    return this.serial(paymentId, () => this.sendNow(paymentId));
  }

  /** A SENDING payment whose outcome is unknown or transient: its retryd task and BACKOFF, in one transaction. */
  handOff(paymentId: string): Promise<void> {
    return this.serial(paymentId, () => this.handOffNow(paymentId));
  }

  /**
   * Settles the payment whose charge task ended as `ending` says (retryd's callback): closes the key at the gateway and
   * books what the gateway says. The gateway's word, not the task's status, decides: an EXHAUSTED task whose last
   * attempt was charged but lost its answer is DONE, and a closed key cannot be charged by a straggler later.
   *
   * Idempotent: a payment already final is a `duplicate` and nothing is done (no call to the gateway, no move).
   */
  async settle(ending: TaskEnding): Promise<CallbackOutcome> {
    const payment = await this.deps.store.byIdempotencyKey(ending.idempotencyKey);
    if (payment === undefined) return 'unknown_payment';
    return this.serial(payment.paymentId, () => this.settleNow(payment.paymentId, ending));
  }

  /**
   * The start-up pass over BACKOFF payments: reads each one's task once, and settles those that ended (their callback
   * may have dead-lettered while the worker was away for longer than the callback policy's budget). The others are
   * left to their callback: nothing polls them.
   *
   * @returns how many it settled
   * @throws AggregateError of the payments it could not look at or settle (the others are settled all the same)
   */
  async reconcileHandedOff(): Promise<number> {
    let settled = 0;
    const failures: unknown[] = [];
    for (const payment of await this.deps.store.withStatus([PaymentStatus.BACKOFF])) {
      if (payment.retryTaskId === null || this.steps.has(payment.paymentId)) continue;
      try {
        const task = await this.deps.tasks.get(payment.retryTaskId);
        if (!isTerminal(task.status)) continue;
        const ending: TaskEnding = {
          taskId: task.taskId,
          idempotencyKey: payment.idempotencyKey,
          status: task.status,
          reason: task.deadLetterReason,
          attempts: task.attemptNumber,
          lastResponseStatus: task.lastResponseStatus,
          lastError: task.lastError,
        };
        if ((await this.settle(ending)) === 'settled') settled += 1;
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length > 0) throw new AggregateError(failures, `the start-up pass could not settle ${failures.length} BACKOFF payment(s)`);
    return settled;
  }

  /**
   * The PENDING and SENDING payments untouched for `olderThanMs` that no step of this process is working on: a step
   * that failed (the database restarting, the process's last crash) left them there. The caller sends or hands them
   * off again.
   */
  async stranded(olderThanMs: number): Promise<Payment[]> {
    const payments = await this.deps.store.withStatus([PaymentStatus.PENDING, PaymentStatus.SENDING], this.now() - olderThanMs);
    return payments.filter((p) => !this.steps.has(p.paymentId));
  }

  /** Runs `step` after the steps of `paymentId` already queued here. */
  private serial<T>(paymentId: string, step: () => Promise<T>): Promise<T> {
    const previous = this.steps.get(paymentId) ?? Promise.resolve();
    const run = previous.then(step, step);
    const settled = run.catch(() => undefined);
    this.steps.set(paymentId, settled);
    void settled.then(() => {
      if (this.steps.get(paymentId) === settled) this.steps.delete(paymentId);
    });
    return run;
  }

  private async sendNow(paymentId: string): Promise<void> {
    const { store, gateway, strategy, signal } = this.deps;
    const pending = await store.get(paymentId);
    if (pending?.status !== PaymentStatus.PENDING) return;
    // SENDING is committed before the first byte goes out: a crash from here on leaves a payment whose charge may
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
    const { store, gateway, strategy, handoff } = this.deps;
    await store.handOff(
      paymentId,
      (client, payment) => handoff.enqueue(client, gateway.chargeCall(chargeRequestOf(payment)), payment.idempotencyKey, strategy.durablePolicy),
      this.now(),
    );
  }

  private async settleNow(paymentId: string, ending: TaskEnding): Promise<CallbackOutcome> {
    const { store, gateway, signal } = this.deps;
    const payment = await store.get(paymentId);
    if (payment === undefined) return 'unknown_payment';
    if (isFinalPayment(payment.status)) return 'duplicate';
    // BACKOFF commits with the task: a payment not BACKOFF, or BACKOFF with another task, never had this one.
    if (payment.status !== PaymentStatus.BACKOFF || payment.retryTaskId !== ending.taskId) return 'other_task';
    const settlement = await gateway.closeKey(chargeRequestOf(payment), signal);
    const now = this.now();
    if (settlement.state === 'charged') {
      await store.move(paymentId, [PaymentEvent.SEND, PaymentEvent.CHARGED], { chargeId: settlement.chargeId }, now);
    } else if (settlement.state === 'declined') {
      await store.move(paymentId, [PaymentEvent.SEND, PaymentEvent.DECLINE], { reason: `declined: ${settlement.code}` }, now);
    } else {
      await store.move(paymentId, [PaymentEvent.EXHAUST], { reason: exhaustedReason(ending) }, now);
    }
    return 'settled';
  }
}

function exhaustedReason(ending: TaskEnding): string {
  const why = ending.reason ?? ending.status.toLowerCase();
  const last = ending.lastResponseStatus === null ? (ending.lastError ?? 'no answer') : `status ${ending.lastResponseStatus}`;
  return `${ending.status === 'EXHAUSTED' ? 'exhausted' : 'failed'}: ${why} after ${ending.attempts} attempts in retryd (last: ${last})`;
}
