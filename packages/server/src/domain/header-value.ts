/**
 * A header value kept as a secret: `enc`, the written value sealed with the service's encryption key (see
 * secrets/secret-cipher.ts: `v1:<key id>:<base64url>`); or `ref`, a value holding `{{secret:NAME}}` references, kept as
 * written (names are not secrets) and resolved at dispatch.
 */
export type SecretHeaderValue = { readonly enc: string } | { readonly ref: string };

/** A header value as stored: a plain string, sent as is, or a secret revealed only at dispatch. */
export type StoredHeaderValue = string | SecretHeaderValue;

/** A task's headers as stored. */
export type StoredHeaders = Record<string, StoredHeaderValue>;

/** Whether a stored header value is a secret (sealed or a reference), not a plain string. */
export function isSecretHeaderValue(value: StoredHeaderValue): value is SecretHeaderValue {
  return typeof value === 'object';
}
