import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatTraceparent, parseTraceparent } from '../src/domain/traceparent.js';
import { createLogger } from '../src/service/logger.js';
import { tracingRequested } from '../src/service/tracing.js';
import { DEFAULT_CONFIG } from '../src/service/retryd-config.js';
import { startRetryd, type RunningRetryd } from '../src/service/start-retryd.js';
import { reply, startServer, type TestServer } from './engine-helpers.js';
import { startServiceProcess } from './service-harness.js';
import { waitFor } from './wait-for.js';

// Attempt spans in the caller's trace, the traceparent each attempt sends, and the per-attempt debug log line, on a
// real service (SQLite) calling a real loopback target.

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const CALLER_TRACEPARENT = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'retryd-tracing-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A tracer whose spans are kept in memory, as an OTLP exporter would receive them. */
function memoryTracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { tracer: provider.getTracer('retryd-test'), spans: () => exporter.getFinishedSpans(), shutdown: () => provider.shutdown() };
}

/** Collects every JSON log line. */
function logSink(): { lines: Record<string, unknown>[]; sink: Writable } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, sink };
}

async function start(store: string, tracer: ReturnType<typeof memoryTracing>['tracer'] | undefined, sink: Writable, level = 'info'): Promise<RunningRetryd> {
  const config = { ...DEFAULT_CONFIG, port: 0, store: `sqlite:${store}`, allowTargets: ['127.0.0.1/32'], sqliteSync: 'normal' as const, graceMs: 0 };
  return startRetryd(config, createLogger(level, sink), tracer === undefined ? {} : { tracer });
}

