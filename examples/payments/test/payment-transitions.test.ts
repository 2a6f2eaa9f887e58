import { describe, expect, it } from 'vitest';
import { PaymentEvent, PaymentStatus } from '../src/payment/payment-status.js';
import { IllegalPaymentMoveError, movePayment, PAYMENT_TRANSITIONS } from '../src/payment/payment-transitions.js';

const LEGAL: [PaymentStatus, PaymentEvent, PaymentStatus][] = [
  ['PENDING', 'send', 'SENDING'],
  ['SENDING', 'charged', 'DONE'],
  ['SENDING', 'decline', 'DEAD'],
  ['SENDING', 'back_off', 'BACKOFF'],
  ['BACKOFF', 'send', 'SENDING'],
  ['BACKOFF', 'exhaust', 'DEAD'],
];

describe('the payment state machine', () => {
  it.each(LEGAL)('moves %s on %s to %s', (from, event, to) => {
    expect(movePayment(from, event)).toBe(to);
  });

  it('refuses every other move, naming the status and the event', () => {
    const statuses = Object.values(PaymentStatus);
    const events = Object.values(PaymentEvent);
    let refused = 0;
    for (const status of statuses) {
      for (const event of events) {
        if (LEGAL.some(([f, e]) => f === status && e === event)) continue;
        expect(() => movePayment(status, event)).toThrow(new IllegalPaymentMoveError(status, event));
        refused += 1;
      }
    }
    expect(refused).toBe(statuses.length * events.length - LEGAL.length);
  });

  it('keeps DONE and DEAD final, and charges only from SENDING', () => {
    expect(PAYMENT_TRANSITIONS.DONE).toEqual({});
    expect(PAYMENT_TRANSITIONS.DEAD).toEqual({});
    expect(() => movePayment('BACKOFF', 'charged')).toThrow('cannot apply event "charged" to a payment in status BACKOFF');
    expect(() => movePayment('PENDING', 'charged')).toThrow(IllegalPaymentMoveError);
  });

  it('refuses a status read from a row that is not one', () => {
    expect(() => movePayment('constructor' as PaymentStatus, 'send')).toThrow(IllegalPaymentMoveError);
    expect(() => movePayment('PENDING', 'toString' as PaymentEvent)).toThrow(IllegalPaymentMoveError);
  });
});
