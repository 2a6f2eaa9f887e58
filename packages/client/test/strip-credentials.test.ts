import { describe, expect, it } from 'vitest';
import { CredentialRuleError, isCredentialHeader, stripCredentials } from '../src/credentials/strip-credentials.js';

describe('stripCredentials', () => {
  it('knows credential headers by name, in any letter case, but not the idempotency key', () => {
    for (const name of ['Authorization', 'cookie', 'Proxy-Authorization', 'X-Api-Key', 'X-Vault-Token', 'Client-Secret']) expect(isCredentialHeader(name), name).toBe(true);
    for (const name of ['Idempotency-Key', 'Content-Type', 'X-Keyring', 'Accept']) expect(isCredentialHeader(name), name).toBe(false);
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
