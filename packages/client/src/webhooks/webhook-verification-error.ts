/** Why a signed request was refused. */
export const WebhookRefusal = {
  /** A `webhook-id`, `webhook-timestamp` or `webhook-signature` header is absent. */
  MISSING_HEADER: 'WEBHOOK_MISSING_HEADER',
  /** `webhook-timestamp` is not a whole number of seconds. */
  INVALID_TIMESTAMP: 'WEBHOOK_INVALID_TIMESTAMP',
  /** The timestamp is further from now than the tolerance: a replay, or a clock far off. */
  TIMESTAMP_OUT_OF_TOLERANCE: 'WEBHOOK_TIMESTAMP_OUT_OF_TOLERANCE',
  /**
   * `webhook-signature` holds more `v1` signatures than the verifier compares (8), or is longer than it reads (2,048
   * characters): no sender needs that many, and each would be one more comparison.
   */
  SIGNATURE_HEADER_TOO_LARGE: 'WEBHOOK_SIGNATURE_HEADER_TOO_LARGE',
  /** The body is larger than the verifier's `maxBodyBytes`: refused before any MAC is computed over it. */
  BODY_TOO_LARGE: 'WEBHOOK_BODY_TOO_LARGE',
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
