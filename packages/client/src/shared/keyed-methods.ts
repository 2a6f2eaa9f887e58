/**
 * The methods that get a derived `Idempotency-Key` when the caller sent none: POST and PATCH, the two that RFC 9110
 * does not define as idempotent, so a retry of them is only safe when the server can recognise it. GET, HEAD, PUT,
 * DELETE and OPTIONS are idempotent by definition and are retried as they are.
 */
export const DEFAULT_KEYED_METHODS: readonly string[] = Object.freeze(['POST', 'PATCH']);

/** The name of the header that carries the key, as the retryd service and most APIs (Stripe, IETF draft) read it. */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
