import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { derivedKeyId, EncryptionKeyError, parseKeyring } from '../src/secrets/encryption-keys.js';
import { pgEnqueuerSettings } from '../src/pg-enqueue/pg-enqueuer-options.js';
import { parseCredentialHeaderNames } from '../src/secrets/credential-header-names.js';
import { isCredentialHeader, redactHeaders, redactUrlQuery, urlOrigin } from '../src/secrets/redaction.js';
import { scrubSecrets, SentSecrets } from '../src/secrets/scrub-sent-secrets.js';
import { TaskSecrets } from '../src/secrets/task-secrets.js';
import { openSecret, sealSecret, SecretDecryptionError } from '../src/secrets/secret-cipher.js';
import {
  chainSecretProviders,
  envSecretProvider,
  checkSecretVariables,
  fileSecretProvider,
  resolveReferences,
  SecretsFileError,
  unknownSecretRule,
} from '../src/secrets/secret-provider.js';

const keyA = Buffer.alloc(32, 1).toString('base64');
const keyB = Buffer.alloc(32, 2).toString('base64');
/** A name of the `default` tenant's. */
const mine = (name: string) => ({ tenantId: 'default', name });
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
  it('counts every header whose name holds a credential word as a credential, in any case, but for retryd\'s own', () => {
    for (const name of [
      'Authorization',
      'cookie',
      'Proxy-Authorization',
      'X-Vault-Token',
      'Private-Token',
      'X-Goog-Api-Key',
      'X-Access-Token',
      'x-api-key',
      'Client-SECRET',
      // Beyond the names that end in -Token, -Key or -Secret:
      'apikey',
      'X-Authorization',
      'Token',
      'X-Password',
      'passwd',
      'X-Session-Id',
      'Set-Cookie',
      'Stripe-Signature',
      'X-Hub-Signature-256',
      'X-Credentials',
      'Authentication-Info',
      'secret',
      'x-tokens',
    ]) {
      expect(isCredentialHeader(name), name).toBe(true);
    }
    for (const name of ['content-type', 'x-request-id', 'accept', 'Idempotency-Key', 'webhook-signature', 'Webhook-Id', 'webhook-timestamp', 'traceparent']) {
      expect(isCredentialHeader(name), name).toBe(false);
    }
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
    expect(await env.resolve(mine('A'))).toBe('from-env');
    expect(await env.resolve(mine('C'))).toBeUndefined();
    expect(await env.resolve(mine('../X'))).toBeUndefined();
    const chain = chainSecretProviders(fileSecretProvider(await file('{"B": "file-b"}')), env);
    expect(await chain.resolve(mine('B'))).toBe('file-b');
    expect(await chain.resolve(mine('A'))).toBe('from-env');
    expect(await resolveReferences('Bearer {{secret:A}}/{{secret:B}}', 'default', chain)).toEqual({ ok: true, value: 'Bearer from-env/file-b' });
    expect(await resolveReferences('{{secret:A}} {{secret:NOPE}}', 'default', chain)).toEqual({ ok: false, name: 'NOPE' });
  });

  it("resolves a name among the tenant's own secrets and the shared ones, never another tenant's", async () => {
    const env = envSecretProvider({
      RETRYD_SECRET_LEGACY: 'default-only',
      RETRYD_TENANT_SECRET_acme__STRIPE: 'acme-stripe',
      'RETRYD_TENANT_SECRET_eu.shop-1__STRIPE': 'eu-stripe',
      RETRYD_TENANT_SECRET_default__OWN: 'default-own',
      RETRYD_SHARED_SECRET_RELAY: 'shared-relay',
      RETRYD_SHARED_SECRET_STRIPE: 'shared-stripe',
    });
    expect(await env.resolve({ tenantId: 'acme', name: 'STRIPE' })).toBe('acme-stripe');
    expect(await env.resolve({ tenantId: 'eu.shop-1', name: 'STRIPE' })).toBe('eu-stripe');
    // A tenant without its own gets the shared one; the default tenant's variables serve no other tenant.
    expect(await env.resolve({ tenantId: 'globex', name: 'STRIPE' })).toBe('shared-stripe');
    expect(await env.resolve({ tenantId: 'acme', name: 'RELAY' })).toBe('shared-relay');
    expect(await env.resolve({ tenantId: 'acme', name: 'LEGACY' })).toBeUndefined();
    expect(await env.resolve({ tenantId: 'acme', name: 'OWN' })).toBeUndefined();
    expect(await env.resolve(mine('LEGACY'))).toBe('default-only');
    expect(await env.resolve(mine('OWN'))).toBe('default-own');
    expect(await resolveReferences('{{secret:LEGACY}}', 'acme', env)).toEqual({ ok: false, name: 'LEGACY' });

    const sectioned = fileSecretProvider(
      await file(
        JSON.stringify({
          TOP: 'default-top',
          tenants: { acme: { ACME_ONLY: 'acme-file', RELAY: 'acme-relay' }, default: { DEF: 'default-section' } },
          shared: { RELAY: 'shared-file-relay' },
        }),
      ),
    );
    expect(await sectioned.resolve(mine('TOP'))).toBe('default-top');
    expect(await sectioned.resolve(mine('DEF'))).toBe('default-section');
    expect(await sectioned.resolve({ tenantId: 'acme', name: 'ACME_ONLY' })).toBe('acme-file');
    expect(await sectioned.resolve({ tenantId: 'acme', name: 'RELAY' })).toBe('acme-relay');
    expect(await sectioned.resolve({ tenantId: 'globex', name: 'RELAY' })).toBe('shared-file-relay');
    for (const [tenantId, name] of [['globex', 'ACME_ONLY'], ['acme', 'TOP'], ['acme', 'DEF'], ['default', 'ACME_ONLY']] as const) {
      expect(await sectioned.resolve({ tenantId, name }), `${tenantId} ${name}`).toBeUndefined();
    }
  });

  it('answers a foreign name with the same rule as an unknown one', () => {
    expect(unknownSecretRule('acme', 'NOPE')).toBe(
      '{{secret:NOPE}} must name a secret of tenant acme or a shared one (--secrets-file, RETRYD_TENANT_SECRET_acme__NOPE or RETRYD_SHARED_SECRET_NOPE); it is unknown',
    );
    expect(unknownSecretRule('default', 'NOPE')).toBe(
      '{{secret:NOPE}} must name a secret of tenant default or a shared one (--secrets-file, RETRYD_SECRET_NOPE or RETRYD_SHARED_SECRET_NOPE); it is unknown',
    );
  });

  it('refuses a tenant secret variable that does not read as one tenant and one name, and serves none such', async () => {
    expect(() => checkSecretVariables({ RETRYD_TENANT_SECRET_acme__STRIPE: 'x', RETRYD_SHARED_SECRET_A: 'y', RETRYD_SECRET_ANY: 'z' })).not.toThrow();
    expect(() => checkSecretVariables({ RETRYD_TENANT_SECRET_acme: 'x' })).toThrow(
      new SecretsFileError(
        'RETRYD_TENANT_SECRET_acme must be RETRYD_TENANT_SECRET_<TENANT>__<NAME> (TENANT: 1 to 64 of A-Z a-z 0-9 . _ -, starting with a letter or digit; NAME: 1 to 128 letters, digits or _)',
      ),
    );
    expect(() => checkSecretVariables({ RETRYD_TENANT_SECRET_a__b__C: 'x' })).toThrow(
      new SecretsFileError("RETRYD_TENANT_SECRET_a__b__C must name one tenant's secret; it reads as tenant a's b__C and as tenant a__b's C: give it in --secrets-file instead"),
    );
    expect(() => checkSecretVariables({ 'RETRYD_SHARED_SECRET_a-b': 'x' })).toThrow('RETRYD_SHARED_SECRET_a-b must be RETRYD_SHARED_SECRET_<NAME>');
    const env = envSecretProvider({ RETRYD_TENANT_SECRET_a__b__C: 'x' });
    expect(await env.resolve({ tenantId: 'a', name: 'b__C' })).toBeUndefined();
    expect(await env.resolve({ tenantId: 'a__b', name: 'C' })).toBeUndefined();
  });

  it('refuses a secrets file whose sections break the rule', async () => {
    const cases: [string, string][] = [
      ['{"tenants": []}', '--secrets-file must give tenants as an object of tenant ids to their secrets'],
      ['{"tenants": {"-bad": {}}}', '--secrets-file must use tenant ids of 1 to 64 of A-Z a-z 0-9 . _ -, starting with a letter or digit'],
      ['{"tenants": {"acme": "x"}}', '--secrets-file must give tenants.acme as an object of secret names to string values'],
      ['{"tenants": {"acme": {"A": 1}}}', '--secrets-file must give each secret a string value; A in tenants.acme in'],
      ['{"shared": "x"}', '--secrets-file must give shared as an object of secret names to string values'],
      ['{"shared": {"a-b": "x"}}', '--secrets-file must use secret names of 1 to 128 letters, digits or _'],
      ['{"A": "x", "tenants": {"default": {"A": "y"}}}', '--secrets-file must give each secret of a tenant once; A of tenant default is both at the top level and in tenants.default'],
    ];
    for (const [text, message] of cases) {
      const path = await file(text);
      expect(() => fileSecretProvider(path), text).toThrow(message);
    }
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

describe('scrubbing what an attempt sent out of what came back', () => {
  const formsOf = (headers: string[], values: string[] = []) => {
    const sent = new SentSecrets();
    for (const header of headers) sent.addHeader(header);
    for (const value of values) sent.add(value);
    return sent.forms();
  };

  it('replaces a value whole, its parts, and its JSON-escaped and percent-encoded forms', () => {
    const forms = formsOf(['Bearer sk_live_0123456789', 'sid=cookie-abcdefgh; theme=dark'], ['p"q\\r/s t']);
    expect(scrubSecrets('auth: Bearer sk_live_0123456789!', forms)).toBe('auth: [REDACTED]!');
    expect(scrubSecrets('invalid token sk_live_0123456789', forms)).toBe('invalid token [REDACTED]');
    expect(scrubSecrets('{"cookie":"sid=cookie-abcdefgh; theme=dark"} and cookie-abcdefgh', forms)).toBe('{"cookie":"[REDACTED]"} and [REDACTED]');
    // Short parts (a scheme, a cookie's name, `dark`) are words any answer may hold: kept.
    expect(scrubSecrets('Bearer sid theme dark', forms)).toBe('Bearer sid theme dark');
    expect(scrubSecrets(JSON.stringify({ v: 'p"q\\r/s t' }), forms)).toBe('{"v":"[REDACTED]"}');
    expect(scrubSecrets(`?v=${encodeURIComponent('p"q\\r/s t')}`, forms)).toBe('?v=[REDACTED]');
  });

  it('replaces the head of a value the text ends with, as an excerpt cut at 4 KiB leaves it', () => {
    const forms = formsOf([], ['{"card":"4111-1111-1111-1111"}']);
    expect(scrubSecrets('echo: {"card":"4111-11', forms)).toBe('echo: [REDACTED]');
    // Fewer than 8 characters of it: too little to tell from ordinary text.
    expect(scrubSecrets('echo: {"card', forms)).toBe('echo: {"card');
  });

  it('leaves values shorter than 4 characters alone, and a text without secrets as it is', () => {
    const sent = new SentSecrets();
    sent.add('ok');
    sent.addHeader('1');
    expect(sent.size).toBe(0);
    expect(scrubSecrets('ok 1', sent.forms())).toBe('ok 1');
  });
});

describe('credential header names of the operator', () => {
  it('takes header names, comma-separated or listed, and refuses one that is not a header name', () => {
    expect(parseCredentialHeaderNames(' X-Partner-Pin, x-tenant-code ,')).toEqual(['x-partner-pin', 'x-tenant-code']);
    expect(parseCredentialHeaderNames(['X-A'])).toEqual(['x-a']);
    expect(parseCredentialHeaderNames(undefined)).toEqual([]);
    expect(() => parseCredentialHeaderNames('X-Ok,bad name')).toThrow(
      new SecretsFileError('--credential-headers must list header names of token characters (RFC 9110), at most 256 bytes each, separated by commas; got "bad name"'),
    );
  });

  it("seals an operator's names like the built-in ones, in any letter case", async () => {
    const secrets = new TaskSecrets({ keyring: parseKeyring(keyA), credentialHeaders: ['x-partner-pin'] });
    expect(secrets.isCredential('X-PARTNER-PIN')).toBe(true);
    expect(secrets.isCredential('X-Partner-Id')).toBe(false);
    const sealed = await secrets.protect('default', 't1', { headers: { 'X-Partner-Pin': '1234', 'X-Partner-Id': '9' }, secretHeaders: new Set(), body: null, sensitiveBody: false }, '');
    expect(sealed.ok && sealed.value.headers).toMatchObject({ 'X-Partner-Pin': { enc: expect.stringMatching(/^v1:/) as unknown }, 'X-Partner-Id': '9' });
  });
});

describe('enqueue in the caller\'s transaction: the same tenant scoping and names', () => {
  const plain = (headers: Record<string, string>) => ({ headers, secretHeaders: new Set<string>(), body: null, sensitiveBody: false });

  it("resolves references among the enqueuer's tenant's secrets, and reads RETRYD_CREDENTIAL_HEADERS", async () => {
    const env = { RETRYD_SECRET_X: 'default-x', RETRYD_TENANT_SECRET_acme__Y: 'acme-y', RETRYD_CREDENTIAL_HEADERS: 'X-Partner-Pin' };
    const acme = pgEnqueuerSettings({ tenantId: 'acme', env });
    expect(await acme.secrets.protect('acme', 't1', plain({ A: '{{secret:Y}}' }), '')).toMatchObject({ ok: true });
    expect(await acme.secrets.protect('acme', 't1', plain({ A: '{{secret:X}}' }), '')).toMatchObject({
      ok: false,
      errors: [{ field: 'headers.A', rule: unknownSecretRule('acme', 'X') }],
    });
    expect(acme.secrets.isCredential('x-partner-pin')).toBe(true);
    expect(() => pgEnqueuerSettings({ env: { RETRYD_TENANT_SECRET_a__b__C: 'v' } })).toThrow(SecretsFileError);
  });
});

