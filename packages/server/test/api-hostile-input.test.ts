import fc from 'fast-check';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PATH_PARAM_LENGTH } from '../src/api/problem-handler.js';
import { DEFAULT_TENANT } from '../src/domain/task.js';
import type { AdminReads, Store } from '../src/store/store.js';
import { MAX_FIELD_ERRORS } from '../src/domain/errors.js';
import { MAX_REQUEST_DEPTH, MAX_VALUE_DEPTH, findTooDeep, nestsDeeperThan } from '../src/domain/json-nesting.js';
import { POLICY_ID_SCHEMA } from '../src/policies/policy-id.js';
import { ENQUEUE_LIMITS, FORBIDDEN_HEADERS } from '../src/tasks/enqueue-input.js';
import { startApi, startTargetsApi, type ApiHarness, type ApiResponse } from './api-harness.js';

// Hostile input on the real service (SQLite, a real HTTP server on loopback): every bound answers a 4xx problem naming
// what is wrong, the framework's own errors included, and a refused request changes nothing.

let api: ApiHarness;
let closeApi: () => Promise<void>;
const logLines: string[] = [];
beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString());
      done();
    },
  });
  ({ api, close: closeApi } = await startTargetsApi({ app: { logger: pino({ level: 'debug' }, sink) } }));
});
afterAll(async () => {
  await closeApi();
});

const valid = { targetUrl: 'https://api.example.com/orders', method: 'POST' };
const policyFields = { maxAttempts: 3, backoffType: 'FIXED', initialDelayMs: 500, multiplier: 1, maxDelayMs: 500, jitterType: 'NONE' };

/** `[[[…1…]]]`, `depth` levels deep, as JSON text. */
const nestedText = (depth: number, open = '[', close = ']') => `${open.repeat(depth)}1${close.repeat(depth)}`;
const nested = (depth: number): unknown => JSON.parse(nestedText(depth));

/** Every task of the tenant, by status: what a refused request must leave as it was. */
const counts = () => (api.store as Store & AdminReads).countByStatus(DEFAULT_TENANT);

