import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { generateApiKey, hashSecret, parseApiKey, secretMatches, storedHashOf } from '../src/access/api-key-token.js';
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
    expect(secretMatches(secret, { scope: 'admin', secretHash: stored })).toBe(true);
    expect(secretMatches(`${secret.slice(0, -1)}x`, { scope: 'admin', secretHash: stored })).toBe(false);
    expect(secretMatches(secret, { scope: 'admin', secretHash: stored.slice(0, 62) })).toBe(false);
  });

  it("keeps a metrics key's hash apart from its secret's, so a version without the metrics scope matches nothing", () => {
    const { secret } = generateApiKey();
    const stored = storedHashOf(secret, 'metrics');
    expect(stored).toBe(createHash('sha256').update(`metrics:${secret}`).digest('hex'));
    expect(stored).not.toBe(hashSecret(secret));
    expect(secretMatches(secret, { scope: 'metrics', secretHash: stored })).toBe(true);
    // What a reader that knows no metrics scope compares: the plain hash of the secret.
    expect(secretMatches(secret, { scope: 'read', secretHash: stored })).toBe(false);
    expect(storedHashOf(secret, 'read')).toBe(hashSecret(secret));
  });

  it('orders the API scopes: admin allows every API scope, write allows read, read only read', () => {
    expect(scopeAllows('admin', 'write')).toBe(true);
    expect(scopeAllows('write', 'read')).toBe(true);
    expect(scopeAllows('write', 'admin')).toBe(false);
    expect(scopeAllows('read', 'write')).toBe(false);
  });

  it('keeps the metrics scope apart: a metrics key allows metrics alone, and no API scope stands in for it', () => {
    for (const needed of ['admin', 'write', 'read'] as const) expect(scopeAllows('metrics', needed), needed).toBe(false);
    expect(scopeAllows('metrics', 'metrics')).toBe(true);
    for (const scope of ['admin', 'write', 'read'] as const) expect(scopeAllows(scope, 'metrics'), scope).toBe(false);
  });
});
