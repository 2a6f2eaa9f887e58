import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type ApiHarness } from './api-harness.js';

let api: ApiHarness;
const logLines: string[] = [];
beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString());
      done();
    },
  });
  api = await startApi({ app: { logger: pino({ level: 'debug' }, sink) } });
});
afterAll(async () => {
  await api.close();
});

const valid = { targetUrl: 'https://api.example.com/orders', method: 'POST' };
const policy = { maxAttempts: 3, backoffType: 'FIXED', initialDelayMs: 500, multiplier: 1, maxDelayMs: 500, jitterType: 'NONE' };

/** Posts a task and expects a 400 problem naming `field` with a rule containing `rule`. */
async function expectInvalid(body: unknown, field: string, rule: string): Promise<void> {
  const res = await api.call('POST', '/retry-tasks', body);
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.headers['content-type']).toContain('application/problem+json');
  expect(res.body).toMatchObject({
    type: 'https://retryd.dev/problems/validation-failed',
    title: 'The request is not valid',
    status: 400,
    code: 'VALIDATION_FAILED',
    instance: '/retry-tasks',
  });
  const error = (res.body.errors as { field: string; rule: string; message: string }[]).find((e) => e.field === field);
  expect(error, `no error for ${field} in ${JSON.stringify(res.body.errors)}`).toBeDefined();
  expect(error?.rule).toContain(rule);
  expect(error?.message).toContain(field);
  expect(res.body.detail).toContain(error?.message);
}

