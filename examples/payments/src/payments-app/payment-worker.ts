import { setMaxListeners } from 'node:events';
import { createWebhookVerifier } from '@retryd/client';
import { createPgEnqueuer } from '@retryd/server/pg';
import type { FastifyInstance } from 'fastify';
import { HttpPaymentGateway } from '../gateway/http-payment-gateway.js';
import { PaymentStatus } from '../payment/payment-status.js';
import { buildPaymentsApp } from './app-server.js';
import { PaymentProcessor } from './payment-processor.js';
import { PaymentStore } from './payment-store.js';
import { RetrydHandoff } from './retryd-handoff.js';
import { CALLBACK_POLICY_ID } from './retryd-setup.js';
import { RetrydTasks } from './retryd-tasks.js';
import { mockGatewayStrategy } from './retry-strategy.js';
import { registerSettlementCallbacks } from './settlement-callbacks.js';
import { WorkQueue } from './work-queue.js';

/** How a payment worker is started. */
export interface PaymentWorkerConfig {
  /** The app's PostgreSQL: its own tables, and retryd's schema beside them. */
  databaseUrl: string;
  /** The app's schema. Default `payments`. */
  paymentsSchema?: string;
  /** retryd's schema in the same database (the service runs on it: `--store postgres://…?schema=retryd`). Default `retryd`. */
  retrydSchema?: string;
  /** Networks the hand-off's tasks may target, as the service's `--allow-targets`. Default `RETRYD_ALLOW_TARGETS`. */
  allowTargets?: string;
  /** The retryd service, read once per BACKOFF payment at start-up. */
  retrydUrl: string;
  gatewayUrl: string;
  /** Default 0: a free port. */
  port?: number;
  /** The URL retryd calls back, as retryd reaches the worker (its origin signed by retryd: see retryd-setup.ts). */
  callbackUrl: string;
  /** The Standard Webhooks secret (`whsec_…`) retryd signs the callbacks with. */
  callbackSecret: string;
  /** How long a PENDING or SENDING payment may sit untouched before the sweep sends or hands it off again. Default 10 s. */
  strandedAfterMs?: number;
  /** How often the sweep looks. Default 2 s. */
  sweepEveryMs?: number;
  /** Told of errors of steps that will be tried again (a database down, a gateway timeout). */
  onError?: (error: unknown) => void;
}

/** A running payment worker. */
export interface PaymentWorker {
  url: string;
  store: PaymentStore;
  processor: PaymentProcessor;
  app: FastifyInstance;
  /** Stops taking requests, stops its loops, and closes its pool. */
  close(): Promise<void>;
}

/**
 * Starts the payment worker: the payments API, the callback route retryd settles payments through, and the
 * recovery of what a previous process left (it keeps nothing it needs in memory):
 *
 * - PENDING payments were never sent: sent now;
 * - SENDING ones may have been charged: handed to retryd with their journaled key (a charge that landed is answered
 *   again by the gateway, not repeated);
 * - BACKOFF ones have a task, whose callback retryd sends until the worker answers: each task is read once, and those
 *   that ended (their callback dead-lettered while the worker was away) are settled now;
 * - while it runs, a sweep every 2 s sends or hands off again the PENDING and SENDING payments a failed step left
 *   behind for 10 s (the database restarting mid-step).
 */
export async function startPaymentWorker(config: PaymentWorkerConfig): Promise<PaymentWorker> {
  const stop = new AbortController();
  // Every retry loop in flight listens on it: hundreds at once is expected, not a leak.
  setMaxListeners(10_000, stop.signal);
  const onError = (error: unknown): void => {
    if (!stop.signal.aborted) config.onError?.(error);
  };
  const store = await PaymentStore.open(config.databaseUrl, { ...(config.paymentsSchema === undefined ? {} : { schema: config.paymentsSchema }), onError });
  const enqueuer = createPgEnqueuer({
    schema: config.retrydSchema ?? 'retryd',
    ...(config.allowTargets === undefined ? {} : { allowTargets: config.allowTargets }),
  });
  const processor = new PaymentProcessor({
    store,
    gateway: new HttpPaymentGateway(config.gatewayUrl),
    strategy: mockGatewayStrategy,
    handoff: new RetrydHandoff({ enqueuer, callbackUrl: config.callbackUrl, callbackPolicyId: CALLBACK_POLICY_ID }),
    tasks: new RetrydTasks(config.retrydUrl, stop.signal),
    signal: stop.signal,
  });
  const queue = new WorkQueue(64, onError);
  const app = buildPaymentsApp(store, (paymentId) => queue.push(() => processor.send(paymentId)));
  registerSettlementCallbacks(app, { verify: createWebhookVerifier({ secrets: config.callbackSecret }), settle: (ending) => processor.settle(ending) });

  try {
    for (const payment of await store.withStatus([PaymentStatus.PENDING])) queue.push(() => processor.send(payment.paymentId));
    for (const payment of await store.withStatus([PaymentStatus.SENDING])) queue.push(() => processor.handOff(payment.paymentId));
    const url = await app.listen({ host: '127.0.0.1', port: config.port ?? 0 });
    queue.push(() => processor.reconcileHandedOff().then(() => undefined));

    const strandedAfterMs = config.strandedAfterMs ?? 10_000;
    let sweeping = false;
    const sweep = setInterval(() => {
      if (sweeping) return;
      sweeping = true;
      void processor
        .stranded(strandedAfterMs)
        .then((payments) => {
          for (const p of payments) queue.push(() => (p.status === PaymentStatus.PENDING ? processor.send(p.paymentId) : processor.handOff(p.paymentId)));
        })
        .catch(onError)
        .finally(() => (sweeping = false));
    }, config.sweepEveryMs ?? 2_000);

    return {
      url,
      store,
      processor,
      app,
      async close() {
        stop.abort();
        clearInterval(sweep);
        await app.close();
        await store.close();
      },
    };
  } catch (error) {
    stop.abort();
    await app.close();
    await store.close();
    throw error;
  }
}
