import { isCredentialHeader as coreIsCredentialHeader } from '@retryd/core';

/** Names the service's `{{secret:NAME}}` references accept: letters, digits and `_`, 1 to 128 of them. */
const SECRET_NAME = /^[A-Za-z0-9_]{1,128}$/;

/**
 * Whether a header carries a credential by its name alone: a name holding `auth`, `token`, `key`, `secret`,
 * `password`, `passwd`, `session`, `cookie`, `signature` or `credential`, in any letter case (`Authorization`,
 * `Cookie`, `X-Api-Key`, `apikey`, `X-Password`, `Session-Id`, `Stripe-Signature`): the names the retryd service
 * seals and redacts, one rule in `@retryd/core`. `Idempotency-Key` and the `webhook-*` headers are not: they are
 * retryd's own (the key is what makes a retry safe). Keep a name that only looks like one with `notCredentials`.
 */
export const isCredentialHeader: (name: string) => boolean = coreIsCredentialHeader;

/** What {@link stripCredentials} keeps and replaces. */
export interface CredentialRules {
  /**
   * Headers to send as a `{{secret:NAME}}` reference instead of their value, by header name (any letter case) to the
   * name of a secret the service holds for the client's tenant or shares with every tenant (its `--secrets-file`,
   * `RETRYD_TENANT_SECRET_<TENANT>__<NAME>`, `RETRYD_SECRET_<NAME>` for the `default` tenant), whose value is the
   * header's whole value (`Bearer sk_live_…`). The service resolves the reference at each attempt. Default: none.
   * @example `{ authorization: 'ORDERS_API_TOKEN' }`
   */
  secrets?: Readonly<Record<string, string>>;
  /** More header names to treat as credentials besides {@link isCredentialHeader}'s. Default: none. */
  alsoStrip?: readonly string[];
  /**
   * Header names to keep although {@link isCredentialHeader} takes them for credentials by their name (a
   * `X-Partition-Key` that only routes the call), in any letter case. Default: none.
   */
  notCredentials?: readonly string[];
}

/** The headers as they may be handed to the service, and the names of those removed or replaced. */
export interface StrippedHeaders {
  headers: Record<string, string>;
  /** Headers (as given) whose value was dropped: no secret was named for them. */
  removed: string[];
  /** Headers (as given) whose value is now a `{{secret:NAME}}` reference. */
  referenced: string[];
}

/**
 * A credential handled against the rules (a secret name the service cannot resolve, a header a `RetryQueue` will not
 * store), named with the option and the rule.
 */
export class CredentialRuleError extends Error {
  override readonly name = 'CredentialRuleError';
}

/**
 * Takes every credential out of `headers` before they are handed to the retryd service: a header named in
 * `rules.secrets` becomes `{{secret:NAME}}` (the service puts the secret's value back at dispatch, so the credential is
 * never stored nor sent to it), any other credential header (by {@link isCredentialHeader} or `rules.alsoStrip`) is
 * dropped. The other headers, and those named in `rules.notCredentials`, are kept as they are.
 *
 * @throws CredentialRuleError when a secret name in `rules.secrets` is not 1 to 128 letters, digits or `_`
 * @example
 * ```ts
 * stripCredentials({ authorization: 'Bearer sk_live_1', 'x-api-key': 'k', accept: 'application/json' }, { secrets: { authorization: 'ORDERS_TOKEN' } });
 * // { headers: { authorization: '{{secret:ORDERS_TOKEN}}', accept: 'application/json' }, removed: ['x-api-key'], referenced: ['authorization'] }
 * ```
 */
export function stripCredentials(headers: Readonly<Record<string, string>>, rules: CredentialRules = {}): StrippedHeaders {
  const secrets = new Map<string, string>();
  for (const [header, secret] of Object.entries(rules.secrets ?? {})) {
    if (!SECRET_NAME.test(secret)) {
      throw new CredentialRuleError(`secrets.${header} must be a secret name of 1 to 128 letters, digits or _, got ${JSON.stringify(secret)}`);
    }
    secrets.set(header.toLowerCase(), secret);
  }
  const alsoStrip = new Set((rules.alsoStrip ?? []).map((name) => name.toLowerCase()));
  const notCredentials = new Set((rules.notCredentials ?? []).map((name) => name.toLowerCase()));
  const out: StrippedHeaders = { headers: {}, removed: [], referenced: [] };
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    const secret = secrets.get(lower);
    if (secret !== undefined) {
      out.headers[name] = `{{secret:${secret}}}`;
      out.referenced.push(name);
    } else if ((isCredentialHeader(lower) && !notCredentials.has(lower)) || alsoStrip.has(lower)) {
      out.removed.push(name);
    } else {
      out.headers[name] = value;
    }
  }
  return out;
}