describe('POST /retry-tasks validation: each broken rule names the field and the rule', () => {
  it.each([
    ['a missing targetUrl', { method: 'POST' }, 'targetUrl', 'an absolute http, https, grpc or grpcs URL'],
    ['a targetUrl that is no URL', { ...valid, targetUrl: 'orders' }, 'targetUrl', 'an absolute http, https, grpc or grpcs URL'],
    ['an ftp targetUrl', { ...valid, targetUrl: 'ftp://files.example.com/a' }, 'targetUrl', 'http, https, grpc or grpcs'],
    ['credentials in targetUrl', { ...valid, targetUrl: 'https://u:p@api.example.com/' }, 'targetUrl', 'without user:password'],
    ['a missing method', { targetUrl: valid.targetUrl }, 'method', 'one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS'],
    ['an unknown method', { ...valid, method: 'FETCH' }, 'method', 'one of GET'],
    ['a lower-case method', { ...valid, method: 'post' }, 'method', 'one of GET'],
    ['headers as an array', { ...valid, headers: ['a'] }, 'headers', 'an object of header names to string values'],
    ['a header value that is a number', { ...valid, headers: { 'x-n': 1 } }, 'headers.x-n', 'a string'],
    ['a Host header', { ...valid, headers: { Host: 'evil' } }, 'headers.Host', 'hop-by-hop or framing header'],
    ['a Content-Length header', { ...valid, headers: { 'Content-Length': '3' } }, 'headers.Content-Length', 'hop-by-hop'],
    ['a Transfer-Encoding header', { ...valid, headers: { 'transfer-encoding': 'chunked' } }, 'headers.transfer-encoding', 'hop-by-hop'],
    ['a Connection header', { ...valid, headers: { Connection: 'close' } }, 'headers.Connection', 'hop-by-hop'],
    ['a Keep-Alive header', { ...valid, headers: { 'Keep-Alive': '5' } }, 'headers.Keep-Alive', 'hop-by-hop'],
    ['an Upgrade header', { ...valid, headers: { Upgrade: 'h2c' } }, 'headers.Upgrade', 'hop-by-hop'],
    ['a header name with a space', { ...valid, headers: { 'Bad Name': 'x' } }, 'headers.Bad Name', 'token characters'],
    ['a header value with CR LF', { ...valid, headers: { 'x-a': 'a\r\nInjected: 1' } }, 'headers.x-a', 'no CR, LF, NUL'],
    ['a header value with NEL (0x85)', { ...valid, headers: { 'X-Note': 'a\u0085Injected: 1' } }, 'headers.X-Note', 'U+0080–U+009F such as NEL'],
    ['a header value with a C1 control (0x9b)', { ...valid, headers: { 'x-c1': 'a\u009b1m' } }, 'headers.x-c1', 'U+0080–U+009F'],
    ['a header value with DEL', { ...valid, headers: { 'x-del': 'a\u007f' } }, 'headers.x-del', 'without control characters'],
    ['a targetUrl on port 0', { ...valid, targetUrl: 'https://api.example.com:0/orders' }, 'targetUrl', 'port, when given, is 1 to 65535'],
    ['a targetUrl on port 00', { ...valid, targetUrl: 'http://api.example.com:00/' }, 'targetUrl', 'port 0 names no service'],
    [
      'a body declared in another charset',
      { ...valid, headers: { 'Content-Type': 'text/plain; charset=utf-16' }, body: 'héllo' },
      'headers.Content-Type',
      'charset=utf-8, when body is given',
    ],
    [
      'a JSON body declared latin-1',
      { ...valid, headers: { 'content-type': 'application/json;charset="ISO-8859-1"' }, body: { name: 'é' } },
      'headers.content-type',
      'retryd sends body as UTF-8',
    ],
    ['a header given twice in two cases', { ...valid, headers: { 'X-A': '1', 'x-a': '2' } }, 'headers.x-a', 'given once'],
    ['a body on GET', { ...valid, method: 'GET', body: 'x' }, 'body', 'absent for GET'],
    ['policyId and policy together', { ...valid, policyId: 'default', policy }, 'policy', 'absent when policyId is given'],
    ['an invalid inline policy', { ...valid, policy: { ...policy, maxAttempts: 0 } }, 'policy.maxAttempts', 'an integer >= 1'],
    ['an inline policy with an unknown field', { ...valid, policy: { ...policy, retries: 3 } }, 'policy.retries', 'a known policy field'],
    ['an unregistered policyId', { ...valid, policyId: 'nope' }, 'policyId', 'the id of a registered policy'],
    ['a malformed policyId', { ...valid, policyId: '../x' }, 'policyId', 'letters, digits'],
    ['an empty idempotencyKey', { ...valid, idempotencyKey: '' }, 'idempotencyKey', 'visible ASCII characters'],
    ['an idempotencyKey with a space', { ...valid, idempotencyKey: 'a b' }, 'idempotencyKey', 'visible ASCII'],
    ['an idempotencyKey too long', { ...valid, idempotencyKey: 'k'.repeat(256) }, 'idempotencyKey', '1 to 255'],
    ['a numeric idempotencyKey', { ...valid, idempotencyKey: 42 }, 'idempotencyKey', 'a string'],
    [
      'two different keys',
      { ...valid, idempotencyKey: 'a', headers: { 'Idempotency-Key': 'b' } },
      'headers.Idempotency-Key',
      'equal to idempotencyKey',
    ],
    ['a negative delayMs', { ...valid, delayMs: -1 }, 'delayMs', 'an integer >= 0'],
    ['a fractional delayMs', { ...valid, delayMs: 1.5 }, 'delayMs', 'an integer >= 0'],
    ['a delayMs given as a string', { ...valid, delayMs: '5' }, 'delayMs', 'an integer >= 0'],
    ['delayMs and notBefore together', { ...valid, delayMs: 5, notBefore: 5 }, 'notBefore', 'absent when delayMs is given'],
    ['a notBefore in words', { ...valid, notBefore: 'tomorrow' }, 'notBefore', 'ISO 8601'],
    ['a notBefore date without a time zone', { ...valid, notBefore: '2030-01-01T00:00:00' }, 'notBefore', 'ISO 8601'],
    ['a notBefore of 30 February', { ...valid, notBefore: '2024-02-30T00:00:00Z' }, 'notBefore', 'ISO 8601'],
    ['a notBefore of 29 February in a common year', { ...valid, notBefore: '2023-02-29T12:00:00Z' }, 'notBefore', 'ISO 8601'],
    ['a notBefore of 31 April', { ...valid, notBefore: '2030-04-31T00:00:00+02:00' }, 'notBefore', 'ISO 8601'],
    ['a notBefore at hour 24', { ...valid, notBefore: '2030-01-01T24:00:00Z' }, 'notBefore', 'ISO 8601'],
    ['a notBefore with an offset of 24 hours', { ...valid, notBefore: '2030-01-01T10:00:00+24:00' }, 'notBefore', 'ISO 8601'],
    ['an unknown field', { ...valid, retries: 3 }, 'retries', 'absent (known fields'],
    ['a body that is an array', [valid], 'body', 'a JSON object'],
    ['a body that is a JSON string', 'hello', 'body', 'a JSON object'],
  ])('refuses %s', async (_name, body, field, rule) => {
    await expectInvalid(typeof body === 'string' ? JSON.stringify(body) : body, field, rule);
  });

  it('reports every broken rule at once', async () => {
    const res = await api.call('POST', '/retry-tasks', { targetUrl: 'x', method: 'X', delayMs: -1 });
    expect((res.body.errors as { field: string }[]).map((e) => e.field)).toEqual(['targetUrl', 'method', 'delayMs']);
  });

  it('never repeats a header value in the problem or the log', async () => {
    const res = await api.call(
      'POST',
      '/retry-tasks',
      { ...valid, headers: { Authorization: 'Bearer s3cret-token\r\n', Cookie: 7 } },
      { authorization: 'Bearer api-s3cret' },
    );
    expect(res.status).toBe(400);
    expect(res.text).not.toContain('s3cret');
    await api.enqueue({ headers: { Authorization: 'Bearer s3cret-ok' } });
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.join('')).not.toContain('s3cret');
  });

  it('refuses a body that is not JSON', async () => {
    await expectInvalid('{"targetUrl": ', 'body', 'a JSON document');
    await expectInvalid('', 'body', 'a JSON object');
    await expectInvalid('{"__proto__": {"admin": true}}', 'body', 'a JSON document');
    // The same keys spelt with escapes, and `constructor`, nested in a task's body.
    await expectInvalid('{"\\u005f_proto__": {"admin": true}}', 'body', 'a JSON document');
    await expectInvalid(`{"targetUrl": "${valid.targetUrl}", "body": {"a": {"constructor": {"prototype": {}}}}}`, 'body', 'a JSON document');
    await expectInvalid(`{"targetUrl": "${valid.targetUrl}", "body": {"\\u0063onstructor": {"prototype": {}}}}`, 'body', 'a JSON document');
  });

  it('takes the words __proto__ and constructor as values, and a body with \\u escapes', async () => {
    // JSON.stringify writes U+0001 as \u0001: the request's text holds a `\u`, so the default parser reads it.
    const sent = { note: '__proto__ constructor', control: '\u0001', accent: 'é' };
    const { body } = await api.enqueue({ body: sent });
    expect(body.body).toBe(JSON.stringify(sent));
  });

  it('takes an empty body sent as application/json as no body', async () => {
    const { body } = await api.enqueue();
    const res = await api.call('DELETE', `/retry-tasks/${body.taskId}`, '');
    expect(res.status).toBe(200);
  });

  it('answers 415 to a media type other than JSON', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const res = await api.call('POST', '/retry-tasks', 'targetUrl=x', { 'content-type': type });
      expect(res.status).toBe(415);
      expect(res.body).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', status: 415 });
    }
  });

  it('answers 413 to a body over the limit (10 MiB by default)', async () => {
    const body = JSON.stringify({ ...valid, body: 'x'.repeat(10 * 1024 * 1024) });
    const res = await api.call('POST', '/retry-tasks', body);
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', status: 413 });
    expect(res.body.detail).toContain(String(10 * 1024 * 1024));
    const small = await startApi({ app: { bodyLimit: 1024 } });
    try {
      const over = await small.call('POST', '/retry-tasks', { ...valid, body: 'y'.repeat(2000) });
      expect(over.body).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
    } finally {
      await small.close();
    }
  });
});