/** Expects a problem of `status` naming `field` (when given) with a rule containing `rule`. */
function expectProblem(res: ApiResponse, status: number, field?: string, rule?: string): void {
  expect(res.status, res.text.slice(0, 500)).toBe(status);
  expect(res.headers['content-type']).toContain('application/problem+json');
  expect(res.body).toMatchObject({ status, type: expect.stringMatching(/^https:\/\/retryd\.dev\/problems\//) });
  if (field === undefined) return;
  const errors = (res.body.errors ?? []) as { field: string; rule: string; message: string }[];
  const error = errors.find((e) => e.field === field);
  expect(error, `no error for ${field} in ${JSON.stringify(errors).slice(0, 500)}`).toBeDefined();
  if (rule !== undefined) expect(error?.rule).toContain(rule);
  expect(error?.message).toContain(field);
}

describe('JSON nesting', () => {
  it('finds the first value nested too deep in the text, ignoring brackets inside strings', () => {
    expect(findTooDeep('{"a":[[1]]}', 2)).toEqual(['a', 0]);
    expect(findTooDeep('{"a":[1]}', 2)).toBeUndefined();
    expect(findTooDeep('{"x":1,"b\\"c":[0,{"d":[]}]}', 2)).toEqual(['b"c', 1]);
    expect(findTooDeep(`{"s":"${'['.repeat(500)}","t":"\\"[[["}`, 1)).toBeUndefined();
    expect(findTooDeep('[[', 1)).toEqual([0]);
  });

  it('finds a value too deep exactly when a plain walk of the text does (escapes, brackets in strings, stray closers)', () => {
    // The walk the scan must agree with: one character at a time, a backslash in a string skipping the next one.
    const depthOf = (text: string): number => {
      let depth = 0;
      let deepest = 0;
      for (let i = 0; i < text.length; i++) {
        const c = text[i];
        if (c === '"') {
          for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
        } else if (c === '[' || c === '{') deepest = Math.max(deepest, ++depth);
        else if ((c === ']' || c === '}') && depth > 0) depth--;
      }
      return deepest;
    };
    fc.assert(
      fc.property(fc.array(fc.constantFrom('[', ']', '{', '}', '"', '\\', ',', 'a', ':'), { maxLength: 40 }), fc.integer({ min: 0, max: 6 }), (chars, max) => {
        const text = chars.join('');
        expect(findTooDeep(text, max) !== undefined, text).toBe(depthOf(text) > max);
      }),
      { numRuns: 5000 },
    );
  });

  it('checks a parsed value of any depth without recursion', () => {
    expect(nestsDeeperThan(nested(3), 3)).toBe(false);
    expect(nestsDeeperThan(nested(4), 3)).toBe(true);
    expect(nestsDeeperThan('[[[[', 0)).toBe(false);
    expect(nestsDeeperThan(nested(100_000), MAX_VALUE_DEPTH)).toBe(true);
  });

  it('answers 400 naming the field to a task body nested 1,800 levels deep, and creates nothing', async () => {
    const before = await counts();
    const res = await api.call('POST', '/retry-tasks', `{"targetUrl":"${valid.targetUrl}","method":"POST","body":${nestedText(1800)}}`);
    expectProblem(res, 400, 'body', `nested at most ${MAX_REQUEST_DEPTH} levels deep`);
    expect(await counts()).toEqual(before);
  });

  it(`takes a task body ${MAX_VALUE_DEPTH} levels deep and refuses one level more`, async () => {
    expect((await api.call('POST', '/retry-tasks', { ...valid, body: nested(MAX_VALUE_DEPTH) })).status).toBe(201);
    const before = await counts();
    const res = await api.call('POST', '/retry-tasks', { ...valid, body: nested(MAX_VALUE_DEPTH + 1) });
    expectProblem(res, 400, 'body', `a JSON value nested at most ${MAX_VALUE_DEPTH} levels deep`);
    expect(await counts()).toEqual(before);
  });

  it('does not count brackets inside a string body', async () => {
    expect((await api.call('POST', '/retry-tasks', { ...valid, body: '['.repeat(5000) })).status).toBe(201);
  });

  it('gives a batch entry with a body too deep its own 400, and enqueues the others', async () => {
    const res = await api.call('POST', '/retry-tasks/batch', { tasks: [{ ...valid, body: nested(80) }, valid] });
    expect(res.status).toBe(200);
    expect(res.body.results[0]).toMatchObject({ status: 400, error: { code: 'VALIDATION_FAILED' } });
    expect(res.body.results[0].error.errors[0]).toMatchObject({ field: 'tasks[0].body', rule: expect.stringContaining('64 levels') });
    expect(res.body.results[1].status).toBe(201);
  });

  it('answers 400 naming the entry to a batch whose document nests deeper than the request limit', async () => {
    const before = await counts();
    const text = `{"tasks":[${JSON.stringify(valid)},{"targetUrl":"${valid.targetUrl}","method":"POST","body":${nestedText(1800)}}]}`;
    expectProblem(await api.call('POST', '/retry-tasks/batch', text), 400, 'tasks[1].body', 'counted from the top of the request body');
    expect(await counts()).toEqual(before);
  });

  it('bounds every other JSON body too: policies, target settings, breaker actions', async () => {
    const deep = nestedText(3000, '{"a":', '}');
    const key = encodeURIComponent('https://api.example.com');
    expectProblem(await api.call('POST', '/retry-policies', `{"policyId":"deep","maxAttempts":${deep}}`), 400, 'maxAttempts.a.a');
    expectProblem(await api.call('PUT', '/retry-policies/default', `{"policy":${deep}}`), 400, 'policy.a.a');
    expectProblem(await api.call('PUT', `/targets/${key}`, `{"breaker":${deep}}`), 400, 'breaker.a.a');
    expectProblem(await api.call('POST', `/targets/${key}/breaker`, `{"action":${deep}}`), 400, 'action.a.a');
    expect((await api.call('GET', '/retry-policies/deep')).status).toBe(404);
  });

  it('refuses 5 MiB of opening brackets at once, without building them', async () => {
    expectProblem(await api.call('POST', '/retry-tasks', '['.repeat(5 * 1024 * 1024)), 400, 'body', 'levels deep');
  });
});

describe('task headers', () => {
  const enqueueWith = (headers: Record<string, string>) => api.call('POST', '/retry-tasks', { ...valid, headers });

  it(`takes a header name of ${ENQUEUE_LIMITS.headerNameLength} bytes and refuses a longer one`, async () => {
    const name = 'x'.repeat(ENQUEUE_LIMITS.headerNameLength);
    expect((await enqueueWith({ [name]: 'v' })).status).toBe(201);
    expectProblem(await enqueueWith({ [`${name}y`]: 'v' }), 400, `headers.${'x'.repeat(32)}...`, `at most ${ENQUEUE_LIMITS.headerNameLength} bytes`);
  });

  it('refuses a 1 MB header name with a short answer, and creates nothing', async () => {
    const before = await counts();
    const res = await enqueueWith({ ['n'.repeat(1024 * 1024)]: 'v' });
    expectProblem(res, 400, `headers.${'n'.repeat(32)}...`, 'a header name of at most 256 bytes, got 1048576');
    expect(res.text.length).toBeLessThan(4096);
    expect(await counts()).toEqual(before);
  });

  it(`takes a header value of ${ENQUEUE_LIMITS.headerValueLength} bytes and refuses a longer one`, async () => {
    expect((await enqueueWith({ 'x-v': 'v'.repeat(ENQUEUE_LIMITS.headerValueLength) })).status).toBe(201);
    expectProblem(await enqueueWith({ 'x-v': 'v'.repeat(ENQUEUE_LIMITS.headerValueLength + 1) }), 400, 'headers.x-v', '8192 bytes');
  });

  it(`takes ${ENQUEUE_LIMITS.headers} headers and refuses more`, async () => {
    const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`x-h${i}`, 'v']));
    expect((await enqueueWith(many(ENQUEUE_LIMITS.headers))).status).toBe(201);
    expectProblem(await enqueueWith(many(ENQUEUE_LIMITS.headers + 1)), 400, 'headers', `at most ${ENQUEUE_LIMITS.headers} headers`);
  });

  it(`refuses headers over ${ENQUEUE_LIMITS.headerBytes} bytes in all`, async () => {
    const big = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`x-b${i}`, 'v'.repeat(8000)]));
    expectProblem(await enqueueWith(big), 400, 'headers', `at most ${ENQUEUE_LIMITS.headerBytes} bytes of names and values`);
  });

  it.each([...FORBIDDEN_HEADERS])('still refuses the hop-by-hop or framing header %s, in any case', async (header) => {
    const upper = header.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
    expectProblem(await enqueueWith({ [upper]: 'x' }), 400, `headers.${upper}`, 'hop-by-hop or framing header');
  });
});

