import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TaskStatus } from '@retryd/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../src/demo/own-postgres.js';
import { GatewayLedger } from '../src/mock-gateway/gateway-ledger.js';
import { buildGatewayServer } from '../src/mock-gateway/gateway-server.js';
import { startPaymentWorker, type PaymentWorker } from '../src/payments-app/payment-worker.js';
import { configureRetryd } from '../src/payments-app/retryd-setup.js';
import { CALLBACK_PATH } from '../src/payments-app/settlement-callbacks.js';
import type { Payment } from '../src/payments-app/payment-store.js';
import { retrydGet, signedHeaders, startWorld, type World } from './postgres-world.js';
import { waitFor } from '../../../packages/server/test/wait-for.js';

// The worker's flow against a real retryd service on a PostgreSQL of the test's own, and a gateway on loopback whose
// every roll is `roll`: each test names the fault it needs. The worker runs in process; retryd calls it back.

const dir = mkdtempSync(join(tmpdir(), 'retryd-payments-settle-'));
let world: World;
let schemas = 0;

beforeAll(async () => {
  world = await startWorld();
});
afterAll(async () => {
  await world?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Scene {
  worker: PaymentWorker;
  ledger: GatewayLedger;
  /** Submits a payment as a client does. */
  submit(paymentId: string, amountCents?: number): Promise<void>;
  /** Waits until the payment is DONE or DEAD. */
  final(paymentId: string): Promise<Payment>;
}

/**
 * A gateway whose every roll is `roll`, and a worker (its own schema) whose callbacks retryd signs. `callbackUrl`
 * overrides where retryd calls back (a port nobody listens on: no callback ever arrives).
 */
async function withScene(roll: number, use: (scene: Scene) => Promise<void>, options: { callbackUrl?: string } = {}): Promise<void> {
  const ledger = new GatewayLedger(join(dir, `gateway-${++schemas}.db`));
  const gateway = buildGatewayServer({ ledger, random: () => roll });
  const gatewayUrl = await gateway.listen({ host: '127.0.0.1', port: 0 });
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  await configureRetryd(world.service.url, origin);
  const worker = await startPaymentWorker({
    databaseUrl: world.postgres.url,
    paymentsSchema: `payments_${schemas}`,
    retrydUrl: world.service.url,
    gatewayUrl,
    port,
    callbackUrl: options.callbackUrl ?? `${origin}${CALLBACK_PATH}`,
    callbackSecret: world.callbackSecret,
    allowTargets: '127.0.0.1/32',
    // Payments made 60 s old by a test are stale; the others are not for the length of any test.
    strandedAfterMs: 30_000,
    sweepEveryMs: 100,
  });
  const scene: Scene = {
    worker,
    ledger,
    async submit(paymentId, amountCents = 900) {
      const response = await fetch(`${worker.url}/payments`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ paymentId, amountCents, card: '4000000000004242' }),
      });
      expect(response.status).toBe(202);
    },
    final: (paymentId) =>
      waitFor(
        `payment ${paymentId} to be final`,
        async () => {
          const payment = await worker.store.get(paymentId);
          return (payment?.status === 'DONE' || payment?.status === 'DEAD') && payment;
        },
        45_000,
        50,
      ),
  };
  try {
    await use(scene);
  } finally {
    await worker.close();
    await gateway.close();
    ledger.close();
  }
}

/** Posts a callback to the worker: `event` signed with `secret` (the worker's own by default). */
async function postCallback(worker: PaymentWorker, event: Record<string, unknown>, id: string, secret = world.callbackSecret): Promise<{ status: number; body: unknown }> {
  const body = JSON.stringify(event);
  const response = await fetch(`${worker.url}${CALLBACK_PATH}`, { method: 'POST', headers: signedHeaders(secret, id, body), body });
  return { status: response.status, body: await response.json() };
}

const endedEvent = (payment: Payment, status: TaskStatus, extra: Record<string, unknown> = {}) => ({
  type: 'task.ended',
  taskId: payment.retryTaskId,
  idempotencyKey: payment.idempotencyKey,
  status,
  reason: status === 'EXHAUSTED' ? 'max_attempts' : null,
  attempts: 6,
  endedAt: Date.now(),
  lastResponse: { status: 503, excerpt: '{"code":"unavailable"}' },
  lastError: null,
  ...extra,
});