describe('what is taken as written, and only that', () => {
  /** Posts raw bytes as a request body, with the given content-type. */
  const postBytes = async (bytes: Uint8Array | string, contentType: string) => {
    const res = await fetch(`${api.url}/retry-tasks`, { method: 'POST', headers: { 'content-type': contentType }, body: bytes });
    return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as Record<string, unknown> };
  };
  const utf8Rule = 'UTF-8 text (RFC 8259 §8.1)';
  const charsetRule = 'no charset parameter, or charset=utf-8 (JSON is UTF-8, RFC 8259 §8.1)';

  it('answers 415 naming the rule to a request body declared in a charset other than UTF-8, and creates nothing', async () => {
    const before = (await api.call('GET', '/retry-tasks')).body.items.length as number;
    const json = JSON.stringify({ ...valid, body: { note: 'é' } });
    for (const [type, named] of [
      ['application/json; charset=utf-16', 'utf-16'],
      ['application/json; charset="UTF-16LE"', 'utf-16le'],
      ['application/json;charset=iso-8859-1', 'iso-8859-1'],
    ]) {
      const res = await postBytes(json, type!);
      expect(res.status, type).toBe(415);
      expect(res.type).toContain('application/problem+json');
      expect(res.body).toMatchObject({
        code: 'UNSUPPORTED_MEDIA_TYPE',
        errors: [{ field: 'content-type', rule: charsetRule, message: `content-type must have ${charsetRule}, got charset="${named}"` }],
      });
    }
    // A UTF-16 body really sent as UTF-16 is refused the same way, before its bytes are read as anything.
    const utf16 = await postBytes(new Uint8Array(Buffer.from(json, 'utf16le')), 'application/json; charset=utf-16');
    expect(utf16.status).toBe(415);
    expect((await api.call('GET', '/retry-tasks')).body.items).toHaveLength(before);
    for (const type of ['application/json; charset=utf-8', 'application/json; charset="UTF-8"', 'application/json;charset=utf8']) {
      expect((await postBytes(json, type)).status, type).toBe(201);
    }
  });

  it('answers 400 naming body to bytes that are not valid UTF-8, instead of storing U+FFFD in their place', async () => {
    const head = Buffer.from(`{"targetUrl":"${valid.targetUrl}","method":"POST","body":"caf`);
    for (const bad of [[0xe9], [0xc3], [0xed, 0xa0, 0x80], [0xff, 0xfe], [0xf8, 0x88, 0x80, 0x80, 0x80]]) {
      const res = await postBytes(new Uint8Array(Buffer.concat([head, Buffer.from(bad), Buffer.from('"}')])), 'application/json');
      expect(res.status, String(bad)).toBe(400);
      expect(res.body).toMatchObject({
        code: 'VALIDATION_FAILED',
        errors: [{ field: 'body', rule: utf8Rule, message: `body must be ${utf8Rule}; its bytes are not valid UTF-8` }],
      });
    }
    const good = await postBytes(new Uint8Array(Buffer.concat([head, Buffer.from([0xc3, 0xa9]), Buffer.from('"}')])), 'application/json');
    expect(good.status).toBe(201);
    expect((await api.stored(good.body.taskId as string)).body).toBe('café');
  });

  it('takes what the rules above leave: Latin-1 letters and NBSP in a header, 29 February of a leap year, an explicit port, a UTF-8 charset', async () => {
    const res = await api.call('POST', '/retry-tasks', {
      ...valid,
      targetUrl: 'https://api.example.com:8443/orders',
      headers: { 'X-Name': 'Zoë\u00a0Müller\tÿ', 'Content-Type': 'text/plain; charset=UTF-8' },
      body: 'héllo',
      notBefore: '2028-02-29T23:59:59.999+01:00',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const task = await api.stored(res.body.taskId as string);
    expect(task.headers['X-Name']).toBe('Zoë\u00a0Müller\tÿ');
    expect(task.nextAttemptAt).toBe(Date.UTC(2028, 1, 29, 22, 59, 59, 999));
  });
});

describe('query and path validation', () => {
  it.each([
    ['/retry-tasks?limit=0', 'limit', '>= 1'],
    ['/retry-tasks?limit=1001', 'limit', '<= 1000'],
    ['/retry-tasks?limit=ten', 'limit', 'of type integer'],
    ['/retry-tasks?status=DONE', 'status', 'one of PENDING, IN_FLIGHT, SUCCEEDED, FAILED, EXHAUSTED, CANCELLED'],
    ['/retry-tasks?stauts=FAILED', 'stauts', 'a known parameter'],
    ['/retry-tasks?cursor=not-a-cursor', 'cursor', 'a nextCursor returned by the same listing'],
    ['/dead-letters?limit=-5', 'limit', '>= 1'],
    ['/retry-policies?limit=5000', 'limit', '<= 1000'],
  ])('GET %s names %s', async (path, field, rule) => {
    const res = await api.call('GET', path);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(res.body.errors).toEqual([expect.objectContaining({ field, rule: expect.stringContaining(rule) })]);
  });

  it('answers 404 problems for unknown tasks, policies and routes', async () => {
    for (const path of ['/retry-tasks/00000000-0000-4000-8000-000000000000', '/retry-policies/none', '/nowhere']) {
      const res = await api.call('GET', path);
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.body).toMatchObject({ code: 'NOT_FOUND', type: 'https://retryd.dev/problems/not-found' });
    }
  });
});
