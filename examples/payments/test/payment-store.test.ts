import { createPgEnqueuer } from '@retryd/server/pg';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpPaymentGateway } from '../src/gateway/http-payment-gateway.js';
import { IllegalPaymentMoveError } from '../src/payment/payment-transitions.js';
import { PaymentStore, type EnqueueInTransaction } from '../src/payments-app/payment-store.js';
import { RetrydHandoff } from '../src/payments-app/retryd-handoff.js';
import { CALLBACK_POLICY_ID, configureRetryd } from '../src/payments-app/retryd-setup.js';
import { mockGatewayStrategy } from '../src/payments-app/retry-strategy.js';
import { retrydGet, startWorld, type World } from './postgres-world.js';

// The payments journal on PostgreSQL, and the hand-off: the payment's move to BACKOFF and its retryd task in one
// transaction, on a real retryd schema (a service runs on it; nothing here calls a target).

let world: World;
let schemas = 0;
const stores: PaymentStore[] = [];
const request = { paymentId: 'p1', amountCents: 4_200, card: '4000000000004242' };

beforeAll(async () => {
  world = await startWorld();
  await configureRetryd(world.service.url, 'http://127.0.0.1:9');
});
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await world?.close();
});

async function freshStore(schema = `payments_${++schemas}`): Promise<PaymentStore> {
  const store = await PaymentStore.open(world.postgres.url, { schema, poolSize: 4 });
  stores.push(store);
  return store;
}

/** The hand-off as the worker makes it: the charge to the gateway (nothing listens on port 9: nothing is called here). */
function chargeEnqueue(): EnqueueInTransaction {
  const handoff = new RetrydHandoff({
    enqueuer: createPgEnqueuer({ schema: 'retryd', allowTargets: '127.0.0.1/32' }),
    callbackUrl: 'http://127.0.0.1:9/retryd/task-ended',
    callbackPolicyId: CALLBACK_POLICY_ID,
  });
  const gateway = new HttpPaymentGateway('http://127.0.0.1:9');
  return (client, payment) => handoff.enqueue(client, gateway.chargeCall(payment), payment.idempotencyKey, mockGatewayStrategy.durablePolicy);
}

/** The retryd tasks whose idempotency key is `key`, as the service lists them. */
async function tasksWithKey(key: string): Promise<Record<string, unknown>[]> {
  const found = await retrydGet(world.service, `/retry-tasks?idempotencyKey=${encodeURIComponent(key)}`);
  expect(found.status).toBe(200);
  return found.body.items as Record<string, unknown>[];
}

describe('the payment store', () => {
  it('journals a payment with its key once: the same request again is the same payment, another one a conflict', async () => {
    const store = await freshStore();
    const created = await store.accept(request, 'key-1', 1);
    expect(created).toMatchObject({ kind: 'created', payment: { status: 'PENDING', idempotencyKey: 'key-1', createdAt: 1 } });
    expect(await store.accept(request, 'key-2', 2)).toMatchObject({ kind: 'existing', payment: { idempotencyKey: 'key-1' } });
    expect(await store.accept({ ...request, amountCents: 1 }, 'key-3', 3)).toMatchObject({ kind: 'conflict' });
  });

  it('applies the moves of a lifecycle and keeps them, with the key, across a reopen', async () => {
    const store = await freshStore('payments_reopen');
    await store.accept(request, 'key-1', 1);
    await store.move('p1', ['send'], {}, 2);
    await store.handOff('p1', async () => ({ taskId: 'task-1' }), 3);
    const reopened = await freshStore('payments_reopen');
    expect(await reopened.withStatus(['BACKOFF'])).toEqual([expect.objectContaining({ paymentId: 'p1', idempotencyKey: 'key-1', retryTaskId: 'task-1' })]);
    const done = await reopened.move('p1', ['send', 'charged'], { chargeId: 'ch_1' }, 4);
    expect(done).toMatchObject({ status: 'DONE', chargeId: 'ch_1', retryTaskId: 'task-1', updatedAt: 4 });
    expect(await reopened.counts()).toEqual({ DONE: 1 });
    expect(await reopened.movesOf('p1')).toEqual([
      ['PENDING', 'send', 'SENDING'],
      ['SENDING', 'back_off', 'BACKOFF'],
      ['BACKOFF', 'send', 'SENDING'],
      ['SENDING', 'charged', 'DONE'],
    ]);
  });

  it('refuses an illegal move and writes nothing of it', async () => {
    const store = await freshStore();
    await store.accept(request, 'key-1', 1);
    await expect(store.move('p1', ['send', 'back_off', 'charged'], { chargeId: 'ch_bogus' }, 2)).rejects.toEqual(new IllegalPaymentMoveError('BACKOFF', 'charged'));
    expect(await store.get('p1')).toMatchObject({ status: 'PENDING', chargeId: null, updatedAt: 1 });
    expect(await store.movesOf('p1')).toEqual([]);
  });
});

