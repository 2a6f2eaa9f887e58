import { describe, expect, it } from 'vitest';
import { auditLedgers, formatAudit } from '../src/demo/ledger-audit.js';
import type { LedgerEntry } from '../src/mock-gateway/gateway-ledger.js';
import type { Payment } from '../src/payments-app/payment-store.js';
import type { PaymentStatus } from '../src/payment/payment-status.js';

const payment = (id: string, status: PaymentStatus, extra: Partial<Payment> = {}): Payment => ({
  paymentId: id,
  amountCents: 500,
  card: '4000000000004242',
  idempotencyKey: `key-${id}`,
  status,
  reason: null,
  chargeId: null,
  retryTaskId: null,
  createdAt: 0,
  updatedAt: 0,
  ...extra,
});
const charge = (id: string, chargeId: string, extra: Partial<LedgerEntry> = {}): LedgerEntry => ({
  idempotencyKey: `key-${id}`,
  paymentId: id,
  amountCents: 500,
  outcome: 'charged',
  chargeId,
  declineCode: null,
  replays: 0,
  ...extra,
});

describe('the ledger audit', () => {
  it('passes when every charge is booked once and every payment is final with a reason', () => {
    const report = auditLedgers({
      submitted: ['a', 'b', 'c', 'd'],
      payments: [
        payment('a', 'DONE', { chargeId: 'ch_a' }),
        payment('b', 'DEAD', { reason: 'declined: card_declined' }),
        payment('c', 'DEAD', { reason: 'exhausted: max_attempts after 6 attempts in retryd (last: status 503)', retryTaskId: 't-c' }),
        payment('d', 'DONE', { chargeId: 'ch_d', retryTaskId: 't-d' }),
      ],
      ledger: [
        charge('a', 'ch_a', { replays: 2 }),
        { ...charge('b', 'x'), outcome: 'declined', chargeId: null, declineCode: 'card_declined' },
        charge('d', 'ch_d'),
      ],
      // d's last attempt was charged but lost its answer: retryd dead-lettered it, closing the key found the charge.
      retrydDeadLetters: ['t-c', 't-d'],
      // A callback retryd gave up on is counted, not a violation: the worker's start-up pass settles its payment.
      callbackDeadLetters: 1,
    });
    expect(report).toMatchObject({ ok: true, done: 2, dead: 2, charges: 2, duplicatesAbsorbed: 2 });
    expect(report).toMatchObject({ handedToRetryd: 2, retrydDeadLetters: 2, deadLettersCharged: 1, callbackDeadLetters: 1 });
    expect(formatAudit(report)).toContain(`${'callbacks dead-lettered'.padEnd(32)}${'1'.padStart(6)}`);
    expect(report.deadByReason).toEqual({ 'declined: card_declined': 1, 'exhausted: max_attempts': 1 });
    expect(formatAudit(report).at(-1)).toBe('AUDIT PASSED');
  });

  it('finds a double charge, a lost payment, an unbooked charge, a booking without charge, a live payment and a reasonless death', () => {
    const report = auditLedgers({
      submitted: ['double', 'lost', 'unbooked', 'phantom', 'live', 'mute', 'forgotten'],
      payments: [
        payment('double', 'DONE', { chargeId: 'ch_1' }),
        payment('unbooked', 'DEAD', { reason: 'exhausted: budget' }),
        payment('phantom', 'DONE', { chargeId: 'ch_never' }),
        payment('live', 'BACKOFF'),
        payment('mute', 'DEAD'),
        payment('forgotten', 'DEAD', { reason: 'exhausted: max_attempts', retryTaskId: 't-forgotten' }),
      ],
      ledger: [charge('double', 'ch_1'), { ...charge('double', 'ch_2'), idempotencyKey: 'another-key' }, charge('unbooked', 'ch_3')],
      retrydDeadLetters: [],
    });
    expect(report.ok).toBe(false);
    expect(report.violations).toEqual({
      doubleCharges: ['double'],
      lost: ['lost'],
      chargedNotDone: ['unbooked'],
      doneNotCharged: ['phantom'],
      notFinal: ['live'],
      deadWithoutReason: ['mute'],
      deadNotDeadLettered: ['forgotten'],
    });
    expect(formatAudit(report).at(-1)).toBe('AUDIT FAILED');
  });

  it('counts a booking whose amount differs from the charge as not charged', () => {
    const report = auditLedgers({
      submitted: ['a'],
      payments: [payment('a', 'DONE', { chargeId: 'ch_a' })],
      ledger: [charge('a', 'ch_a', { amountCents: 501 })],
      retrydDeadLetters: [],
    });
    expect(report.violations.doneNotCharged).toEqual(['a']);
  });
});