describe('every route bounds its input', () => {
  it(`lists at most ${MAX_FIELD_ERRORS} broken rules, however many there are`, async () => {
    const unknown = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`f${i}`, 1]));
    const res = await api.call('POST', '/retry-tasks', { ...valid, ...unknown });
    expectProblem(res, 400, 'f0', 'absent');
    expect(res.body.errors).toHaveLength(MAX_FIELD_ERRORS);
    expect(res.body.detail).toMatch(/and 4900 more$/);
  });

  it.each([
    ['/retry-tasks?limit=1001', 'limit'],
    ['/dead-letters?limit=1001', 'limit'],
    ['/retry-policies?limit=1001', 'limit'],
    ['/targets?limit=1001', 'limit'],
    [`/targets?cursor=${'c'.repeat(1025)}`, 'cursor'],
    [`/retry-tasks?policyId=${'p'.repeat(129)}`, 'policyId'],
    ['/retry-tasks?policyId=..%2Fx', 'policyId'],
    [`/retry-tasks/${'t'.repeat(129)}`, 'taskId'],
    [`/retry-tasks/${'t'.repeat(129)}/attempts`, 'taskId'],
    [`/retry-policies/${'p'.repeat(129)}`, 'policyId'],
    [`/targets/${'k'.repeat(513)}`, 'targetKey'],
  ])('GET %s names %s', async (path, field) => {
    expectProblem(await api.call('GET', path), 400, field);
  });

  it('refuses a batch over 1,000 tasks naming tasks, and creates nothing', async () => {
    const before = await counts();
    expectProblem(await api.call('POST', '/retry-tasks/batch', { tasks: Array.from({ length: 1001 }, () => valid) }), 400, 'tasks', 'at most 1000');
    expect(await counts()).toEqual(before);
  });
});

