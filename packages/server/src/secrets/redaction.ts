import { isCredentialHeader as coreIsCredentialHeader } from '@retryd/core';
import { isSecretHeaderValue, type StoredHeaders } from '../domain/header-value.js';
import { targetKeyOf } from '../domain/target-key.js';

/** The placeholder shown instead of a secret: a credential header's value, a sensitive body. */
export const REDACTED = '[REDACTED]';

/** What replaces each query value (and the fragment) of a URL shown for information. */
export const REDACTED_QUERY_VALUE = 'REDACTED';

/**
 * Whether a header's value is a credential by its name alone: a name holding `auth`, `token`, `key`, `secret`,
 * `password`, `passwd`, `session`, `cookie`, `signature` or `credential`, in any letter case (`Authorization`,
 * `apikey`, `X-Vault-Token`, `X-Password`, `Session-Id`), but for retryd's own `Idempotency-Key` and `webhook-*`
 * headers: the one rule of `@retryd/core`, which `@retryd/client` follows too. A task may mark more (`secretHeaders`),
 * and so may an operator (`--credential-headers`).
 */
export const isCredentialHeader: (name: string) => boolean = coreIsCredentialHeader;

/**
 * Copies stored headers with every secret shown as {@link REDACTED}: credential names (whatever their stored form) and
 * every sealed or referenced value (a header the task marked secret).
 */
export function redactHeaders(headers: StoredHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    out[name] = isSecretHeaderValue(value) || isCredentialHeader(name) ? REDACTED : value;
  }
  return out;
}

/**
 * A URL as shown for information (API answers): scheme, host, port and path as they are; each query parameter's value
 * replaced by `REDACTED` (names kept, so `?token=abc&page=2` shows `?token=REDACTED&page=REDACTED`); a fragment shown as
 * `#REDACTED`. A text that is not a URL is shown as `[REDACTED]`.
 */
export function redactUrlQuery(raw: string): string {
  // A stored URL is already normalised (`URL.href`): without a query or a fragment it is shown as it is, unparsed.
  if (!raw.includes('?') && !raw.includes('#') && URL.canParse(raw)) return raw;
  if (!URL.canParse(raw)) return REDACTED;
  const url = new URL(raw);
  const query =
    url.search.length <= 1
      ? ''
      : `?${url.search
          .slice(1)
          .split('&')
          .map((pair) => {
            const eq = pair.indexOf('=');
            return eq < 0 ? pair : `${pair.slice(0, eq)}=${REDACTED_QUERY_VALUE}`;
          })
          .join('&')}`;
  const fragment = url.hash.length <= 1 ? '' : `#${REDACTED_QUERY_VALUE}`;
  return `${url.origin}${url.pathname}${query}${fragment}`;
}

/** A URL as logs show it: its origin alone (`https://hooks.example.com`), since paths and queries often carry tokens. */
export function urlOrigin(raw: string): string {
  // The target key, not `URL.origin`: that is "null" for a grpc:// URL.
  return URL.canParse(raw) ? targetKeyOf(raw) : REDACTED;
}
