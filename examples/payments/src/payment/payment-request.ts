/** A payment as a client asks for it, and as the gateway is asked to charge it (the key travels in a header). */
export interface PaymentRequest {
  /** The client's id of the payment: submitting it again is the same payment. 1 to 128 characters. */
  paymentId: string;
  /** A positive integer number of cents. */
  amountCents: number;
  /** The card number, 12 to 19 digits (a real app sends the gateway's card token). */
  card: string;
}

/**
 * The JSON schema of a {@link PaymentRequest}, for fastify's validation: a request that breaks it answers 400
 * naming the field and the rule (`body/amountCents must be >= 1`). The app's `POST /payments` and the gateway's
 * `POST /charges` both take it.
 */
export const paymentRequestSchema = {
  type: 'object',
  required: ['paymentId', 'amountCents', 'card'],
  additionalProperties: false,
  properties: {
    paymentId: { type: 'string', minLength: 1, maxLength: 128 },
    amountCents: { type: 'integer', minimum: 1 },
    card: { type: 'string', pattern: '^[0-9]{12,19}$' },
  },
} as const;
