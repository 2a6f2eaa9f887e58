import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { derivedKeyId, EncryptionKeyError, parseKeyring } from '../src/secrets/encryption-keys.js';
import { isCredentialHeader, redactHeaders, redactUrlQuery, urlOrigin } from '../src/secrets/redaction.js';
import { openSecret, sealSecret, SecretDecryptionError } from '../src/secrets/secret-cipher.js';
import {
  chainSecretProviders,
  envSecretProvider,
  fileSecretProvider,
  resolveReferences,
  SecretsFileError,
} from '../src/secrets/secret-provider.js';

const keyA = Buffer.alloc(32, 1).toString('base64');
const keyB = Buffer.alloc(32, 2).toString('base64');
const context = { tenantId: 'default', taskId: '0190a1b2-0000-7000-8000-000000000001', purpose: 'header:authorization' };

describe('the secret cipher (AES-256-GCM, key id and associated data)', () => {
  it('round-trips a value, with a fresh IV each time and the key id in the text', () => {
    const ring = parseKeyring(`a:${keyA}`);
    const one = sealSecret(ring, 'Bearer é-s3cret', context);
    const two = sealSecret(ring, 'Bearer é-s3cret', context);
    expect(one).toMatch(/^v1:a:[A-Za-z0-9_-]+$/);
    expect(one).not.toBe(two);
    expect(one).not.toContain('s3cret');
    expect(openSecret(ring, one, context)).toBe('Bearer é-s3cret');
    expect(openSecret(ring, sealSecret(ring, '', context), context)).toBe('');
  });

  it('refuses a value bound to another task, tenant or header', () => {
    const ring = parseKeyring(`a:${keyA}`);
    const sealed = sealSecret(ring, 'Bearer x', context);
    for (const other of [
      { ...context, taskId: '0190a1b2-0000-7000-8000-000000000002' },
      { ...context, tenantId: 'acme' },
      { ...context, purpose: 'header:cookie' },
    ]) {
      expect(() => openSecret(ring, sealed, other)).toThrow(new SecretDecryptionError('the header:cookie secret does not decrypt with key a for this task'.replace('header:cookie', other.purpose)));
    }
  });

  it('names the key id when it is unknown or no key is configured, and refuses damaged text', () => {
    const sealed = sealSecret(parseKeyring(`old:${keyA}`), 'x', context);
    expect(() => openSecret(parseKeyring(`new:${keyB}`), sealed, context)).toThrow(
      'the header:authorization secret is sealed with key old, which RETRYD_ENCRYPTION_KEY does not list',
    );
    expect(() => openSecret(undefined, sealed, context)).toThrow(
      'the header:authorization secret is sealed with key old, but no RETRYD_ENCRYPTION_KEY is configured',
    );
    expect(() => openSecret(parseKeyring(`old:${keyA}`), 'v1:old:AAAA', context)).toThrow('the header:authorization secret is truncated');
    expect(() => openSecret(parseKeyring(`old:${keyA}`), 'plain', context)).toThrow('is not a v1 sealed value');
  });

  it('seals with the first key and opens with any listed one (rotation)', () => {
    const before = parseKeyring(keyA);
    const sealed = sealSecret(before, 'v', context);
    const after = parseKeyring(`2026b:${keyB},${keyA}`);
    expect(after.primary.id).toBe('2026b');
    expect(openSecret(after, sealed, context)).toBe('v');
    expect(sealSecret(after, 'v', context)).toMatch(/^v1:2026b:/);
  });
});

describe('RETRYD_ENCRYPTION_KEY', () => {
  it('takes a bare key (its id derived from it, the same wherever it is listed) or id:key entries', () => {
    const bare = parseKeyring(keyA);
    expect(bare.primary.id).toBe(derivedKeyId(Buffer.alloc(32, 1)));
    expect(bare.primary.id).toMatch(/^k[0-9a-f]{8}$/);
    expect([...parseKeyring(` x:${keyB} , ${keyA} `).byId.keys()]).toEqual(['x', bare.primary.id]);
    // URL-safe base64 too.
    expect(parseKeyring(Buffer.alloc(32, 255).toString('base64url')).primary.key).toEqual(Buffer.alloc(32, 255));
  });

  it.each([
    ['', 'RETRYD_ENCRYPTION_KEY must hold at least one key (base64 of 32 bytes), got an empty value'],
    ['not base64!', 'RETRYD_ENCRYPTION_KEY entry 1 must be base64 of 32 bytes or id:base64'],
    [Buffer.alloc(16).toString('base64'), 'RETRYD_ENCRYPTION_KEY entry 1 must be base64 of 32 bytes, got 16 bytes'],
    [`a:${keyA},b b:${keyB}`, 'RETRYD_ENCRYPTION_KEY entry 2 must have an id of 1 to 32 letters, digits, _ or -'],
    [`a:${keyA},a:${keyB}`, 'RETRYD_ENCRYPTION_KEY entry 2 must have an id of its own; a is given twice'],
  ])('refuses %j with a message naming the variable and the rule', (value, message) => {
    expect(() => parseKeyring(value)).toThrow(new EncryptionKeyError(message));
  });
});