async function enqueue(service: RunningRetryd, targetUrl: string, initialDelayMs: number, traceparent?: string): Promise<string> {
  const policy = { maxAttempts: 5, backoffType: 'FIXED', initialDelayMs, multiplier: 1, maxDelayMs: initialDelayMs, jitterType: 'NONE' };
  const res = await fetch(`${service.url}/retry-tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(traceparent === undefined ? {} : { traceparent }) },
    body: JSON.stringify({ targetUrl, method: 'POST', body: { order: 1 }, policy }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { taskId: string }).taskId;
}

async function statusOf(service: RunningRetryd, taskId: string): Promise<string> {
  return ((await (await fetch(`${service.url}/retry-tasks/${taskId}`)).json()) as { status: string }).status;
}

/** A target answering 503 to its first request and 200 afterwards. */
const flaky = (): Promise<TestServer> => startServer((_req, res, index) => reply(res, index === 0 ? 503 : 200));

/** The trace id and parent id of a `traceparent` the target received. */
function received(target: TestServer, index: number): { traceId: string; parentId: string } {
  const value = String(target.requests[index]?.headers.traceparent);
  const [, traceId = '', parentId = ''] = value.split('-');
  return { traceId, parentId };
}

describe('attempt spans', () => {
  it('makes each attempt a CLIENT span in the caller’s trace, and sends the span’s own traceparent', async () => {
    const target = await flaky();
    const tracing = memoryTracing();
    const { sink } = logSink();
    const service = await start(join(dir, 'two-attempts.db'), tracing.tracer, sink);
    try {
      const taskId = await enqueue(service, `${target.url}/hooks/orders`, 20, CALLER_TRACEPARENT);
      await waitFor('the task to succeed', async () => (await statusOf(service, taskId)) === 'SUCCEEDED');
      const spans = await waitFor('two spans', () => tracing.spans().length >= 2 && tracing.spans());
      expect(spans).toHaveLength(2);
      const [first, second] = spans as [ReadableSpan, ReadableSpan];
      for (const span of spans) {
        expect(span.name).toBe('POST');
        expect(span.kind).toBe(SpanKind.CLIENT);
        expect(span.spanContext().traceId).toBe(CALLER_TRACE);
        expect(span.parentSpanContext?.spanId).toBe(CALLER_SPAN);
      }
      const port = Number(new URL(target.url).port);
      expect(first.attributes).toEqual({
        'retry.task_id': taskId,
        'retry.attempt': 1,
        'http.request.method': 'POST',
        'url.scheme': 'http',
        'server.address': '127.0.0.1',
        'server.port': port,
        'http.response.status_code': 503,
        'retry.outcome': 'retry_scheduled',
        'retry.delay_ms': 20,
        'error.type': '503',
      });
      expect(first.status).toEqual({ code: SpanStatusCode.ERROR, message: 'HTTP 503' });
      expect(second.attributes).toEqual({
        'retry.task_id': taskId,
        'retry.attempt': 2,
        'http.request.method': 'POST',
        'url.scheme': 'http',
        'server.address': '127.0.0.1',
        'server.port': port,
        'http.response.status_code': 200,
        'retry.outcome': 'succeeded',
      });
      expect(second.status.code).toBe(SpanStatusCode.UNSET);
      // The target is the attempt's child: same trace, parent = that attempt's span.
      expect(received(target, 0)).toEqual({ traceId: CALLER_TRACE, parentId: first.spanContext().spanId });
      expect(received(target, 1)).toEqual({ traceId: CALLER_TRACE, parentId: second.spanContext().spanId });
    } finally {
      await service.close();
      await tracing.shutdown();
      await target.close();
    }
  });

  it('keeps the attempts after a restart in the caller’s trace', async () => {
    const target = await flaky();
    const store = join(dir, 'restart.db');
    const before = memoryTracing();
    const { sink } = logSink();
    const first = await start(store, before.tracer, sink);
    let taskId: string;
    try {
      // A retry 1.5 s after the 503: the service stops in between, with the task PENDING in the store.
      taskId = await enqueue(first, `${target.url}/hook`, 1_500, CALLER_TRACEPARENT);
      await waitFor('the first attempt’s span', () => before.spans().length === 1);
    } finally {
      await first.close();
    }
    expect(target.requests).toHaveLength(1);
    const after = memoryTracing();
    const second = await start(store, after.tracer, sink);
    try {
      await waitFor('the task to succeed after the restart', async () => (await statusOf(second, taskId)) === 'SUCCEEDED');
      const [span] = await waitFor('the second attempt’s span', () => after.spans().length === 1 && after.spans());
      expect(span?.spanContext().traceId).toBe(CALLER_TRACE);
      expect(span?.parentSpanContext?.spanId).toBe(CALLER_SPAN);
      expect(span?.attributes).toMatchObject({ 'retry.task_id': taskId, 'retry.attempt': 2, 'retry.outcome': 'succeeded' });
      expect(received(target, 1)).toEqual({ traceId: CALLER_TRACE, parentId: span?.spanContext().spanId });
    } finally {
      await second.close();
      await before.shutdown();
      await after.shutdown();
      await target.close();
    }
  });

  it('never records a target’s path, query or credentials', async () => {
    const target = await startServer((_req, res) => reply(res, 400));
    const tracing = memoryTracing();
    const { sink } = logSink();
    const service = await start(join(dir, 'redaction.db'), tracing.tracer, sink);
    try {
      const taskId = await enqueue(service, `${target.url}/services/T0SECRETPATH/hook?token=s3cr3t-query`, 5);
      await waitFor('the task to fail', async () => (await statusOf(service, taskId)) === 'FAILED');
      const spans = await waitFor('the span', () => tracing.spans().length === 1 && tracing.spans());
      const recorded = JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, status: s.status, events: s.events })));
      expect(recorded).not.toContain('s3cr3t');
      expect(recorded).not.toContain('token');
      expect(recorded).not.toContain('SECRETPATH');
      expect(spans[0]?.attributes).toMatchObject({ 'retry.outcome': 'failed', 'http.response.status_code': 400, 'error.type': '400' });
      // Enqueued without a traceparent: each attempt is the root of its own trace, and the target is its child.
      expect(spans[0]?.parentSpanContext).toBeUndefined();
      expect(received(target, 0)).toEqual({ traceId: spans[0]?.spanContext().traceId, parentId: spans[0]?.spanContext().spanId });
    } finally {
      await service.close();
      await tracing.shutdown();
      await target.close();
    }
  });

  it('sends the caller’s traceparent unchanged when tracing is off', async () => {
    const target = await startServer((_req, res) => reply(res, 200));
    const { sink } = logSink();
    const service = await start(join(dir, 'off.db'), undefined, sink);
    try {
      const taskId = await enqueue(service, `${target.url}/hook`, 5, CALLER_TRACEPARENT);
      await waitFor('the task to succeed', async () => (await statusOf(service, taskId)) === 'SUCCEEDED');
      expect(target.requests[0]?.headers.traceparent).toBe(CALLER_TRACEPARENT);
    } finally {
      await service.close();
      await target.close();
    }
  });
});

describe('the per-attempt log line', () => {
  it('logs each attempt at debug with the task, attempt, origin, outcome, status, duration and delay, and nothing of the path', async () => {
    const target = await flaky();
    const { lines, sink } = logSink();
    const service = await start(join(dir, 'debug.db'), undefined, sink, 'debug');
    try {
      const taskId = await enqueue(service, `${target.url}/hooks/SECRETPATH?token=s3cr3t`, 25);
      await waitFor('the task to succeed', async () => (await statusOf(service, taskId)) === 'SUCCEEDED');
      const attempts = await waitFor(
        'two attempt lines',
        () => {
          const found = lines.filter((l) => l.event === 'attempt');
          return found.length === 2 && found;
        },
      );
      expect(attempts[0]).toMatchObject({ level: 20, taskId, attempt: 1, target: target.url, outcome: 'retry_scheduled', status: 503 });
      expect(attempts[0]?.delayMs).toBeGreaterThanOrEqual(24);
      expect(attempts[0]?.delayMs).toBeLessThanOrEqual(26);
      expect(attempts[1]).toMatchObject({ level: 20, taskId, attempt: 2, target: target.url, outcome: 'succeeded', status: 200 });
      expect(attempts[1]).not.toHaveProperty('delayMs');
      for (const line of attempts) expect(typeof line.durationMs).toBe('number');
      const text = JSON.stringify(lines);
      expect(text).not.toContain('s3cr3t');
      expect(text).not.toContain('SECRETPATH');
    } finally {
      await service.close();
      await target.close();
    }
  });

  it('writes no attempt line at info', async () => {
    const target = await startServer((_req, res) => reply(res, 200));
    const { lines, sink } = logSink();
    const service = await start(join(dir, 'info.db'), undefined, sink);
    try {
      const taskId = await enqueue(service, `${target.url}/hook`, 5);
      await waitFor('the task to succeed', async () => (await statusOf(service, taskId)) === 'SUCCEEDED');
    } finally {
      await service.close();
      await target.close();
    }
    expect(lines.some((l) => l.event === 'attempt')).toBe(false);
    expect(lines.find((l) => l.event === 'start')).toMatchObject({ tracing: 'off' });
  });
});

describe('parseTraceparent', () => {
  it('reads a version 00 traceparent and writes it back', () => {
    expect(parseTraceparent(CALLER_TRACEPARENT)).toEqual({ traceId: CALLER_TRACE, spanId: CALLER_SPAN, sampled: true });
    expect(formatTraceparent({ traceId: CALLER_TRACE, spanId: CALLER_SPAN, sampled: true })).toBe(CALLER_TRACEPARENT);
    expect(parseTraceparent(`00-${CALLER_TRACE}-${CALLER_SPAN}-00`)?.sampled).toBe(false);
  });

  it.each([
    ['version ff', `ff-${CALLER_TRACE}-${CALLER_SPAN}-01`],
    ['a zero trace id', `00-${'0'.repeat(32)}-${CALLER_SPAN}-01`],
    ['a zero span id', `00-${CALLER_TRACE}-${'0'.repeat(16)}-01`],
    ['upper-case hex', `00-${CALLER_TRACE.toUpperCase()}-${CALLER_SPAN}-01`],
    ['a short trace id', `00-${CALLER_TRACE.slice(1)}-${CALLER_SPAN}-01`],
    ['nothing', ''],
  ])('refuses %s', (_what, value) => {
    expect(parseTraceparent(value)).toBeUndefined();
  });
});

describe('retryd serve with OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it('exports the attempt spans over OTLP/HTTP, under the service name retryd, and flushes them at stop', async () => {
    const collector = await startServer((_req, res) => reply(res, 200, '{}', { 'content-type': 'application/json' }));
    const target = await startServer((_req, res) => reply(res, 200));
    const service = await startServiceProcess(['--store', `sqlite:${join(dir, 'otlp.db')}`, '--allow-targets', '127.0.0.1/32'], {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      // Long enough that only the flush at stop can have sent the span.
      OTEL_BSP_SCHEDULE_DELAY: '60000',
    });
    try {
      expect(service.logs.find((l) => l.event === 'start')).toMatchObject({ tracing: 'otlp' });
      const res = await fetch(`${service.url}/retry-tasks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', traceparent: CALLER_TRACEPARENT },
        body: JSON.stringify({ targetUrl: `${target.url}/hook?token=s3cr3t`, method: 'POST', body: {} }),
      });
      expect(res.status).toBe(201);
      await waitFor('the attempt', () => target.requests.length === 1);
      expect(collector.requests).toHaveLength(0);
      service.child.kill('SIGTERM');
      expect(await service.exited).toBe(0);
      const exported = collector.requests.filter((r) => r.method === 'POST' && r.url === '/v1/traces');
      expect(exported).toHaveLength(1);
      const body = exported[0]?.body ?? '';
      expect(body).toContain(CALLER_TRACE);
      expect(body).toContain('"service.name"');
      expect(body).toContain('"retryd"');
      expect(body).not.toContain('s3cr3t');
    } finally {
      service.child.kill('SIGKILL');
      await collector.close();
      await target.close();
    }
  });
});

