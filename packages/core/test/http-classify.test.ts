import { once } from 'node:events';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyHttpResponse, classifyHttpStatus } from '../src/http/classify-http.js';
import { headerValue, type HeadersLike } from '../src/http/headers.js';
import { HttpOutcome } from '../src/http/http-outcome.js';
import { classifyError, isNetworkError, isTimeoutError } from '../src/http/network-errors.js';
import { retryableStatusCodesOf, successStatusCodesOf } from '../src/policy/retry-policy.js';

const { SUCCESS, RETRYABLE, PERMANENT } = HttpOutcome;
const withCode = (code: string, message = code) => Object.assign(new Error(message), { code });
const portOf = (server: Server | HttpServer) => (server.address() as AddressInfo).port;
const fetchFailed = (cause: unknown) => new TypeError('fetch failed', { cause });
/** All three answers at once, so each case reads as one line. */
const verdict = (error: unknown) => ({
  network: isNetworkError(error),
  timeout: isTimeoutError(error),
  outcome: classifyError(error),
});
const NETWORK = { network: true, timeout: false, outcome: RETRYABLE };
const TIMEOUT = { network: false, timeout: true, outcome: RETRYABLE };
const NEITHER = { network: false, timeout: false, outcome: PERMANENT };

/** The reason `promise` rejects with; throws if it resolves. */
const rejectionOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(() => Promise.reject(new Error('expected a rejection')), (error: unknown) => error);

async function listen<S extends Server | HttpServer>(server: S): Promise<S> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

describe('classifyHttpStatus', () => {
  const permanent = [100, 199, 300, 301, 302, 304, 307, 400, 401, 403, 404, 409, 422, 501, 505, 599, 0, 200.5, NaN];
  it.each([
    ...[200, 201, 204, 299].map((status) => [status, SUCCESS] as const),
    ...[408, 425, 429, 500, 502, 503, 504].map((status) => [status, RETRYABLE] as const),
    ...permanent.map((status) => [status, PERMANENT] as const),
  ])('%d is %s by default', (status, outcome) => expect(classifyHttpStatus(status)).toBe(outcome));

  it('honours a custom list, but a 2xx in it is still a success', () => {
    expect(classifyHttpStatus(409, [409, 503])).toBe(RETRYABLE);
    expect(classifyHttpStatus(500, [409, 503])).toBe(PERMANENT);
    expect(classifyHttpStatus(503, [])).toBe(PERMANENT);
    expect(classifyHttpStatus(429, retryableStatusCodesOf({ retryableStatusCodes: [429] }))).toBe(RETRYABLE);
    expect(classifyHttpStatus(502, retryableStatusCodesOf({ retryableStatusCodes: [429] }))).toBe(PERMANENT);
    expect(classifyHttpStatus(202, [202])).toBe(SUCCESS);
  });

  it('counts the statuses a policy names as success so, whatever else they are', () => {
    expect(classifyHttpStatus(409, undefined, [409])).toBe(SUCCESS);
    expect(classifyHttpStatus(404, undefined, successStatusCodesOf({ successStatusCodes: [404] }))).toBe(SUCCESS);
    expect(classifyHttpStatus(404, undefined, successStatusCodesOf({}))).toBe(PERMANENT);
    expect(classifyHttpResponse({ status: 409, headers: { 'retry-after': '5' } }, { successStatusCodes: [409] })).toEqual({ outcome: SUCCESS });
  });
});

