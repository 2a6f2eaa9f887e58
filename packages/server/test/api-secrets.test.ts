import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSecret } from '../src/secrets/secret-cipher.js';
import { envSecretProvider } from '../src/secrets/secret-provider.js';
import { TaskSecrets } from '../src/secrets/task-secrets.js';
import { startApi, TEST_KEYRING, type ApiHarness } from './api-harness.js';

const provider = envSecretProvider({ RETRYD_SECRET_STRIPE: 'sk_live_from_env' });

describe('secrets with an encryption key', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi({ service: { secrets: new TaskSecrets({ keyring: TEST_KEYRING, provider }) } });
  });
  afterAll(() => api.close());

  it('stores every credential header sealed, bound to its task and header, and shows it as [REDACTED] everywhere', async () => {
    const headers = {
      Authorization: 'Bearer s3cret-auth',
      Cookie: 'sid=s3cret-cookie',
      'X-Vault-Token': 's3cret-vault',
      'Private-Token': 's3cret-private',
      'X-Goog-Api-Key': 's3cret-goog',
      'X-Access-Token': 's3cret-access',
      'Client-Secret': 's3cret-client',
      'X-Custom': 's3cret-marked',
      'X-Plain': 'visible',
    };
    const res = await api.enqueue({ headers, secretHeaders: ['x-custom'] });
    expect(res.status).toBe(201);
    const redacted = Object.fromEntries(Object.keys(headers).map((h) => [h, h === 'X-Plain' ? 'visible' : '[REDACTED]']));
    expect(res.body.headers).toEqual({ ...redacted, 'content-type': 'application/json' });
    const { taskId } = res.body;
    for (const answer of [await api.call('GET', `/retry-tasks/${taskId}`), await api.call('GET', '/retry-tasks?limit=1000')]) {
      expect(answer.text).not.toContain('s3cret');
    }
    const batch = await api.call('POST', '/retry-tasks/batch', {
      tasks: [{ targetUrl: 'https://api.example.com/b', method: 'POST', headers, secretHeaders: ['X-Custom'] }],
    });
    expect(batch.status).toBe(200);
    expect(batch.text).not.toContain('s3cret');

    const stored = await api.stored(taskId);
    expect(JSON.stringify(stored)).not.toContain('s3cret');
    expect(stored.headers['X-Plain']).toBe('visible');
    const sealed = stored.headers['X-Custom'] as { enc: string };
    expect(openSecret(TEST_KEYRING, sealed.enc, { tenantId: 'default', taskId, purpose: 'header:x-custom' })).toBe('s3cret-marked');
    expect(() => openSecret(TEST_KEYRING, sealed.enc, { tenantId: 'default', taskId, purpose: 'header:authorization' })).toThrow();
  });

  it('seals every header whose name holds a credential word, and keeps Idempotency-Key as the task\'s key', async () => {
    const headers = {
      apikey: 's3cret-apikey',
      'X-Authorization': 's3cret-xauth',
      Token: 's3cret-token',
      'X-Password': 's3cret-password',
      'X-Session-Id': 's3cret-session',
      'Stripe-Signature': 's3cret-signature',
      'X-Credential': 's3cret-credential',
      'Idempotency-Key': 'order-77',
      Accept: 'application/json',
    };
    const res = await api.enqueue({ headers });
    expect(res.status).toBe(201);
    expect(res.body.idempotencyKey).toBe('order-77');
    const credentials = ['apikey', 'X-Authorization', 'Token', 'X-Password', 'X-Session-Id', 'Stripe-Signature', 'X-Credential'];
    expect(res.body.headers).toEqual({
      ...Object.fromEntries(credentials.map((h) => [h, '[REDACTED]'])),
      Accept: 'application/json',
      'content-type': 'application/json',
    });
    expect(res.text).not.toContain('s3cret');
    const stored = await api.stored(res.body.taskId);
    expect(JSON.stringify(stored)).not.toContain('s3cret');
    expect(stored.headers.Accept).toBe('application/json');
    expect(stored.headers['Idempotency-Key']).toBeUndefined();
    expect(openSecret(TEST_KEYRING, (stored.headers['X-Password'] as { enc: string }).enc, { tenantId: 'default', taskId: res.body.taskId, purpose: 'header:x-password' })).toBe(
      's3cret-password',
    );
  });

  it('keeps a {{secret:NAME}} reference as written, and a sensitive body sealed and shown as [REDACTED]', async () => {
    const res = await api.enqueue({
      headers: { 'X-Api-Key': '{{secret:STRIPE}}', 'X-Note': 'ref {{secret:STRIPE}}' },
      body: { card: '4111-s3cret' },
      sensitiveBody: true,
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ body: '[REDACTED]', sensitiveBody: true, headers: { 'X-Api-Key': '[REDACTED]', 'X-Note': '[REDACTED]' } });
    const stored = await api.stored(res.body.taskId);
    expect(stored.headers['X-Note']).toEqual({ ref: 'ref {{secret:STRIPE}}' });
    expect(stored.sensitiveBody).toBe(true);
    expect(stored.body).toMatch(/^v1:test:/);
    expect(openSecret(TEST_KEYRING, stored.body as string, { tenantId: 'default', taskId: res.body.taskId, purpose: 'body' })).toBe('{"card":"4111-s3cret"}');
  });

  it('shows the query values of targetUrl as REDACTED, and keeps the real URL for dispatch', async () => {
    const res = await api.enqueue({ targetUrl: 'https://api.example.com/hook?token=s3cret-q&page=2' });
    expect(res.body.targetUrl).toBe('https://api.example.com/hook?token=REDACTED&page=REDACTED');
    expect((await api.call('GET', '/retry-tasks?limit=1000')).text).not.toContain('s3cret-q');
    expect((await api.stored(res.body.taskId)).targetUrl).toBe('https://api.example.com/hook?token=s3cret-q&page=2');
  });

  it('answers 400 naming the header for a reference the provider does not know, and for a bad secretHeaders or sensitiveBody', async () => {
    const unknown = await api.enqueue({ headers: { Authorization: 'Bearer {{secret:NOPE}}' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual([
      {
        field: 'headers.Authorization',
        rule: '{{secret:NOPE}} must name a secret of tenant default or a shared one (--secrets-file, RETRYD_SECRET_NOPE or RETRYD_SHARED_SECRET_NOPE); it is unknown',
        message: 'headers.Authorization: {{secret:NOPE}} must name a secret of tenant default or a shared one (--secrets-file, RETRYD_SECRET_NOPE or RETRYD_SHARED_SECRET_NOPE); it is unknown',
      },
    ]);
    const badName = await api.enqueue({ headers: { 'X-A': '{{secret:a-b}}' } });
    expect(badName.body.errors[0].field).toBe('headers.X-A');
    expect(badName.body.errors[0].rule).toBe('a value whose {{secret:NAME}} references have names of 1 to 128 letters, digits or _');
    const notArray = await api.enqueue({ secretHeaders: 'X-A' });
    expect(notArray.body.errors[0]).toMatchObject({ field: 'secretHeaders', rule: 'an array of at most 100 header names, each naming a header of headers' });
    const absent = await api.enqueue({ headers: { 'X-A': '1' }, secretHeaders: ['X-A', 'X-B'] });
    expect(absent.body.errors).toEqual([
      { field: 'secretHeaders[1]', rule: 'the name of a header given in headers', message: 'secretHeaders[1] must be the name of a header given in headers, got "X-B"' },
    ]);
    const notBoolean = await api.enqueue({ sensitiveBody: 'yes' });
    expect(notBoolean.body.errors[0]).toMatchObject({ field: 'sensitiveBody', rule: 'a boolean' });
  });
});

describe('secrets without an encryption key', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi({ service: { secrets: new TaskSecrets({ provider }) } });
  });
  afterAll(() => api.close());

  it('refuses a literal credential with 400 naming the header and the rule, and stores nothing', async () => {
    const res = await api.enqueue({ headers: { Authorization: 'Bearer s3cret', 'X-Goog-Api-Key': 's3cret-2', 'X-Ok': '1' } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    const rule = 'credential headers are stored encrypted; start retryd with RETRYD_ENCRYPTION_KEY or use {{secret:NAME}}';
    expect(res.body.errors).toEqual([
      { field: 'headers.Authorization', rule, message: `headers.Authorization: ${rule}` },
      { field: 'headers.X-Goog-Api-Key', rule, message: `headers.X-Goog-Api-Key: ${rule}` },
    ]);
    expect(res.text).not.toContain('s3cret');
    const marked = await api.enqueue({ headers: { 'X-Custom': 'v' }, secretHeaders: ['X-Custom'] });
    expect(marked.body.errors[0].field).toBe('headers.X-Custom');
    const sensitive = await api.enqueue({ sensitiveBody: true });
    expect(sensitive.body.errors).toEqual([
      {
        field: 'sensitiveBody',
        rule: 'a sensitive body is stored encrypted; start retryd with RETRYD_ENCRYPTION_KEY',
        message: 'sensitiveBody: a sensitive body is stored encrypted; start retryd with RETRYD_ENCRYPTION_KEY',
      },
    ]);
    expect((await api.call('GET', '/retry-tasks')).body.items).toEqual([]);
  });

  it('refuses a literal value in a header the wider rule or the operator counts as a credential', async () => {
    const operator = await startApi({ service: { secrets: new TaskSecrets({ provider, credentialHeaders: ['X-Partner-Pin'] }) } });
    try {
      const res = await operator.enqueue({ headers: { 'X-Password': 'p', apikey: 'k', 'x-partner-pin': '1234', 'X-Ok': '1' } });
      expect(res.status).toBe(400);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(['headers.X-Password', 'headers.apikey', 'headers.x-partner-pin']);
      // Given as a reference, the operator's header is taken, and shown redacted.
      const ref = await operator.enqueue({ headers: { 'X-Partner-Pin': '{{secret:STRIPE}}' } });
      expect(ref.status).toBe(201);
      expect(ref.body.headers['X-Partner-Pin']).toBe('[REDACTED]');
    } finally {
      await operator.close();
    }
    // Without the operator's name, that header is an ordinary one.
    expect((await api.enqueue({ headers: { 'X-Partner-Pin': '1234' } })).status).toBe(201);
  });

  it('takes a credential given as a reference, kept as written', async () => {
    const res = await api.enqueue({ headers: { Authorization: 'Bearer {{secret:STRIPE}}' } });
    expect(res.status).toBe(201);
    expect(res.body.headers.Authorization).toBe('[REDACTED]');
    expect((await api.stored(res.body.taskId)).headers.Authorization).toEqual({ ref: 'Bearer {{secret:STRIPE}}' });
  });

  it('refuses a batch entry with a literal credential and takes the others', async () => {
    const res = await api.call('POST', '/retry-tasks/batch', {
      tasks: [
        { targetUrl: 'https://api.example.com/a', method: 'POST' },
        { targetUrl: 'https://api.example.com/b', method: 'POST', headers: { 'X-Auth-Token': 's3cret' } },
      ],
    });
    expect(res.body.results.map((r: { status: number }) => r.status)).toEqual([201, 400]);
    expect(res.body.results[1].error.errors[0].field).toBe('tasks[1].headers.X-Auth-Token');
  });
});
