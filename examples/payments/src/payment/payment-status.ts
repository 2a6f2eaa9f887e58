/**
 * Where a payment stands. Each value equals its key, so a status reads the same in code, in the payments table and
 * in the app's JSON. The moves between them are {@link PAYMENT_TRANSITIONS}.
 *
 * - `PENDING`: accepted and its idempotency key journaled; nothing sent yet.
 * - `SENDING`: a charge with its key may be on the wire (in this process, or in retryd's attempt).
 * - `BACKOFF`: handed to the retryd service, which retries the charge with the same key.
 * - `DONE`: charged exactly once. Final.
 * - `DEAD`: not charged, for a reason (declined, or retries exhausted). Final.
 */
export const PaymentStatus = {
  PENDING: 'PENDING',
  SENDING: 'SENDING',
  BACKOFF: 'BACKOFF',
  DONE: 'DONE',
  DEAD: 'DEAD',
} as const;
export type PaymentStatus = (typeof PaymentStatus)[keyof typeof PaymentStatus];

/**
 * What can happen to a payment.
 *
 * - `send`: a charge is about to go out (first send, or retryd's attempt being accounted for).
 * - `charged`: the gateway answered that the charge is applied.
 * - `decline`: the gateway refused it for good (a declined card): retrying cannot help.
 * - `back_off`: a transient or ambiguous failure; the charge is handed to retryd.
 * - `exhaust`: retryd gave up and the gateway confirms nothing was charged.
 */
export const PaymentEvent = {
  SEND: 'send',
  CHARGED: 'charged',
  DECLINE: 'decline',
  BACK_OFF: 'back_off',
  EXHAUST: 'exhaust',
} as const;
export type PaymentEvent = (typeof PaymentEvent)[keyof typeof PaymentEvent];

/** The statuses a payment ends in. */
export const FINAL_PAYMENT_STATUSES: readonly PaymentStatus[] = Object.freeze([PaymentStatus.DONE, PaymentStatus.DEAD]);

/** Whether a payment in `status` is finished. */
export function isFinalPayment(status: PaymentStatus): boolean {
  return FINAL_PAYMENT_STATUSES.includes(status);
}
