import type { PaymentRequest } from '../payment/payment-request.js';

/** A charge the payments app asks a gateway for: the payment (the gateway keeps its id beside the charge) and its key. */
export interface ChargeRequest extends PaymentRequest {
  /** Journaled before the first send and the same on every attempt: the gateway charges it at most once. */
  idempotencyKey: string;
}

/**
 * How a charge ended, as far as the caller could tell:
 * - `charged`: applied (on a duplicate key, the original charge is answered again);
 * - `declined`: refused for good (retrying cannot help);
 * - `failed`: a transient refusal that applied nothing (e.g. 503); a lost answer or a timeout is not an outcome
 *   but a thrown error, since the charge may or may not have been applied.
 */
export type ChargeOutcome =
  | { kind: 'charged'; chargeId: string; replayed: boolean }
  | { kind: 'declined'; code: string }
  | { kind: 'failed'; status: number; code: string };

/** What the gateway knows about a key once it is closed: charged, declined, or never charged (now it never will be). */
export type KeySettlement =
  | { state: 'charged'; chargeId: string }
  | { state: 'declined'; code: string }
  | { state: 'closed' };

/** The charge as an HTTP call, for a durable retrier (retryd) to make on the app's behalf. */
export interface ChargeCall {
  url: string;
  method: 'POST';
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/**
 * The port the payments app talks to a payment gateway through. One adapter per gateway; the retry behaviour that
 * fits each gateway lives in its `GatewayRetryStrategy`, not here.
 */
export interface PaymentGateway {
  /** Sends the charge once. Rejects on a network failure or when `signal` aborts (the outcome is then unknown). */
  charge(request: ChargeRequest, signal: AbortSignal): Promise<ChargeOutcome>;
  /** The same charge as an HTTP call (same key), for retryd to retry. */
  chargeCall(request: ChargeRequest): ChargeCall;
  /**
   * Closes a key after the app stopped retrying it: the gateway answers whether it was charged (an attempt whose
   * answer was lost) and refuses any later charge with it, so a straggling attempt cannot land after the app
   * declared the payment dead.
   */
  closeKey(request: ChargeRequest, signal: AbortSignal): Promise<KeySettlement>;
}
