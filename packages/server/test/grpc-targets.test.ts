import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { GrpcStatus } from '@retryd/core';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/service/logger.js';
import { DEFAULT_CONFIG, type RetrydConfig } from '../src/service/retryd-config.js';
import { startRetryd, type RunningRetryd, type StartRetrydOptions } from '../src/service/start-retryd.js';
import { TEST_ENCRYPTION_KEY } from './api-harness.js';
import { GrpcDownstream, makeTestCertificates, type GrpcMethod } from './grpc-downstream.js';
import { cleanupAfterEach } from './service-harness.js';
import { POSTGRES_STORE, REDIS_STORE, SQLITE_STORE, type SharedStore } from './shared-stores.js';
import { waitFor } from './wait-for.js';

// gRPC targets end to end: a real `retryd` (startRetryd, in process) calls real grpc-js servers on 127.0.0.1, allowed by
// --allow-targets; tasks are enqueued and read through the HTTP API.

const quiet = createLogger('error', new Writable({ write: (_chunk, _enc, done) => done() }));
const cleanup = cleanupAfterEach();
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  await Promise.all([SQLITE_STORE.drop(), POSTGRES_STORE.drop(), REDIS_STORE.drop()]);
});

/** Fast retries, so each test takes well under a second of backoff. */
const FAST = { maxAttempts: 5, backoffType: 'FIXED', initialDelayMs: 20, multiplier: 1, maxDelayMs: 20, jitterType: 'NONE' } as const;

interface TaskRead {
  taskId: string;
  status: string;
  attemptNumber: number;
  deadLetterReason: string | null;
  lastError: string | null;
  lastResponseStatus: number | null;
  headers: Record<string, string>;
  targetKey?: string;
  targetUrl: string;
  nextAttemptAt: number | null;
}

interface AttemptRead {
  attemptNumber: number;
  startedAt: number;
  durationMs: number;
  responseStatus: number | null;
  errorMessage: string | null;
  outcome: string;
  responseBodySnippet: string | null;
  nextAttemptAt: number | null;
}

/** A service on a store of its own, allowed to call loopback. */
async function service(overrides: Partial<RetrydConfig> = {}, store: SharedStore = SQLITE_STORE, options: StartRetrydOptions = {}): Promise<RunningRetryd> {
  const dir = mkdtempSync(join(tmpdir(), 'retryd-grpc-'));
  dirs.push(dir);
  const config: RetrydConfig = {
    ...DEFAULT_CONFIG,
    port: 0,
    store: store === SQLITE_STORE ? `sqlite:${join(dir, 'retryd.db')}` : store.freshUrl(),
    sqliteSync: 'normal',
    graceMs: 0,
    allowTargets: ['127.0.0.1/32', '::1/128'],
    attemptTimeoutMs: 5_000,
    ...overrides,
  };
  const running = await startRetryd(config, quiet, options);
  cleanup.push(() => running.close());
  return running;
}

async function downstream(methods: Record<string, GrpcMethod>, tls?: { key: Buffer; cert: Buffer }): Promise<GrpcDownstream> {
  const server = new GrpcDownstream(methods);
  await server.start(tls);
  cleanup.push(() => server.close());
  return server;
}

async function call<T>(running: RunningRetryd, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${running.url}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as T };
}

