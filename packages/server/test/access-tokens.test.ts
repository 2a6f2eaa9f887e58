import { describe, expect, it } from 'vitest';
import { generateApiKey, hashSecret, parseApiKey, secretMatches } from '../src/access/api-key-token.js';
import { scopeAllows } from '../src/access/api-keys.js';

describe('API key tokens', () => {
  it('makes prefixed keys that parse back into id and secret, all different', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 100; i++) {
      const { keyId, secret, token } = generateApiKey();
      expect(token).toBe(`rtd_${keyId}_${secret}`);
      expect(parseApiKey(token)).toEqual({ keyId, secret });
      seen.add(token);
    }
    expect(seen.size).toBe(100);
  });

  it('refuses anything not shaped like a key before any store read', () => {
    const { token } = generateApiKey();
    for (const bad of ['', 'rtd_', token.slice(1), token.toUpperCase(), `${token}x`, token.replace('_', '-'), `rtd_${'g'.repeat(16)}_${token.slice(21)}`]) {
      expect(parseApiKey(bad), bad).toBeUndefined();
    }
  });

  it('keeps only a hash of the secret and compares it whole', () => {
    const { secret } = generateApiKey();
    const stored = hashSecret(secret);
    expect(stored).toMatch(/^[0-9a-f]{64}$/);
    expect(stored).not.toContain(secret);
    expect(secretMatches(secret, stored)).toBe(true);
    expect(secretMatches(`${secret.slice(0, -1)}x`, stored)).toBe(false);
    expect(secretMatches(secret, stored.slice(0, 62))).toBe(false);
  });

  it('orders scopes: admin allows everything, write allows read, read only read', () => {
    expect(scopeAllows('admin', 'write')).toBe(true);
    expect(scopeAllows('write', 'read')).toBe(true);
    expect(scopeAllows('write', 'admin')).toBe(false);
    expect(scopeAllows('read', 'write')).toBe(false);
  });
});