describe('settling a payment from retryd\'s callback', () => {
  it('books DONE a charge whose every answer was lost, though retryd exhausted its task', async () => {
    // Roll 0.17: applied, then the connection is dropped, on every request.
    await withScene(0.17, async ({ worker, ledger, submit, final }) => {
      await submit('lost');
      const payment = await final('lost');
      const [charge, ...others] = ledger.entries();
      expect(others).toEqual([]);
      // 2 in-process attempts and 6 by retryd, one charge: 7 duplicates answered from the ledger.
      expect(charge).toMatchObject({ outcome: 'charged', replays: 7 });
      expect(payment).toMatchObject({ status: 'DONE', chargeId: charge?.chargeId, retryTaskId: expect.any(String) });
      const task = await retrydGet(world.service, `/retry-tasks/${payment.retryTaskId as string}`);
      expect(task.body).toMatchObject({ status: 'EXHAUSTED', deadLetterReason: 'max_attempts', attemptNumber: 6 });
      expect(await worker.store.movesOf('lost')).toEqual([
        ['PENDING', 'send', 'SENDING'],
        ['SENDING', 'back_off', 'BACKOFF'],
        ['BACKOFF', 'send', 'SENDING'],
        ['SENDING', 'charged', 'DONE'],
      ]);
    });
  }, 60_000);

  it('books DEAD with retryd\'s reason a charge that only ever met 503s, closes its key, and ignores the callback sent again', async () => {
    await withScene(0.06, async ({ worker, ledger, submit, final }) => {
      await submit('busy');
      const payment = await final('busy');
      expect(payment.reason).toMatch(/^exhausted: max_attempts after 6 attempts in retryd \(last: status 503\)$/);
      expect(payment).toMatchObject({ status: 'DEAD', chargeId: null });
      expect(ledger.entries()).toEqual([expect.objectContaining({ idempotencyKey: payment.idempotencyKey, outcome: 'closed' })]);
      // The same callback again (retryd lost the worker's 200, or sent it twice): answered 200, nothing done.
      const again = await postCallback(worker, endedEvent(payment, 'EXHAUSTED'), `retryd-callback:${payment.retryTaskId as string}:9`);
      expect(again).toEqual({ status: 200, body: { outcome: 'duplicate' } });
      expect(await worker.store.get('busy')).toEqual(payment);
      expect((await worker.store.movesOf('busy')).at(-1)).toEqual(['BACKOFF', 'exhaust', 'DEAD']);
      expect(await worker.store.movesOf('busy')).toHaveLength(3);
    });
  }, 60_000);

  it('settles a payment once when the same callback comes twice at once, and refuses unsigned and foreign ones', async () => {
    // Roll 0.9 charges: the payment is handed off by hand here, to a task id retryd never made, so only these
    // callbacks can settle it.
    await withScene(0.9, async ({ worker, ledger }) => {
      const { store } = worker;
      await store.accept({ paymentId: 'twice', amountCents: 700, card: '4000000000004242' }, 'key-twice', Date.now());
      await store.move('twice', ['send'], {}, Date.now());
      const handed = (await store.handOff('twice', async () => ({ taskId: 'task-twice' }), Date.now())) as Payment;
      const event = endedEvent(handed, 'EXHAUSTED');

      const forged = await postCallback(worker, event, 'retryd-callback:task-twice:3', 'whsec_' + Buffer.alloc(32, 1).toString('base64'));
      expect(forged.status).toBe(401);
      const unsigned = await fetch(`${worker.url}${CALLBACK_PATH}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(event) });
      expect(unsigned.status).toBe(401);
      const foreign = await postCallback(worker, { ...event, taskId: 'another-task' }, 'retryd-callback:another-task:3');
      expect(foreign.status).toBe(409);
      const unknown = await postCallback(worker, { ...event, idempotencyKey: 'nobody' }, 'retryd-callback:task-twice:3');
      expect(unknown.status).toBe(404);
      expect(await store.get('twice')).toMatchObject({ status: 'BACKOFF' });

      const answers = await Promise.all([1, 2].map(() => postCallback(worker, event, 'retryd-callback:task-twice:3')));
      expect(answers.map((a) => a.status)).toEqual([200, 200]);
      expect(answers.map((a) => (a.body as { outcome: string }).outcome).sort()).toEqual(['duplicate', 'settled']);
      // The gateway had no charge for the key: closed once, booked DEAD once.
      expect(ledger.entries()).toEqual([expect.objectContaining({ idempotencyKey: 'key-twice', outcome: 'closed' })]);
      expect(await store.get('twice')).toMatchObject({ status: 'DEAD', reason: 'exhausted: max_attempts after 6 attempts in retryd (last: status 503)' });
      expect((await store.movesOf('twice')).filter(([, e]) => e === 'exhaust')).toHaveLength(1);
    });
  }, 60_000);
});

describe('recovery without polling', () => {
  it('settles at start-up a payment whose task ended while its callback could not be delivered', async () => {
    // Callbacks go to a port nobody listens on: retryd keeps retrying them; the worker's start-up pass reads the task once.
    const nowhere = `http://127.0.0.1:${await freePort()}${CALLBACK_PATH}`;
    await withScene(0.9, async ({ worker }) => {
      const { store } = worker;
      await store.accept({ paymentId: 'quiet', amountCents: 800, card: '4000000000004242' }, 'key-quiet', Date.now());
      await store.move('quiet', ['send'], {}, Date.now());
      // Handed off as after a crash mid-send: retryd charges it at its first attempt.
      await worker.processor.handOff('quiet');
      const { retryTaskId } = (await store.get('quiet')) as Payment;
      await waitFor(
        'the task to succeed',
        async () => (await retrydGet(world.service, `/retry-tasks/${retryTaskId as string}`)).body.status === 'SUCCEEDED',
        45_000,
        50,
      );
      expect(await store.get('quiet')).toMatchObject({ status: 'BACKOFF' });
      expect(await worker.processor.reconcileHandedOff()).toBe(1);
      expect(await store.get('quiet')).toMatchObject({ status: 'DONE', chargeId: expect.any(String) });
      expect(await worker.processor.reconcileHandedOff()).toBe(0);
    }, { callbackUrl: nowhere });
  }, 60_000);

  it('goes on past a payment whose task it cannot read, and says which failed', async () => {
    const nowhere = `http://127.0.0.1:${await freePort()}${CALLBACK_PATH}`;
    await withScene(0.9, async ({ worker }) => {
      const { store } = worker;
      // First in the pass: a task retryd does not know (404), then a payment whose task has ended.
      await store.accept({ paymentId: 'ghost', amountCents: 800, card: '4000000000004242' }, 'key-ghost', Date.now() - 1);
      await store.move('ghost', ['send'], {}, Date.now());
      await store.handOff('ghost', async () => ({ taskId: '01900000-0000-7000-8000-000000000000' }), Date.now());
      await store.accept({ paymentId: 'ended', amountCents: 800, card: '4000000000004242' }, 'key-ended', Date.now());
      await store.move('ended', ['send'], {}, Date.now());
      await worker.processor.handOff('ended');
      const { retryTaskId } = (await store.get('ended')) as Payment;
      await waitFor(
        'the task to succeed',
        async () => (await retrydGet(world.service, `/retry-tasks/${retryTaskId as string}`)).body.status === 'SUCCEEDED',
        45_000,
        50,
      );
      await expect(worker.processor.reconcileHandedOff()).rejects.toThrow('the start-up pass could not settle 1 BACKOFF payment(s)');
      expect(await store.get('ended')).toMatchObject({ status: 'DONE' });
      expect(await store.get('ghost')).toMatchObject({ status: 'BACKOFF' });
    }, { callbackUrl: nowhere });
  }, 60_000);

  it('sends or hands off again the payments a failed step left PENDING or SENDING, once they are stale', async () => {
    await withScene(0.9, async ({ worker, ledger, final }) => {
      const { store } = worker;
      const long = Date.now() - 60_000;
      await store.accept({ paymentId: 'pending', amountCents: 700, card: '4000000000004242' }, 'key-pending', long);
      await store.accept({ paymentId: 'sending', amountCents: 700, card: '4000000000004242' }, 'key-sending', long);
      await store.move('sending', ['send'], {}, long);
      await store.accept({ paymentId: 'fresh', amountCents: 700, card: '4000000000004242' }, 'key-fresh', Date.now());
      await store.move('fresh', ['send'], {}, Date.now());
      expect(await final('pending')).toMatchObject({ status: 'DONE', retryTaskId: null });
      const sending = await final('sending');
      expect(sending).toMatchObject({ status: 'DONE', retryTaskId: expect.any(String) });
      expect(await store.get('fresh')).toMatchObject({ status: 'SENDING', retryTaskId: null });
      expect(ledger.entries().map((e) => [e.idempotencyKey, e.outcome]).sort()).toEqual([
        ['key-pending', 'charged'],
        ['key-sending', 'charged'],
      ]);
    });
  }, 60_000);
});