describe('the OpenTelemetry SDK', () => {
  // Run in a fresh process on the built service: which CommonJS packages were loaded is what require.cache holds.
  const script = (store: string) => `
    import { createRequire } from 'node:module';
    const dist = ${JSON.stringify(join(import.meta.dirname, '..', 'dist', 'service'))};
    const { startRetryd } = await import(dist + '/start-retryd.js');
    const { DEFAULT_CONFIG } = await import(dist + '/retryd-config.js');
    const { createLogger } = await import(dist + '/logger.js');
    const service = await startRetryd({ ...DEFAULT_CONFIG, port: 0, store: ${JSON.stringify(`sqlite:${store}`)} }, createLogger('silent'));
    const loaded = Object.keys(createRequire(import.meta.url).cache).filter((k) => k.includes('@opentelemetry/'));
    await service.close();
    console.log(JSON.stringify([...new Set(loaded.map((k) => k.split('@opentelemetry/')[1].split('/')[0]))]));`;
  const loadedWith = async (env: NodeJS.ProcessEnv, store: string): Promise<string[]> => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script(join(dir, store))], {
      env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '', ...env },
      timeout: 20_000,
    });
    return JSON.parse(stdout.trim()) as string[];
  };

  it('is not loaded by a service without an OTLP endpoint; only the API is', async () => {
    expect(await loadedWith({}, 'no-sdk.db')).toEqual(['api']);
  });

  it('is loaded when OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set', async () => {
    expect(await loadedWith({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:9/v1/traces' }, 'sdk.db')).toContain('sdk-trace-base');
  });
});

describe('tracingRequested', () => {
  it.each([
    [{}, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'false' }, true],
  ])('%j → %s', (env, expected) => {
    expect(tracingRequested(env)).toBe(expected);
  });
});