describe('ids agree everywhere', () => {
  it.each([101, 120, 128])('reads and changes a policy whose id is %i characters long', async (length) => {
    const policyId = `p${'x'.repeat(length - 1)}`;
    expect((await api.call('POST', '/retry-policies', { policyId, ...policyFields })).status).toBe(201);
    expect((await api.call('GET', `/retry-policies/${policyId}`)).body.policyId).toBe(policyId);
    expect((await api.call('PUT', `/retry-policies/${policyId}`, { ...policyFields, maxAttempts: 4 })).body.maxAttempts).toBe(4);
  });

  it('documents one policy id rule for the path, the filter and the registration', async () => {
    const doc = (await api.call('GET', '/openapi.json')).body;
    const param = (path: string, method: string, name: string) =>
      (doc.paths[path][method].parameters as { name: string; schema: unknown }[]).find((p) => p.name === name)?.schema;
    const expected = { type: 'string', minLength: 1, maxLength: 128, pattern: POLICY_ID_SCHEMA.pattern };
    expect(param('/retry-policies/{policyId}', 'get', 'policyId')).toMatchObject(expected);
    expect(param('/retry-policies/{policyId}', 'put', 'policyId')).toMatchObject(expected);
    expect(param('/retry-tasks', 'get', 'policyId')).toMatchObject(expected);
    expect(doc.components.schemas.PolicyRequest.properties.policyId).toMatchObject(expected);
  });

  it('routes every path parameter the OpenAPI document allows, fully percent-encoded', async () => {
    const doc = (await api.call('GET', '/openapi.json')).body;
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, { parameters?: unknown[] }>>)) {
      for (const operation of Object.values(methods)) {
        for (const p of (operation.parameters ?? []) as { in: string; name: string; schema: { maxLength?: number } }[]) {
          if (p.in !== 'path') continue;
          expect(p.schema.maxLength, `${path} ${p.name}`).toBeDefined();
          expect(3 * (p.schema.maxLength ?? Infinity), `${path} ${p.name}`).toBeLessThanOrEqual(MAX_PATH_PARAM_LENGTH);
        }
      }
    }
  });
});

