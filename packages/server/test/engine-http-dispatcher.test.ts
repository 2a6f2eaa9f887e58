import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { classifyError, isTimeoutError } from '@retryd/core';
import { ManualClock } from '@retryd/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import type { AttemptResult } from '../src/engine/attempt-result.js';
import { describeError } from '../src/engine/describe-error.js';
import { attemptHeaders, HttpDispatcher, SNIPPET_BYTES } from '../src/engine/http-dispatcher.js';
import { loopbackGuard, reply, startServer, taskFor, type TestServer } from './engine-helpers.js';
import { waitFor } from './wait-for.js';

let server: TestServer | undefined;
let dispatcher: HttpDispatcher | undefined;
afterEach(async () => {
  await dispatcher?.destroy();
  await server?.close();
  server = undefined;
  dispatcher = undefined;
});

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe('HttpDispatcher', () => {
  it('sends the task’s request with the idempotency key, attempt number, task id and traceparent', async () => {
    server = await startServer((_req, res) => reply(res, 200, 'ok'));
    dispatcher = new HttpDispatcher({ targetGuard: loopbackGuard() });
    const task = taskFor(`${server.url}/orders?x=1`, undefined, {
      method: 'PUT',
      body: '{"a":1}',
      headers: { 'content-type': 'application/json', 'X-Custom': 'yes', 'IDEMPOTENCY-KEY': 'forged', 'Retryd-Attempt': '99' },
      idempotencyKey: 'key-123',
      traceContext: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    });
    const result = await dispatcher.dispatch(task, 3);
    expect(result).toMatchObject({ kind: 'response', status: 200, bodySnippet: 'ok' });
    const seen = server.requests[0];
    expect(seen).toMatchObject({ method: 'PUT', url: '/orders?x=1', body: '{"a":1}' });
    expect(seen?.headers).toMatchObject({
      'content-type': 'application/json',
      'x-custom': 'yes',
      'idempotency-key': 'key-123',
      'retryd-attempt': '3',
      'retryd-task-id': task.taskId,
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    });
  });

  it('lets retryd’s own headers win over a task’s, in any letter case', () => {
    const task = taskFor('http://x', undefined, { headers: { 'Idempotency-Key': 'other', Host: 'evil', a: 'b' }, idempotencyKey: 'k' });
    expect(attemptHeaders(task, 1)).toEqual({ a: 'b', 'idempotency-key': 'k', 'retryd-attempt': '1', 'retryd-task-id': task.taskId });
  });

  it('does not follow redirects: a 302 is the result', async () => {
    server = await startServer((req, res) => reply(res, req.url === '/start' ? 302 : 200, '', { location: '/elsewhere' }));
    dispatcher = new HttpDispatcher({ targetGuard: loopbackGuard() });
    const result = await dispatcher.dispatch(taskFor(`${server.url}/start`), 1);
    expect(result).toMatchObject({ kind: 'response', status: 302 });
    expect(server.requests).toHaveLength(1);
  });

  it('keeps only the first 4 KiB of a big body and stays usable afterwards', async () => {
    const big = 'x'.repeat(1024 * 1024);
    server = await startServer((req, res) => reply(res, req.url === '/big' ? 500 : 200, req.url === '/big' ? big : 'small'));
    dispatcher = new HttpDispatcher({ targetGuard: loopbackGuard() });
    const result = await dispatcher.dispatch(taskFor(`${server.url}/big`), 1);
    expect(result.kind === 'response' && result.bodySnippet).toBe('x'.repeat(SNIPPET_BYTES));
    const medium = await dispatcher.dispatch(taskFor(`${server.url}/small`), 1);
    expect(medium).toMatchObject({ kind: 'response', status: 200, bodySnippet: 'small' });
  });

  it('returns a null snippet for an empty body and decodes UTF-8', async () => {
    server = await startServer((req, res) => reply(res, 200, req.url === '/empty' ? '' : 'héllo ✓'));
    dispatcher = new HttpDispatcher({ targetGuard: loopbackGuard() });
    expect(await dispatcher.dispatch(taskFor(`${server.url}/empty`), 1)).toMatchObject({ bodySnippet: null });
    expect(await dispatcher.dispatch(taskFor(`${server.url}/text`), 1)).toMatchObject({ bodySnippet: 'héllo ✓' });
  });

  it('times each attempt on the injected clock: no timeout before attemptTimeoutMs has passed on it, then a retryable one', async () => {
    server = await startServer(() => undefined);
    const clock = new ManualClock();
    dispatcher = new HttpDispatcher({ attemptTimeoutMs: 150, clock, targetGuard: loopbackGuard() });
    let result: AttemptResult | undefined;
    const dispatched = dispatcher.dispatch(taskFor(server.url), 1).then((r) => (result = r));
    await waitFor('the request to reach the server', () => server!.requests.length === 1);
    await clock.advance(149);
    expect(result).toBeUndefined();
    await clock.advance(1);
    await dispatched;
    expect(result).toMatchObject({ kind: 'error', message: 'no response within 150 ms (ATTEMPT_TIMEOUT)' });
    expect(result?.kind === 'error' && isTimeoutError(result.error)).toBe(true);
    expect(clock.pendingCount).toBe(0);
  });

  it('leaves no timer behind once an attempt has its answer', async () => {
    server = await startServer((_req, res) => reply(res, 200, 'ok'));
    const clock = new ManualClock();
    dispatcher = new HttpDispatcher({ attemptTimeoutMs: 30_000, clock, targetGuard: loopbackGuard() });
    const answered = dispatcher.dispatch(taskFor(server.url), 1);
    // The attempt's timeout is a timer of the injected clock while the call is out…
    expect(clock.pendingCount).toBe(1);
    expect(await answered).toMatchObject({ kind: 'response', status: 200 });
    // …and is gone with its answer.
    expect(clock.pendingCount).toBe(0);
    await clock.advance(30_000);
  });

  it('keeps the status and what was read when the body stalls past the timeout', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(200);
      res.write('partial');
    });
    dispatcher = new HttpDispatcher({ attemptTimeoutMs: 150, targetGuard: loopbackGuard() });
    const result = await dispatcher.dispatch(taskFor(server.url), 1);
    expect(result).toMatchObject({ kind: 'response', status: 200, bodySnippet: 'partial' });
  });

  it('reports a refused connection readably, as retryable', async () => {
    const port = await freePort();
    dispatcher = new HttpDispatcher({ targetGuard: loopbackGuard() });
    const result = await dispatcher.dispatch(taskFor(`http://127.0.0.1:${port}/`), 1);
    expect(result.kind).toBe('error');
    if (result.kind !== 'error') return;
    expect(result.message).toContain('ECONNREFUSED');
    expect(result.message).toContain(`127.0.0.1:${port}`);
    expect(classifyError(result.error)).toBe('retryable');
  });

  it('loads a large body through loadBody, and reports a body that cannot be loaded', async () => {
    server = await startServer((_req, res) => reply(res, 204));
    const blobs = new Map([['blob-1', Buffer.from('a large body')]]);
    dispatcher = new HttpDispatcher({
      targetGuard: loopbackGuard(),
      loadBody: async (ref) => {
        const blob = blobs.get(ref);
        if (blob === undefined) throw Object.assign(new Error(`ENOENT: no blob ${ref}`), { code: 'ENOENT' });
        return blob;
      },
    });
    const ok = await dispatcher.dispatch(taskFor(server.url, undefined, { body: null, bodyRef: 'blob-1' }), 1);
    expect(ok).toMatchObject({ kind: 'response', status: 204 });
    expect(server.requests[0]?.body).toBe('a large body');
    const missing = await dispatcher.dispatch(taskFor(server.url, undefined, { body: null, bodyRef: 'gone' }), 1);
    expect(missing).toMatchObject({ kind: 'error', message: 'cannot load body gone: ENOENT: no blob gone' });
    const none = await new HttpDispatcher({ targetGuard: loopbackGuard() }).dispatch(taskFor(server.url, undefined, { body: null, bodyRef: 'blob-1' }), 1);
    expect(none).toMatchObject({ kind: 'error', message: 'cannot load body blob-1: no blob store configured' });
  });
});

