import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChild, stopChild, type RunningChild } from '../src/demo/child-process.js';
import { RETRYD_MAIN } from '../src/demo/run-demo.js';
import { HttpPaymentGateway } from '../src/gateway/http-payment-gateway.js';
import { GatewayLedger } from '../src/mock-gateway/gateway-ledger.js';
import { buildGatewayServer } from '../src/mock-gateway/gateway-server.js';
import { PaymentProcessor } from '../src/payments-app/payment-processor.js';
import { PaymentStore } from '../src/payments-app/payment-store.js';
import { RetrydTasks } from '../src/payments-app/retryd-tasks.js';
import { mockGatewayStrategy } from '../src/payments-app/retry-strategy.js';

// The worker's flow against a real retryd service (the built CLI) and a gateway on loopback whose every roll is
// `roll`: each test names the fault it needs.
const dir = mkdtempSync(join(tmpdir(), 'retryd-payments-settle-'));
let service: RunningChild;
const stop = new AbortController();

beforeAll(async () => {
  service = await startChild(
    RETRYD_MAIN,
    ['serve', '--port', '0', '--store', `sqlite:${join(dir, 'retryd.db')}`, '--allow-targets', '127.0.0.1/32', '--attempt-timeout', '1000'],
    {},
  );
});
afterAll(async () => {
  stop.abort();
  await stopChild(service, 'SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

async function withWorld(roll: number, use: (w: { store: PaymentStore; ledger: GatewayLedger; processor: PaymentProcessor }) => Promise<void>) {
  const ledger = new GatewayLedger(join(dir, `gateway-${roll}.db`));
  const gateway = buildGatewayServer({ ledger, random: () => roll });
  const url = await gateway.listen({ host: '127.0.0.1', port: 0 });
  const store = new PaymentStore(join(dir, `payments-${roll}.db`));
  const processor = new PaymentProcessor({
    store,
    gateway: new HttpPaymentGateway(url),
    strategy: mockGatewayStrategy,
    retryd: new RetrydTasks(service.url, stop.signal),
    signal: stop.signal,
  });
  try {
    await use({ store, ledger, processor });
  } finally {
    await gateway.close();
    store.close();
    ledger.close();
  }
}

/** Settles the payment until it is final (retryd's backoff takes a few seconds). */
async function settled(processor: PaymentProcessor, paymentId: string): Promise<void> {
  const deadline = Date.now() + 45_000;
  while (!(await processor.settle(paymentId))) {
    if (Date.now() > deadline) throw new Error(`payment ${paymentId} not settled in time`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('settling a payment handed to retryd', () => {
  it('books DONE a charge whose every answer was lost, though retryd exhausted its task', async () => {
    // Roll 0.17: applied, then the connection is dropped, on every request.
    await withWorld(0.17, async ({ store, ledger, processor }) => {
      await store.accept({ paymentId: 'lost', amountCents: 900, card: '4000000000004242' }, 'key-lost', Date.now());
      await processor.send('lost');
      expect(store.get('lost')).toMatchObject({ status: 'BACKOFF', retryTaskId: expect.any(String) });
      await settled(processor, 'lost');
      const [charge, ...others] = ledger.entries();
      expect(others).toEqual([]);
      // 2 in-process attempts and 6 by retryd, one charge: 7 duplicates answered from the ledger.
      expect(charge).toMatchObject({ outcome: 'charged', replays: 7 });
      expect(store.get('lost')).toMatchObject({ status: 'DONE', chargeId: charge?.chargeId });
      const task = await new RetrydTasks(service.url, stop.signal).get(store.get('lost')?.retryTaskId as string);
      expect(task).toMatchObject({ status: 'EXHAUSTED', deadLetterReason: 'max_attempts', attemptNumber: 6 });
    });
  }, 60_000);

  it('books DEAD with retryd\'s reason a charge that only ever met 503s, and closes its key', async () => {
    await withWorld(0.06, async ({ store, ledger, processor }) => {
      await store.accept({ paymentId: 'busy', amountCents: 900, card: '4000000000004242' }, 'key-busy', Date.now());
      await processor.send('busy');
      await settled(processor, 'busy');
      expect(store.get('busy')?.reason).toMatch(/^exhausted: max_attempts after 6 attempts in retryd/);
      expect(store.get('busy')).toMatchObject({ status: 'DEAD', chargeId: null });
      expect(ledger.entries()).toEqual([expect.objectContaining({ idempotencyKey: 'key-busy', outcome: 'closed' })]);
    });
  }, 60_000);

  it('hands to retryd a payment left SENDING by a failed step, once it is stale, and books its charge', async () => {
    await withWorld(0.9, async ({ store, ledger, processor }) => {
      const long = Date.now() - 60_000;
      await store.accept({ paymentId: 'stranded', amountCents: 700, card: '4000000000004242' }, 'key-stranded', long);
      await store.move('stranded', ['send'], {}, long);
      await store.accept({ paymentId: 'fresh', amountCents: 700, card: '4000000000004242' }, 'key-fresh', Date.now());
      await store.move('fresh', ['send'], {}, Date.now());
      await processor.sweepStranded(10_000);
      expect(store.get('stranded')).toMatchObject({ status: 'BACKOFF', retryTaskId: expect.any(String) });
      expect(store.get('fresh')).toMatchObject({ status: 'SENDING', retryTaskId: null });
      await settled(processor, 'stranded');
      expect(ledger.entries()).toEqual([expect.objectContaining({ idempotencyKey: 'key-stranded', outcome: 'charged' })]);
      expect(store.get('stranded')).toMatchObject({ status: 'DONE', chargeId: ledger.entries()[0]?.chargeId });
    });
  }, 60_000);
});