describe('classifyHttpResponse', () => {
  const now = Date.UTC(2030, 0, 1);

  it('reads Retry-After when the status is retryable', () => {
    const seconds = { 'retry-after': '120' };
    expect(classifyHttpResponse({ status: 503, headers: seconds })).toStrictEqual({ outcome: RETRYABLE, retryAfterMs: 120_000 });
    const date = { 'Retry-After': 'Tue, 01 Jan 2030 00:01:00 GMT' };
    const result = classifyHttpResponse({ status: 429, headers: date }, { nowMs: now });
    expect(result).toStrictEqual({ outcome: RETRYABLE, retryAfterMs: 60_000 });
  });

  it('ignores Retry-After unless the status is retryable', () => {
    for (const status of [200, 301, 404, 501]) {
      const result = classifyHttpResponse({ status, headers: { 'retry-after': '5' } });
      expect(result).toStrictEqual({ outcome: classifyHttpStatus(status) });
    }
  });

  it('leaves retryAfterMs out when the header is absent or invalid', () => {
    expect(classifyHttpResponse({ status: 503 })).toStrictEqual({ outcome: RETRYABLE });
    expect(classifyHttpResponse({ status: 503, headers: { 'retry-after': 'soon' } })).toStrictEqual({ outcome: RETRYABLE });
  });

  it('uses the custom list, and Date.now() when no time is given', () => {
    const headers = new Headers({ 'Retry-After': 'Sun, 06 Nov 1994 08:49:37 GMT' });
    const options = { retryableStatusCodes: [409] };
    expect(classifyHttpResponse({ status: 409, headers }, options)).toStrictEqual({ outcome: RETRYABLE, retryAfterMs: 0 });
    expect(classifyHttpResponse({ status: 503, headers }, options)).toStrictEqual({ outcome: PERMANENT });
  });

  it('classifies a real fetch Response from a loopback server', async () => {
    const server = await listen(createHttpServer((_req, res) => res.writeHead(503, { 'Retry-After': '7' }).end()));
    try {
      const response = await fetch(`http://127.0.0.1:${portOf(server)}/`);
      await response.arrayBuffer();
      expect(classifyHttpResponse(response)).toStrictEqual({ outcome: RETRYABLE, retryAfterMs: 7_000 });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('headerValue', () => {
  it.each([
    ['Headers', new Headers({ 'Retry-After': '5' })],
    ['a lower-case object (undici request)', { 'retry-after': '5' }],
    ['a mixed-case object', { 'Retry-After': '5' }],
    ['an upper-case object', { 'RETRY-AFTER': '5' }],
    ['an array value', { 'retry-after': ['5'] }],
    ['a Map', new Map([['Retry-After', '5']])],
    ['a lower-case Map', new Map([['retry-after', '5']])],
  ])('finds a header in %s, in any case', (_shape, headers) => {
    expect(headerValue(headers, 'Retry-After')).toBe('5');
    expect(headerValue(headers, 'retry-after')).toBe('5');
  });

  it('joins repeated fields as Headers#get does', () => {
    const headers = new Headers();
    headers.append('Vary', 'a');
    headers.append('Vary', 'b');
    expect(headerValue(headers, 'vary')).toBe('a, b');
    expect(headerValue({ vary: ['a', 'b'] }, 'Vary')).toBe('a, b');
    expect(headerValue(new Map([['Vary', ['a', 'b']]]), 'vary')).toBe('a, b');
    // Keys differing only in case are one field, in key order; numbers count as text, anything else is skipped.
    // (Untyped, as an error's `response.headers` arrives.)
    const untyped: unknown = { Vary: 'a', accept: 'x', VARY: ['b', 3, null, ['c']], vary: { not: 'text' } };
    expect(headerValue(untyped as HeadersLike, 'vary')).toBe('a, b, 3');
  });

  it('is undefined when absent, and never finds members of Object.prototype', () => {
    const absent = [undefined, {}, { 'retry-after': undefined }, { 'retry-after': [] }, new Headers(), new Map()];
    for (const headers of absent) expect(headerValue(headers, 'retry-after')).toBeUndefined();
    expect(headerValue({}, 'constructor')).toBeUndefined();
    expect(headerValue({}, '__proto__')).toBeUndefined();
  });
});

describe('errors from real failures', () => {
  let closedPort: number;
  let silent: Server;
  let hangUp: Server;
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    const probe = await listen(createServer());
    closedPort = portOf(probe);
    probe.close();
    await once(probe, 'close');
    silent = await listen(createServer((socket) => sockets.add(socket)));
    hangUp = await listen(createServer((socket) => socket.destroy()));
  });

  afterAll(() => {
    for (const socket of sockets) socket.destroy();
    silent.close();
    hangUp.close();
  });

  it('fetch to a closed port (TypeError: fetch failed, cause ECONNREFUSED) is a retryable network error', async () => {
    const error = await rejectionOf(fetch(`http://127.0.0.1:${closedPort}/`));
    expect(error).toBeInstanceOf(TypeError);
    expect(verdict(error)).toEqual(NETWORK);
  });

  it('node:net connect to a closed port (ECONNREFUSED) is a retryable network error', async () => {
    const socket = connect({ host: '127.0.0.1', port: closedPort });
    const [error] = (await once(socket, 'error').catch((e: unknown) => [e])) as unknown[];
    expect(error).toMatchObject({ code: 'ECONNREFUSED' });
    expect(verdict(error)).toEqual(NETWORK);
  });

  it('a server that hangs up (UND_ERR_SOCKET) is a retryable network error', async () => {
    const error = await rejectionOf(fetch(`http://127.0.0.1:${portOf(hangUp)}/`));
    expect(error).toMatchObject({ cause: { code: 'UND_ERR_SOCKET' } });
    expect(verdict(error)).toEqual(NETWORK);
  });

  it('fetch aborted by AbortSignal.timeout (TimeoutError) is a retryable timeout', async () => {
    const signal = AbortSignal.timeout(50);
    const error = await rejectionOf(fetch(`http://127.0.0.1:${portOf(silent)}/`, { signal }));
    expect(error).toMatchObject({ name: 'TimeoutError' });
    expect(verdict(error)).toEqual(TIMEOUT);
  });

  it("Node's AbortError whose cause is a TimeoutError is a timeout", async () => {
    const error = await rejectionOf(delay(10_000, undefined, { signal: AbortSignal.timeout(10) }));
    expect(error).toMatchObject({ name: 'AbortError', cause: { name: 'TimeoutError' } });
    expect(verdict(error)).toEqual(TIMEOUT);
  });

  it("a caller's abort is permanent, with or without a reason", async () => {
    for (const reason of [undefined, new Error('shutting down')]) {
      const controller = new AbortController();
      const pending = rejectionOf(fetch(`http://127.0.0.1:${portOf(silent)}/`, { signal: controller.signal }));
      controller.abort(reason);
      expect(verdict(await pending)).toEqual(NEITHER);
    }
  });

  it('programming errors are permanent', () => {
    const thrownBy = (fn: () => unknown): unknown => {
      try {
        fn();
      } catch (error) {
        return error;
      }
      throw new Error('expected a throw');
    };
    const errors: unknown[] = [
      thrownBy(() => (undefined as unknown as () => void)()),
      thrownBy(() => JSON.parse('{oops')),
      thrownBy(() => new Array(-1)),
      thrownBy(() => new URL('not a url')),
      ...[new TypeError('fetch failed'), 'a thrown string', null, undefined, 42, {}],
    ];
    for (const error of errors) expect(verdict(error)).toEqual(NEITHER);
  });
});

describe('error codes', () => {
  const timeouts = ['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'];
  const connection = ['ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN'];
  const others = ['EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED'];
  it.each([...timeouts, ...connection, ...others])('%s is a network error, bare or as a cause', (code) => {
    const timeout = timeouts.includes(code);
    for (const error of [withCode(code), fetchFailed(withCode(code)), { code }]) {
      expect(verdict(error)).toEqual({ network: true, timeout, outcome: RETRYABLE });
    }
  });

  it('ENOTFOUND (no such host) is deliberately not retryable, nor are other codes; EAI_AGAIN is', () => {
    expect(verdict(fetchFailed(withCode('ENOTFOUND', 'getaddrinfo ENOTFOUND nosuch.example')))).toEqual(NEITHER);
    expect(verdict(fetchFailed(withCode('EAI_AGAIN')))).toEqual(NETWORK);
    expect(verdict(withCode('ERR_INVALID_ARG_TYPE'))).toEqual(NEITHER);
    expect(verdict(withCode('EACCES'))).toEqual(NEITHER);
  });

  it('reads DOMException by name: its numeric code is not a Node code', () => {
    expect(verdict(new DOMException('aborted', 'AbortError'))).toEqual(NEITHER);
    expect(verdict(new DOMException('timed out', 'TimeoutError'))).toEqual(TIMEOUT);
  });

  it('looks into AggregateError (happy-eyeballs connect) and nested causes', () => {
    expect(isNetworkError(new AggregateError([new Error('x'), withCode('ECONNREFUSED')]))).toBe(true);
    const deep = new Error('outer', { cause: new Error('middle', { cause: withCode('ECONNRESET') }) });
    expect(isNetworkError(deep)).toBe(true);
  });

  it('stops on a cyclic chain and past the depth bound', () => {
    const cyclic = new Error('loop') as Error & { cause?: unknown };
    cyclic.cause = new Error('back', { cause: cyclic });
    expect(isNetworkError(cyclic)).toBe(false);
    let chain: unknown = withCode('ECONNRESET');
    for (let i = 0; i < 20; i++) chain = new Error(`level ${i}`, { cause: chain });
    expect(isNetworkError(chain)).toBe(false);
  });

  it('a timeout wins over an abort it caused; an abort wins over a network code', () => {
    const abortedByTimeout = new DOMException('aborted', 'AbortError') as DOMException & { cause?: unknown };
    abortedByTimeout.cause = new DOMException('timed out', 'TimeoutError');
    expect(classifyError(abortedByTimeout)).toBe(RETRYABLE);
    const abort = Object.assign(new Error('aborted', { cause: withCode('ECONNRESET') }), { name: 'AbortError' });
    expect(classifyError(abort)).toBe(PERMANENT);
  });
});