describe('describeError', () => {
  const timeouts = { attemptTimeoutMs: 30_000, connectTimeoutMs: 5_000 };
  it('names timeouts with their settings and keeps codes and causes', () => {
    expect(describeError(Object.assign(new Error('x'), { code: 'UND_ERR_CONNECT_TIMEOUT' }), timeouts)).toBe(
      'could not connect within 5000 ms (UND_ERR_CONNECT_TIMEOUT)',
    );
    expect(describeError(Object.assign(new Error('x'), { code: 'UND_ERR_BODY_TIMEOUT' }), timeouts)).toBe(
      'response body stalled for 30000 ms (UND_ERR_BODY_TIMEOUT)',
    );
    const socket = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET', cause: new Error('read ECONNRESET') });
    expect(describeError(socket, timeouts)).toBe('other side closed (UND_ERR_SOCKET): read ECONNRESET');
  });

  it('reads the errors of an AggregateError whose message is empty, and caps the length', () => {
    const aggregate = Object.assign(new AggregateError([new Error('connect ECONNREFUSED ::1:80'), new Error('connect ECONNREFUSED 127.0.0.1:80')], ''), {
      code: 'ECONNREFUSED',
    });
    expect(describeError(aggregate, timeouts)).toBe('connect ECONNREFUSED ::1:80; connect ECONNREFUSED 127.0.0.1:80');
    expect(describeError(new Error('y'.repeat(2_000)), timeouts)).toHaveLength(500);
    expect(describeError('a thrown string', timeouts)).toBe('a thrown string');
  });
});
