import { describe, expect, it } from 'vitest';
import { CredentialRuleError, isCredentialHeader, stripCredentials } from '../src/credentials/strip-credentials.js';

describe('stripCredentials', () => {
  it('knows credential headers by a credential word anywhere in the name, in any letter case, but not retryd\'s own', () => {
    for (const name of ['Authorization', 'cookie', 'Proxy-Authorization', 'X-Api-Key', 'X-Vault-Token', 'Client-Secret']) expect(isCredentialHeader(name), name).toBe(true);
    // The service seals these too: the client hands none of them over nor stores them.
    for (const name of ['apikey', 'X-Authorization', 'Token', 'X-Password', 'X-Session-Id', 'Stripe-Signature', 'X-Credential', 'X-Keyring']) {
      expect(isCredentialHeader(name), name).toBe(true);
    }
    for (const name of ['Idempotency-Key', 'webhook-signature', 'Content-Type', 'Accept']) expect(isCredentialHeader(name), name).toBe(false);
  });

  it('drops a header the wider rule counts, unless notCredentials keeps it', () => {
    expect(stripCredentials({ 'X-Password': 'p', 'X-Session-Id': 's', Accept: 'a' }, { notCredentials: ['x-session-id'] })).toEqual({
      headers: { 'X-Session-Id': 's', Accept: 'a' },
      removed: ['X-Password'],
      referenced: [],
    });
  });

  it('replaces the headers it has a secret for, drops the other credentials and those listed, keeps the rest', () => {
    const stripped = stripCredentials(
      { Authorization: 'Bearer sk_live_1', 'X-Api-Key': 'k', Cookie: 'a=b', 'X-Signature': 's', Accept: 'application/json', 'Idempotency-Key': 'order-1' },
      { secrets: { authorization: 'ORDERS_TOKEN' }, alsoStrip: ['x-signature'] },
    );
    expect(stripped).toEqual({
      headers: { Authorization: '{{secret:ORDERS_TOKEN}}', Accept: 'application/json', 'Idempotency-Key': 'order-1' },
      removed: ['X-Api-Key', 'Cookie', 'X-Signature'],
      referenced: ['Authorization'],
    });
  });

  it('keeps the headers named in notCredentials, in any letter case', () => {
    expect(stripCredentials({ 'X-Partition-Key': 'eu', 'X-Api-Key': 'k' }, { notCredentials: ['x-partition-key'] })).toEqual({
      headers: { 'X-Partition-Key': 'eu' },
      removed: ['X-Api-Key'],
      referenced: [],
    });
  });

  it('refuses a secret name the service could not resolve, naming the option and the rule', () => {
    expect(() => stripCredentials({}, { secrets: { authorization: 'orders-token' } })).toThrow(CredentialRuleError);
    expect(() => stripCredentials({}, { secrets: { authorization: 'orders-token' } })).toThrow(
      'secrets.authorization must be a secret name of 1 to 128 letters, digits or _, got "orders-token"',
    );
  });
});