describe('the hand-off to retryd', () => {
  it('commits the move to BACKOFF and the retryd task together', async () => {
    const store = await freshStore();
    await store.accept(request, 'key-commit', 1);
    await store.move('p1', ['send'], {}, 2);
    const handed = await store.handOff('p1', chargeEnqueue(), 3);
    expect(handed).toMatchObject({ status: 'BACKOFF', retryTaskId: expect.any(String) });
    const [task, ...others] = await tasksWithKey('key-commit');
    expect(others).toEqual([]);
    expect(task).toMatchObject({
      taskId: handed?.retryTaskId,
      targetUrl: 'http://127.0.0.1:9/charges',
      callback: { url: 'http://127.0.0.1:9/retryd/task-ended', on: ['succeeded', 'failed', 'cancelled'], policyId: CALLBACK_POLICY_ID },
    });
    // A payment that is not SENDING is not handed off again, and no enqueue is tried.
    expect(await store.handOff('p1', () => Promise.reject(new Error('not called')), 4)).toBeUndefined();
  });

  it('leaves neither the task nor the move when the transaction fails after the enqueue', async () => {
    const store = await freshStore();
    await store.accept(request, 'key-rollback', 1);
    await store.move('p1', ['send'], {}, 2);
    const enqueue = chargeEnqueue();
    let enqueued: string | undefined;
    await expect(
      store.handOff('p1', async (client, payment) => {
        enqueued = (await enqueue(client, payment)).taskId;
        throw new Error('the step after the enqueue failed');
      }, 3),
    ).rejects.toThrow('the step after the enqueue failed');
    expect(enqueued).toEqual(expect.any(String));
    expect(await tasksWithKey('key-rollback')).toEqual([]);
    expect(await store.get('p1')).toMatchObject({ status: 'SENDING', retryTaskId: null, updatedAt: 2 });
    expect(await store.movesOf('p1')).toEqual([['PENDING', 'send', 'SENDING']]);
  });

  it('leaves neither when its connection dies before the commit, and hands off whole the next time', async () => {
    const store = await freshStore();
    await store.accept(request, 'key-killed', 1);
    await store.move('p1', ['send'], {}, 2);
    const enqueue = chargeEnqueue();
    const admin = new pg.Client({ connectionString: world.postgres.url });
    await admin.connect();
    try {
      // As a worker killed mid-transaction: the server ends the hand-off's backend right after the task is written.
      await expect(
        store.handOff('p1', async (client, payment) => {
          const made = await enqueue(client, payment);
          const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
          await admin.query('SELECT pg_terminate_backend($1)', [pid]);
          return made;
        }, 3),
      ).rejects.toThrow();
    } finally {
      await admin.end();
    }
    expect(await tasksWithKey('key-killed')).toEqual([]);
    expect(await store.get('p1')).toMatchObject({ status: 'SENDING', retryTaskId: null });
    const handed = await store.handOff('p1', enqueue, 4);
    expect((await tasksWithKey('key-killed')).map((t) => t.taskId)).toEqual([handed?.retryTaskId]);
  });
});