async function enqueue(running: RunningRetryd, task: Record<string, unknown>): Promise<TaskRead> {
  const res = await call<TaskRead>(running, 'POST', '/retry-tasks', { policy: FAST, ...task });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function ended(running: RunningRetryd, taskId: string): Promise<{ task: TaskRead; attempts: AttemptRead[] }> {
  let task: TaskRead | undefined;
  await waitFor(
    `task ${taskId} to end`,
    async () => {
      task = (await call<TaskRead>(running, 'GET', `/retry-tasks/${taskId}`)).body;
      return ['SUCCEEDED', 'FAILED', 'EXHAUSTED'].includes(task.status);
    },
  );
  const attempts = (await call<{ items: AttemptRead[] }>(running, 'GET', `/retry-tasks/${taskId}/attempts`)).body.items;
  return { task: task as TaskRead, attempts };
}

/** UNAVAILABLE to a key's first two calls, then OK with the request's bytes reversed. */
const flaky: GrpcMethod = (received, n) =>
  n <= 2 ? { code: GrpcStatus.UNAVAILABLE, details: `not yet (${n})` } : { ok: Buffer.from(received.message).reverse() };

const STORES: SharedStore[] = [SQLITE_STORE, POSTGRES_STORE, REDIS_STORE];

describe.each(STORES)('a gRPC target on $name', (store) => {
  it('retries UNAVAILABLE with the same idempotency-key metadata, then succeeds, keeping the reply as base64', async () => {
    const server = await downstream({ Charge: flaky });
    const running = await service({}, store);
    const message = Buffer.from([0x0a, 0x03, 0x66, 0x6f, 0x6f, 0xff]);
    const created = await enqueue(running, {
      targetUrl: `grpc://127.0.0.1:${server.port}/test.Svc/Charge`,
      body: message.toString('base64'),
      idempotencyKey: 'charge-1',
    });
    expect(created).toMatchObject({ targetUrl: `grpc://127.0.0.1:${server.port}/test.Svc/Charge` });
    const { task, attempts } = await ended(running, created.taskId);
    expect(task).toMatchObject({ status: 'SUCCEEDED', attemptNumber: 3, lastResponseStatus: null });
    const calls = server.callsWith('charge-1');
    expect(calls).toHaveLength(3);
    expect(calls.map((c) => c.message.equals(message))).toEqual([true, true, true]);
    expect(calls.map((c) => c.metadata.get('retryd-attempt')[0])).toEqual(['1', '2', '3']);
    expect(attempts.map((a) => [a.outcome, a.responseStatus, a.errorMessage])).toEqual([
      ['retry_scheduled', null, 'grpc UNAVAILABLE: not yet (1)'],
      ['retry_scheduled', null, 'grpc UNAVAILABLE: not yet (2)'],
      ['succeeded', null, null],
    ]);
    expect(Buffer.from(attempts[2]?.responseBodySnippet ?? '', 'base64')).toEqual(Buffer.from(message).reverse());
  });
});

describe('gRPC outcomes', () => {
  it('ends a task FAILED after one call on INVALID_ARGUMENT, a code not retried', async () => {
    const server = await downstream({ Charge: () => ({ code: GrpcStatus.INVALID_ARGUMENT, details: 'amount must be positive' }) });
    const running = await service();
    const created = await enqueue(running, { targetUrl: `grpc://127.0.0.1:${server.port}/test.Svc/Charge`, body: '', idempotencyKey: 'bad-1' });
    const { task } = await ended(running, created.taskId);
    expect(task).toMatchObject({
      status: 'FAILED',
      attemptNumber: 1,
      deadLetterReason: 'permanent_status:INVALID_ARGUMENT',
      lastError: 'grpc INVALID_ARGUMENT: amount must be positive',
    });
    expect(server.callsWith('bad-1')).toHaveLength(1);
  });

  it("retries the policy's own gRPC codes: ABORTED when the policy names it", async () => {
    const server = await downstream({ Charge: (_c, n) => (n === 1 ? { code: GrpcStatus.ABORTED } : { ok: Buffer.alloc(0) }) });
    const running = await service();
    const created = await enqueue(running, {
      targetUrl: `grpc://127.0.0.1:${server.port}/test.Svc/Charge`,
      policy: { ...FAST, retryableStatusCodes: ['ABORTED'] },
      idempotencyKey: 'aborted-1',
    });
    const { task, attempts } = await ended(running, created.taskId);
    expect(task).toMatchObject({ status: 'SUCCEEDED', attemptNumber: 2 });
    expect(attempts[0]?.errorMessage).toBe('grpc ABORTED');
  });

  it('waits as long as grpc-retry-pushback-ms asks before the retry', async () => {
    const server = await downstream({
      Charge: (_c, n) => (n === 1 ? { code: GrpcStatus.UNAVAILABLE, trailers: { 'grpc-retry-pushback-ms': '1200' } } : { ok: Buffer.from('done') }),
    });
    const running = await service();
    const created = await enqueue(running, { targetUrl: `grpc://127.0.0.1:${server.port}/test.Svc/Charge`, idempotencyKey: 'push-1' });
    const { task, attempts } = await ended(running, created.taskId);
    expect(task).toMatchObject({ status: 'SUCCEEDED', attemptNumber: 2 });
    const [first, second] = server.callsWith('push-1');
    // The policy's own delay is 20 ms: only the pushback explains a wait of over a second.
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(1_200 - 5);
    const scheduled = attempts[0] as AttemptRead;
    expect((scheduled.nextAttemptAt ?? 0) - (scheduled.startedAt + scheduled.durationMs)).toBeGreaterThanOrEqual(1_199);
  });

  it('holds the whole target on a RESOURCE_EXHAUSTED pushback, as a 429 Retry-After holds an HTTP one', async () => {
    const server = await downstream({ Charge: () => ({ code: GrpcStatus.RESOURCE_EXHAUSTED, trailers: { 'grpc-retry-pushback-ms': '60000' } }) });
    const running = await service();
    const targetKey = `grpc://127.0.0.1:${server.port}`;
    const created = await enqueue(running, { targetUrl: `${targetKey}/test.Svc/Charge`, idempotencyKey: 'hold-1' });
    let heldUntil: number | null = null;
    await waitFor(
      'the target to be held',
      async () => {
        heldUntil = (await call<{ heldUntil: number | null }>(running, 'GET', `/targets/${encodeURIComponent(targetKey)}`)).body.heldUntil;
        return heldUntil !== null;
      },
    );
    const task = (await call<TaskRead>(running, 'GET', `/retry-tasks/${created.taskId}`)).body;
    // The hold and the task's own retry both wait the pushback (less the moment the call took).
    expect(heldUntil).toBeGreaterThanOrEqual(Date.now() + 55_000);
    expect(task.nextAttemptAt).toBeGreaterThanOrEqual(Date.now() + 55_000);
    expect(server.callsWith('hold-1')).toHaveLength(1);
  });

  it('does not retry when grpc-retry-pushback-ms is negative', async () => {
    const server = await downstream({ Charge: () => ({ code: GrpcStatus.UNAVAILABLE, details: 'go away', trailers: { 'grpc-retry-pushback-ms': '-1' } }) });
    const running = await service();
    const created = await enqueue(running, { targetUrl: `grpc://127.0.0.1:${server.port}/test.Svc/Charge`, idempotencyKey: 'push-2' });
    const { task } = await ended(running, created.taskId);
    expect(task).toMatchObject({ status: 'FAILED', attemptNumber: 1, deadLetterReason: 'retry_refused' });
    expect(task.lastError).toBe('grpc UNAVAILABLE: go away (grpc-retry-pushback-ms "-1": the target asks for no retry)');
    expect(server.callsWith('push-2')).toHaveLength(1);
  });

  it("sends the attempt's timeout as the call's deadline, and retries DEADLINE_EXCEEDED", async () => {
    const server = await downstream({ Slow: (_c, n) => (n === 1 ? 'never' : { ok: Buffer.from('late but fine') }) });
    const running = await service();
    const created = await enqueue(running, {
      targetUrl: `grpc://127.0.0.1:${server.port}/test.Svc/Slow`,
      idempotencyKey: 'slow-1',
      attemptTimeoutMs: 300,
    });
    const { task, attempts } = await ended(running, created.taskId);
    expect(task).toMatchObject({ status: 'SUCCEEDED', attemptNumber: 2 });
    expect(attempts[0]).toMatchObject({ outcome: 'retry_scheduled', responseStatus: null });
    expect(attempts[0]?.errorMessage).toMatch(/^grpc DEADLINE_EXCEEDED/);
    const [first] = server.callsWith('slow-1');
    // grpc-timeout carried it: the server knows the deadline, about 300 ms after the call.
    expect((first?.deadline ?? Infinity) - (first?.at ?? 0)).toBeLessThanOrEqual(300);
    expect((first?.deadline ?? 0) - (first?.at ?? 0)).toBeGreaterThan(100);
  });
});

describe('gRPC metadata', () => {
  it('sends -bin headers as bytes and credential headers sealed at rest, shown redacted, revealed only on the call', async () => {
    const server = await downstream({ Charge: () => ({ ok: Buffer.from('ok') }) });
    const running = await service({ encryptionKey: TEST_ENCRYPTION_KEY });
    const trace = Buffer.from([0, 1, 2, 250, 251]);
    const created = await enqueue(running, {
      targetUrl: `grpc://127.0.0.1:${server.port}/test.Svc/Charge`,
      headers: { 'X-Trace-Bin': trace.toString('base64'), Authorization: 'Bearer s3cret-grpc', 'x-plain': 'visible' },
      idempotencyKey: 'meta-1',
    });
    expect(created.headers).toEqual({ 'X-Trace-Bin': trace.toString('base64'), Authorization: '[REDACTED]', 'x-plain': 'visible' });
    const { task } = await ended(running, created.taskId);
    expect(task.status).toBe('SUCCEEDED');
    expect(JSON.stringify(task)).not.toContain('s3cret');
    const [received] = server.callsWith('meta-1');
    expect(received?.metadata.get('x-trace-bin')[0]).toEqual(trace);
    expect(received?.metadata.get('authorization')[0]).toBe('Bearer s3cret-grpc');
    expect(received?.metadata.get('x-plain')[0]).toBe('visible');
    expect(received?.metadata.get('retryd-task-id')[0]).toBe(created.taskId);
  });

  it('calls a grpcs:// target through TLS, trusting the CA of --grpc-ca-file, with the host name as authority', async () => {
    const certs = makeTestCertificates();
    cleanup.push(async () => certs.remove());
    const server = await downstream({ Charge: () => ({ ok: Buffer.from('secured') }) }, certs);
    const trusted = await service({ grpcCaFile: certs.caFile });
    const created = await enqueue(trusted, { targetUrl: `grpcs://localhost:${server.port}/test.Svc/Charge`, idempotencyKey: 'tls-1' });
    expect((await ended(trusted, created.taskId)).task).toMatchObject({ status: 'SUCCEEDED', attemptNumber: 1 });
    // Dialled at the checked address (127.0.0.1), named as the URL names it.
    expect(server.callsWith('tls-1').map((c) => c.host)).toEqual([`localhost:${server.port}`]);

    // Without the CA the certificate is not trusted: no call is accepted, the attempt fails UNAVAILABLE.
    const untrusted = await service();
    const refused = await enqueue(untrusted, {
      targetUrl: `grpcs://localhost:${server.port}/test.Svc/Charge`,
      idempotencyKey: 'tls-2',
      policy: { ...FAST, maxAttempts: 1 },
    });
    const { task } = await ended(untrusted, refused.taskId);
    expect(task).toMatchObject({ status: 'EXHAUSTED' });
    expect(task.lastError).toMatch(/^grpc UNAVAILABLE/);
    expect(server.callsWith('tls-2')).toHaveLength(0);
  });
});

describe('gRPC enqueue validation', () => {
  const problems = async (running: RunningRetryd, task: Record<string, unknown>) => {
    const res = await call<{ errors?: { field: string; message: string }[] }>(running, 'POST', '/retry-tasks', task);
    expect(res.status).toBe(400);
    return res.body.errors ?? [];
  };

  it('refuses what a gRPC target cannot take, and gRPC codes on an HTTP target, naming the field and the rule', async () => {
    const running = await service();
    const grpcUrl = 'grpc://127.0.0.1:50051/test.Svc/Charge';
    expect(await problems(running, { targetUrl: grpcUrl, policy: { ...FAST, retryableStatusCodes: [503] } })).toEqual([
      expect.objectContaining({
        field: 'policy.retryableStatusCodes',
        message: 'policy.retryableStatusCodes must be gRPC status code names (e.g. "UNAVAILABLE", "ABORTED") for a grpc:// or grpcs:// target, not HTTP statuses',
      }),
    ]);
    expect(await problems(running, { targetUrl: 'http://127.0.0.1:8080/hook', method: 'POST', policy: { ...FAST, retryableStatusCodes: ['UNAVAILABLE'] } })).toEqual([
      expect.objectContaining({
        field: 'policy.retryableStatusCodes',
        message: 'policy.retryableStatusCodes must be HTTP statuses (e.g. 429, 503) for an http or https target, not gRPC status code names',
      }),
    ]);
    expect(await problems(running, { targetUrl: grpcUrl, body: 'not base64!' })).toEqual([
      expect.objectContaining({ field: 'body', message: "body must be the request message's bytes in standard base64 (RFC 4648 §4, with = padding) for a gRPC target" }),
    ]);
    expect(await problems(running, { targetUrl: grpcUrl, body: { json: true } })).toEqual([expect.objectContaining({ field: 'body' })]);
    expect(await problems(running, { targetUrl: grpcUrl, method: 'GET' })).toEqual([
      expect.objectContaining({ field: 'method', message: 'method must be POST or absent for a gRPC target (a gRPC call is an HTTP/2 POST), got "GET"' }),
    ]);
    expect(await problems(running, { targetUrl: grpcUrl, headers: { 'x-id-bin': '%%%' } })).toEqual([expect.objectContaining({ field: 'headers.x-id-bin' })]);
    expect(await problems(running, { targetUrl: grpcUrl, headers: { 'grpc-timeout': '1S' } })).toEqual([expect.objectContaining({ field: 'headers.grpc-timeout' })]);
    expect(await problems(running, { targetUrl: 'grpc://127.0.0.1/test.Svc/Charge' })).toEqual([expect.objectContaining({ field: 'targetUrl' })]);
    expect(await problems(running, { targetUrl: 'grpc://127.0.0.1:50051/not-a-method' })).toEqual([expect.objectContaining({ field: 'targetUrl' })]);
  });

  it('checks a registered policy against a gRPC target at enqueue', async () => {
    const running = await service();
    const put = await call(running, 'POST', '/retry-policies', { policyId: 'http-only', ...FAST, retryableStatusCodes: [503] });
    expect(put.status).toBe(201);
    expect(await problems(running, { targetUrl: 'grpc://127.0.0.1:50051/test.Svc/Charge', policyId: 'http-only' })).toEqual([
      expect.objectContaining({
        field: 'policyId',
        message:
          'policyId must name a policy whose retryableStatusCodes fits the target; retryableStatusCodes of policy http-only must be gRPC status code names (e.g. "UNAVAILABLE", "ABORTED") for a grpc:// or grpcs:// target, not HTTP statuses',
      }),
    ]);
    const grpcPolicy = await call(running, 'POST', '/retry-policies', { policyId: 'grpc-only', ...FAST, retryableStatusCodes: ['ABORTED'] });
    expect(grpcPolicy.status).toBe(201);
    const ok = await call(running, 'POST', '/retry-tasks', { targetUrl: 'grpc://127.0.0.1:50051/test.Svc/Charge', policyId: 'grpc-only' });
    expect(ok.status).toBe(201);
    expect(await problems(running, { targetUrl: 'http://127.0.0.1:8080/hook', method: 'POST', policyId: 'grpc-only' })).toEqual([
      expect.objectContaining({ field: 'policyId' }),
    ]);
  });

  it('keys a gRPC target by its origin, its host as an http: URL spells it', async () => {
    const running = await service();
    const created = await enqueue(running, { targetUrl: 'grpc://LOCALHOST:50051/test.Svc/Charge', delayMs: 3_600_000 });
    expect(created.targetUrl).toBe('grpc://localhost:50051/test.Svc/Charge');
    const targets = await call<{ items: { targetKey: string }[] }>(running, 'GET', '/targets');
    expect(targets.body.items.map((t) => t.targetKey)).toContain('grpc://localhost:50051');
  });
});

describe('gRPC attempt spans', () => {
  it('makes each attempt a CLIENT span with the RPC attributes, and sends its traceparent as metadata', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    cleanup.push(() => provider.shutdown());
    const server = await downstream({ Charge: (_c, n) => (n === 1 ? { code: GrpcStatus.UNAVAILABLE } : { ok: Buffer.from('ok') }) });
    const running = await service({}, SQLITE_STORE, { tracer: provider.getTracer('retryd-test') });
    const created = await enqueue(running, { targetUrl: `grpc://127.0.0.1:${server.port}/test.Svc/Charge`, idempotencyKey: 'traced-1' });
    expect((await ended(running, created.taskId)).task.status).toBe('SUCCEEDED');
    await waitFor('two attempt spans', () => exporter.getFinishedSpans().length >= 2);
    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => [span.name, span.kind, span.attributes['rpc.grpc.status_code'], span.status.code])).toEqual([
      ['test.Svc/Charge', SpanKind.CLIENT, GrpcStatus.UNAVAILABLE, SpanStatusCode.ERROR],
      ['test.Svc/Charge', SpanKind.CLIENT, GrpcStatus.OK, SpanStatusCode.UNSET],
    ]);
    expect(spans[0]?.attributes).toMatchObject({
      'rpc.system': 'grpc',
      'rpc.service': 'test.Svc',
      'rpc.method': 'Charge',
      'url.scheme': 'grpc',
      'server.address': '127.0.0.1',
      'server.port': server.port,
      'error.type': 'UNAVAILABLE',
      'retry.outcome': 'retry_scheduled',
    });
    expect(spans[0]?.attributes['http.request.method']).toBeUndefined();
    // Each call carries its own span as the parent of whatever the target traces.
    const sent = server.callsWith('traced-1').map((c) => String(c.metadata.get('traceparent')[0]).split('-')[2]);
    expect(sent).toEqual(spans.map((span) => span.spanContext().spanId));
  });
});