describe('the redaction rule', () => {
  it('counts Authorization, Cookie, Proxy-Authorization and *-Token, *-Key, *-Secret headers as credentials, in any case', () => {
    for (const name of ['Authorization', 'cookie', 'Proxy-Authorization', 'X-Vault-Token', 'Private-Token', 'X-Goog-Api-Key', 'X-Access-Token', 'x-api-key', 'Client-SECRET']) {
      expect(isCredentialHeader(name), name).toBe(true);
    }
    for (const name of ['content-type', 'x-tokens', 'keyword', 'x-request-id', 'secret']) expect(isCredentialHeader(name), name).toBe(false);
  });

  it('shows credential and secret header values as [REDACTED], others as they are', () => {
    expect(
      redactHeaders({ Authorization: 'Bearer x', 'X-Vault-Token': { enc: 'v1:a:b' }, 'X-Custom': { ref: '{{secret:A}}' }, 'x-a': '1' }),
    ).toEqual({ Authorization: '[REDACTED]', 'X-Vault-Token': '[REDACTED]', 'X-Custom': '[REDACTED]', 'x-a': '1' });
  });

  it('shows each query value and a fragment of a URL as REDACTED, and logs only the origin', () => {
    expect(redactUrlQuery('https://h.example.com/hooks/abc?token=s3cret&flag&a=1&a=2#frag')).toBe(
      'https://h.example.com/hooks/abc?token=REDACTED&flag&a=REDACTED&a=REDACTED#REDACTED',
    );
    expect(redactUrlQuery('https://h.example.com:8443/x')).toBe('https://h.example.com:8443/x');
    expect(redactUrlQuery('not a url')).toBe('[REDACTED]');
    expect(urlOrigin('https://hooks.example.com/services/T0/B0/s3cret?x=1')).toBe('https://hooks.example.com');
  });
});

describe('secret providers', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });
  async function file(text: string): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'retryd-secrets-'));
    dirs.push(dir);
    const path = join(dir, 'secrets.json');
    await writeFile(path, text);
    return path;
  }

  it('reads RETRYD_SECRET_<NAME> from the environment, and a JSON file, the first provider that knows a name answering', async () => {
    const env = envSecretProvider({ RETRYD_SECRET_A: 'from-env', RETRYD_SECRET_B: 'env-b' });
    expect(await env.resolve('A')).toBe('from-env');
    expect(await env.resolve('C')).toBeUndefined();
    expect(await env.resolve('../X')).toBeUndefined();
    const chain = chainSecretProviders(fileSecretProvider(await file('{"B": "file-b"}')), env);
    expect(await chain.resolve('B')).toBe('file-b');
    expect(await chain.resolve('A')).toBe('from-env');
    expect(await resolveReferences('Bearer {{secret:A}}/{{secret:B}}', chain)).toEqual({ ok: true, value: 'Bearer from-env/file-b' });
    expect(await resolveReferences('{{secret:A}} {{secret:NOPE}}', chain)).toEqual({ ok: false, name: 'NOPE' });
  });

  it('refuses a secrets file that is missing, not JSON, not an object of names to strings', async () => {
    const missing = join(tmpdir(), 'retryd-no-such-file.json');
    expect(() => fileSecretProvider(missing)).toThrow(
      new SecretsFileError(`--secrets-file must name a readable JSON file of secret names to string values; ${missing} cannot be read (ENOENT)`),
    );
    const bad = await file('{');
    expect(() => fileSecretProvider(bad)).toThrow(`${bad} is not valid JSON`);
    const list = await file('[]');
    expect(() => fileSecretProvider(list)).toThrow(`--secrets-file must name a JSON object of secret names to string values; ${list} holds another JSON value`);
    const badName = await file('{"a-b": "x"}');
    expect(() => fileSecretProvider(badName)).toThrow('--secrets-file must use secret names of 1 to 128 letters, digits or _');
    const notString = await file('{"A": 1}');
    expect(() => fileSecretProvider(notString)).toThrow('--secrets-file must give each secret a string value; A in');
  });
});
