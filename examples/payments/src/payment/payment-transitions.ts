import { PaymentEvent, PaymentStatus } from './payment-status.js';

/** Each status's legal events and where they lead; an event missing from a row is illegal there. */
export type PaymentTransitionTable = {
  readonly [S in PaymentStatus]: { readonly [E in PaymentEvent]?: PaymentStatus };
};

/**
 * The payment lifecycle, the one place that says which moves are legal (the same shape as `@retryd/core`'s
 * `TASK_TRANSITIONS`). The store applies only what {@link movePayment} returns.
 *
 * ```text
 *   PENDING ── send ──▶ SENDING ── charged ──▶ DONE   (final)
 *                        │  ▲ │
 *              back_off  │  │ └── decline ───▶ DEAD   (final)
 *                        ▼  │ send                ▲
 *                       BACKOFF ──── exhaust ─────┘
 * ```
 *
 * `BACKOFF —send→ SENDING` is retryd's attempt: the app records it when it learns the attempt's outcome, then
 * `charged` or `decline` from SENDING, so every charge is booked from SENDING whichever process made it.
 */
export const PAYMENT_TRANSITIONS: PaymentTransitionTable = Object.freeze({
  [PaymentStatus.PENDING]: Object.freeze({ [PaymentEvent.SEND]: PaymentStatus.SENDING }),
  [PaymentStatus.SENDING]: Object.freeze({
    [PaymentEvent.CHARGED]: PaymentStatus.DONE,
    [PaymentEvent.DECLINE]: PaymentStatus.DEAD,
    [PaymentEvent.BACK_OFF]: PaymentStatus.BACKOFF,
  }),
  [PaymentStatus.BACKOFF]: Object.freeze({
    [PaymentEvent.SEND]: PaymentStatus.SENDING,
    [PaymentEvent.EXHAUST]: PaymentStatus.DEAD,
  }),
  [PaymentStatus.DONE]: Object.freeze({}),
  [PaymentStatus.DEAD]: Object.freeze({}),
});

/**
 * Thrown by {@link movePayment} for a move the lifecycle does not have, e.g. `charged` for a payment that is
 * `DEAD`: a bug or a stale outcome, never something to apply.
 */
export class IllegalPaymentMoveError extends Error {
  override readonly name = 'IllegalPaymentMoveError';
  readonly code = 'ILLEGAL_PAYMENT_MOVE';

  constructor(
    /** The status the payment was in. */
    readonly status: PaymentStatus,
    /** The event that has no move from that status. */
    readonly event: PaymentEvent,
  ) {
    super(`cannot apply event "${event}" to a payment in status ${status}`);
  }
}

/**
 * The status a payment moves to when `event` happens in `status`. Pure.
 *
 * @throws IllegalPaymentMoveError when the table has no such move
 * @example
 * ```ts
 * movePayment('SENDING', 'back_off'); // 'BACKOFF'
 * movePayment('DONE', 'send');        // throws: cannot apply event "send" to a payment in status DONE
 * ```
 */
export function movePayment(status: PaymentStatus, event: PaymentEvent): PaymentStatus {
  // Statuses come from a database row: hasOwn keeps "constructor" and friends from matching Object.prototype.
  const row = Object.hasOwn(PAYMENT_TRANSITIONS, status) ? PAYMENT_TRANSITIONS[status] : undefined;
  const next = row !== undefined && Object.hasOwn(row, event) ? row[event] : undefined;
  if (next === undefined) throw new IllegalPaymentMoveError(status, event);
  return next;
}
