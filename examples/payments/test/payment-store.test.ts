import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { IllegalPaymentMoveError } from '../src/payment/payment-transitions.js';
import { PaymentStore } from '../src/payments-app/payment-store.js';

const dir = mkdtempSync(join(tmpdir(), 'retryd-payments-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshFile = (): string => join(dir, `payments-${++files}.db`);
const request = { paymentId: 'p1', amountCents: 4_200, card: '4000000000004242' };

describe('the payment store', () => {
  it('journals a payment with its key once: the same request again is the same payment, another one a conflict', async () => {
    const store = new PaymentStore(freshFile());
    try {
      const created = await store.accept(request, 'key-1', 1);
      expect(created).toMatchObject({ kind: 'created', payment: { status: 'PENDING', idempotencyKey: 'key-1' } });
      expect(await store.accept(request, 'key-2', 2)).toMatchObject({ kind: 'existing', payment: { idempotencyKey: 'key-1' } });
      expect(await store.accept({ ...request, amountCents: 1 }, 'key-3', 3)).toMatchObject({ kind: 'conflict' });
    } finally {
      store.close();
    }
  });

  it('applies the moves of a lifecycle and keeps them, with the key, across a reopen', async () => {
    const file = freshFile();
    const store = new PaymentStore(file);
    await store.accept(request, 'key-1', 1);
    await store.move('p1', ['send'], {}, 2);
    await store.move('p1', ['back_off'], { retryTaskId: 'task-1' }, 3);
    store.close();
    const reopened = new PaymentStore(file);
    try {
      expect(reopened.withStatus(['BACKOFF'])).toEqual([expect.objectContaining({ paymentId: 'p1', idempotencyKey: 'key-1', retryTaskId: 'task-1' })]);
      const done = await reopened.move('p1', ['send', 'charged'], { chargeId: 'ch_1' }, 4);
      expect(done).toMatchObject({ status: 'DONE', chargeId: 'ch_1', retryTaskId: 'task-1', updatedAt: 4 });
      expect(reopened.counts()).toEqual({ DONE: 1 });
    } finally {
      reopened.close();
    }
  });

  it('refuses an illegal move and writes nothing of it, while the writes committed with it stand', async () => {
    const store = new PaymentStore(freshFile());
    try {
      await store.accept(request, 'key-1', 1);
      await store.accept({ ...request, paymentId: 'p2' }, 'key-2', 1);
      // Queued in the same turn, so they share one commit: the illegal one rolls back alone.
      const [legal, illegal] = await Promise.allSettled([
        store.move('p2', ['send'], {}, 2),
        store.move('p1', ['send', 'back_off', 'charged'], { chargeId: 'ch_bogus' }, 2),
      ]);
      expect(legal).toMatchObject({ status: 'fulfilled', value: { status: 'SENDING' } });
      expect(illegal).toMatchObject({ status: 'rejected', reason: new IllegalPaymentMoveError('BACKOFF', 'charged') });
      expect(store.get('p1')).toMatchObject({ status: 'PENDING', chargeId: null, updatedAt: 1 });
      await expect(store.move('p2', ['charged', 'send'], {}, 3)).rejects.toThrow('cannot apply event "send" to a payment in status DONE');
      expect(store.get('p2')).toMatchObject({ status: 'SENDING' });
    } finally {
      store.close();
    }
  });
});
