/**
 * The words that make a header name a credential's, wherever they stand in it and in any letter case: `Authorization`,
 * `X-Auth-Token`, `apikey`, `X-Password`, `Session-Id`, `Cookie`, `Stripe-Signature`, `X-Credential`.
 */
export const CREDENTIAL_HEADER_WORDS = ['auth', 'token', 'key', 'secret', 'password', 'passwd', 'session', 'cookie', 'signature', 'credential'] as const;

const CREDENTIAL_WORD = new RegExp(CREDENTIAL_HEADER_WORDS.join('|'), 'i');

/**
 * Headers retryd sets itself on every attempt, or on every signed one, whose names hold a credential word but whose
 * values are not a caller's secret: `Idempotency-Key` is the task's key (shown as `idempotencyKey`, and what makes a
 * retry safe); `Webhook-Signature` is retryd's own Standard Webhooks signature, made at each attempt from a secret it
 * never sends (a task's own is replaced when its target signs).
 */
export const RETRYD_OWN_HEADERS: ReadonlySet<string> = new Set(['idempotency-key', 'webhook-id', 'webhook-timestamp', 'webhook-signature']);

/**
 * Whether a header carries a credential by its name alone: a name holding one of {@link CREDENTIAL_HEADER_WORDS}
 * (`Authorization`, `Proxy-Authorization`, `X-Authorization`, `Cookie`, `apikey`, `X-Api-Key`, `Token`,
 * `X-Vault-Token`, `Client-Secret`, `X-Password`, `Session-Id`, `X-Hub-Signature-256`, `X-Credentials`), in any letter
 * case, unless it is one of retryd's own ({@link RETRYD_OWN_HEADERS}: `Idempotency-Key`, `Webhook-Signature`). The
 * retryd service seals such a header before it stores a task and shows it redacted; `@retryd/client` keeps it out of
 * what it stores and hands over. Both take more names besides (a task's `secretHeaders`, an operator's
 * `--credential-header`, the client's `alsoStrip`).
 * @example
 * isCredentialHeader('X-Auth-Token'); // true
 * isCredentialHeader('Idempotency-Key'); // false
 * isCredentialHeader('Accept'); // false
 */
export function isCredentialHeader(name: string): boolean {
  return CREDENTIAL_WORD.test(name) && !RETRYD_OWN_HEADERS.has(name.toLowerCase());
}
