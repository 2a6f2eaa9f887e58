import { setMaxListeners } from 'node:events';
import { HttpPaymentGateway } from '../gateway/http-payment-gateway.js';
import { buildPaymentsApp } from './app-server.js';
import { PaymentProcessor } from './payment-processor.js';
import { PaymentStore } from './payment-store.js';
import { RetrydTasks } from './retryd-tasks.js';
import { mockGatewayStrategy } from './retry-strategy.js';
import { pollSettlements } from './settlement-poller.js';
import { WorkQueue } from './work-queue.js';
import { PaymentStatus } from '../payment/payment-status.js';

// The payment worker as a process: PAYMENTS_DB (its SQLite file), PAYMENTS_PORT (default 0: a free one),
// GATEWAY_URL and RETRYD_URL. Prints {"event":"listening","url":…} once it listens. It may be SIGKILLed at any
// moment: everything it needs to carry on is in PAYMENTS_DB.

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') {
    console.error(`${name} must be set`);
    process.exit(2);
  }
  return value;
}

const store = new PaymentStore(required('PAYMENTS_DB'));
const stop = new AbortController();
// Every retry loop in flight listens on it: hundreds at once is expected, not a leak.
setMaxListeners(10_000, stop.signal);
const gateway = new HttpPaymentGateway(required('GATEWAY_URL'));
const retryd = new RetrydTasks(required('RETRYD_URL'), stop.signal);
const processor = new PaymentProcessor({ store, gateway, strategy: mockGatewayStrategy, retryd, signal: stop.signal });
const logError = (error: unknown): void => {
  if (!stop.signal.aborted) console.error(JSON.stringify({ event: 'error', error: String(error) }));
};
const queue = new WorkQueue(64, logError);

// Recovery: a PENDING payment was never sent; a SENDING one may have been charged, so it goes to retryd with
// its journaled key (a charge that landed is answered again, not repeated). BACKOFF ones are the poller's.
for (const payment of store.withStatus([PaymentStatus.PENDING])) queue.push(() => processor.send(payment.paymentId));
for (const payment of store.withStatus([PaymentStatus.SENDING])) queue.push(() => processor.handOff(payment.paymentId));

const app = buildPaymentsApp(store, (paymentId) => queue.push(() => processor.send(paymentId)));
const url = await app.listen({ host: '127.0.0.1', port: Number(process.env.PAYMENTS_PORT ?? 0) });
console.log(JSON.stringify({ event: 'listening', url }));
const polling = pollSettlements(store, processor, { signal: stop.signal, onError: logError });

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    stop.abort();
    void Promise.allSettled([app.close(), polling]).finally(() => {
      store.close();
      process.exit(0);
    });
  });
}
