/** Why a signed request was refused. */
export const WebhookRefusal = {
  /** A `webhook-id`, `webhook-timestamp` or `webhook-signature` header is absent. */
  MISSING_HEADER: 'WEBHOOK_MISSING_HEADER',
  /** `webhook-timestamp` is not a whole number of seconds. */
  INVALID_TIMESTAMP: 'WEBHOOK_INVALID_TIMESTAMP',
  /** The timestamp is further from now than the tolerance: a replay, or a clock far off. */
  TIMESTAMP_OUT_OF_TOLERANCE: 'WEBHOOK_TIMESTAMP_OUT_OF_TOLERANCE',
  /** No `v1` signature in the header matches the body with any of the secrets. */
  NO_MATCHING_SIGNATURE: 'WEBHOOK_NO_MATCHING_SIGNATURE',
} as const;
export type WebhookRefusal = (typeof WebhookRefusal)[keyof typeof WebhookRefusal];

/** Thrown by a webhook verifier when a request's signature does not hold; answer it with a 4xx and do not act on it. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly code: WebhookRefusal,
    message: string,
  ) {
    super(message);
  }
}