describe("the framework's own errors are problems", () => {
  it('answers 414 to a path segment longer than the router matches', async () => {
    const res = await api.call('GET', `/retry-policies/${'p'.repeat(MAX_PATH_PARAM_LENGTH + 1)}`);
    expectProblem(res, 414);
    expect(res.body.code).toBe('URI_TOO_LONG');
  });

  it.each(['/retry-tasks/%zz', '/retry-policies/%C0%AF', '/targets/%E0%A4', '/nowhere/%'])('answers 400 naming path to %s', async (path) => {
    expectProblem(await api.call('GET', path), 400, 'path', 'percent-encoding');
  });

  it.each([
    ['PATCH', '/retry-tasks', 'GET, HEAD, POST, DELETE'],
    // `batch` is also a task id to GET /retry-tasks/{taskId} and DELETE.
    ['PUT', '/retry-tasks/batch', 'GET, HEAD, POST, DELETE'],
    ['DELETE', '/retry-policies/default', 'GET, HEAD, PUT'],
    ['POST', '/retry-tasks/x/attempts', 'GET, HEAD'],
    ['GET', '/retry-tasks/x/replay', 'POST'],
    ['PUT', '/targets/x/breaker', 'POST'],
    ['GET', '/targets/x/release', 'POST'],
    ['OPTIONS', '/healthz', 'GET, HEAD'],
  ])('answers 405 with Allow to %s %s', async (method, path, allow) => {
    const res = await api.call(method, path);
    expectProblem(res, 405);
    expect(res.body.code).toBe('METHOD_NOT_ALLOWED');
    expect(res.headers.allow).toBe(allow);
  });

  it('answers 404 problems to unknown paths, whatever the method', async () => {
    for (const method of ['GET', 'POST', 'PATCH']) {
      const res = await api.call(method, '/retry-taskz');
      expectProblem(res, 404);
      expect(res.headers.allow).toBeUndefined();
    }
  });

  it('answers problems to a body that is not JSON, another media type, and a body over the limit', async () => {
    expectProblem(await api.call('POST', '/retry-tasks', '{"targetUrl":'), 400, 'body', 'a JSON document');
    expectProblem(await api.call('PUT', '/targets/x', 'a=b', { 'content-type': 'application/x-www-form-urlencoded' }), 415);
    expectProblem(await api.call('POST', '/retry-policies', JSON.stringify({ policyId: 'big', pad: 'x'.repeat(11 * 1024 * 1024) })), 413);
  });

  it('answers problems to what the HTTP parser refuses: headers over its limit, a malformed request', async () => {
    const raw = (request: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(Number(new URL(api.url).port), '127.0.0.1');
        let data = '';
        socket.on('data', (chunk) => (data += chunk.toString()));
        socket.on('error', reject);
        socket.on('close', () => resolve(data));
        socket.write(request);
      });
    const tooBig = await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`);
    expect(tooBig).toMatch(/^HTTP\/1\.1 431 /);
    expect(tooBig).toContain('Content-Type: application/problem+json');
    expect(JSON.parse(tooBig.slice(tooBig.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: 431, code: 'HEADERS_TOO_LARGE' });
    const malformed = await raw('GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n');
    expect(malformed).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(malformed.slice(malformed.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
  });

  it('answers a 503 problem to a request that arrives while the service closes', async () => {
    const closing = await startApi();
    const socket = connect(Number(new URL(closing.url).port), '127.0.0.1');
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString()));
    const ended = new Promise((resolve) => socket.on('close', resolve));
    await new Promise((resolve) => socket.once('connect', resolve));
    // Headers begun but not ended: the connection is busy, so closing waits for this request.
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    await until(async () => (await connections(closing)) === 1);
    const closed = closing.close();
    await until(async () => !closing.app.server.listening);
    socket.write('\r\n');
    await ended;
    await closed;
    expect(data).toMatch(/^HTTP\/1\.1 503 /);
    expect(JSON.parse(data.slice(data.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: 503, code: 'SHUTTING_DOWN' });
  });
});

describe('server errors are logged', () => {
  it('logs every 500 at error level with the error, never headers or bodies, a batch entry’s too', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const broken = await startApi({
      app: { logger: pino({ level: 'info' }, sink) },
      wrapStore: (store) =>
        new Proxy(store, {
          get(target, name, receiver) {
            if (name === 'getTask' || name === 'getPolicy') {
              return async (_tenant: string, id: string) => {
                if (id.startsWith('boom')) throw new TypeError('a bug in the store');
                return (Reflect.get(target, name, receiver) as (t: string, i: string) => Promise<unknown>).call(target, _tenant, id);
              };
            }
            const value = Reflect.get(target, name, receiver) as unknown;
            return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
          },
        }),
    });
    try {
      const res = await broken.call('GET', '/retry-tasks/boom-1', undefined, { authorization: 'Bearer s3cret-header' });
      expectProblem(res, 500);
      const batch = await broken.call('POST', '/retry-tasks/batch', { tasks: [{ ...valid, policyId: 'boom-2', body: 's3cret-body' }] });
      expect(batch.body.results[0].status).toBe(500);
      const errors = lines.map((l) => JSON.parse(l) as { level: number; err?: { message: string } }).filter((l) => l.level === 50);
      expect(errors).toHaveLength(2);
      for (const line of errors) expect(line.err?.message).toContain('a bug in the store');
      expect(lines.join('')).not.toContain('s3cret');
    } finally {
      await broken.close();
    }
  });

  it('logged no error while answering the hostile requests above', () => {
    const errors = logLines.filter((l) => (JSON.parse(l) as { level: number }).level >= 50);
    expect(errors).toEqual([]);
  });
});

async function connections(harness: ApiHarness): Promise<number> {
  return new Promise((resolve, reject) => harness.app.server.getConnections((error, n) => (error ? reject(error) : resolve(n))));
}

/** Polls a condition until it holds, for at most two seconds. */
async function until(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 2000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('the condition did not hold within 2 s');
    await new Promise((resolve) => setImmediate(resolve));
  }
}
