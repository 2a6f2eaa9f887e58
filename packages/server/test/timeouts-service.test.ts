import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/service/logger.js';
import { DEFAULT_CONFIG, type RetrydConfig } from '../src/service/retryd-config.js';
import { startRetryd, type RunningRetryd } from '../src/service/start-retryd.js';
import { startServer, type TestServer } from './engine-helpers.js';
import { unansweredPort } from './unanswered-port.js';
import { waitFor } from './wait-for.js';

// Timeouts per task and per target on the running service, against real downstreams on loopback: one that never
// answers (the attempt timeout), and one whose listen queue is full so that it never answers a SYN (the connect
// timeout). The service's own stay long (30 s, 5 s): an attempt that ends within a second ended on its own timeout.

const ONE_ATTEMPT = { maxAttempts: 1, backoffType: 'FIXED', initialDelayMs: 1_000, multiplier: 1, maxDelayMs: 1_000, jitterType: 'NONE' };

interface AttemptView {
  durationMs: number;
  errorMessage: string | null;
  outcome: string;
}

let dir: string;
let service: RunningRetryd | undefined;
const cleanups: (() => Promise<unknown> | void)[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'retryd-timeouts-'));
});
afterEach(async () => {
  await service?.close();
  service = undefined;
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function start(config: Partial<RetrydConfig> = {}): Promise<RunningRetryd> {
  service = await startRetryd(
    { ...DEFAULT_CONFIG, port: 0, store: `sqlite:${join(dir, `${cleanups.length}-${Date.now()}.db`)}`, allowTargets: ['127.0.0.1/32'], graceMs: 0, ...config },
    createLogger('silent'),
  );
  return service;
}

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${(service as RunningRetryd).url}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Enqueues one task and waits for its single attempt to be logged. */
async function onlyAttempt(request: Record<string, unknown>): Promise<AttemptView> {
  const created = await call('POST', '/retry-tasks', { method: 'POST', policy: ONE_ATTEMPT, ...request });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const taskId = created.body.taskId as string;
  return waitFor(
    `the attempt of task ${taskId}`,
    async () => {
      const { body } = await call('GET', `/retry-tasks/${taskId}/attempts`);
      return (body.items as AttemptView[])[0];
    },
    20_000,
  );
}

/** A downstream that takes every request and never answers it. */
async function silentDownstream(): Promise<TestServer> {
  const server = await startServer(() => undefined);
  cleanups.push(() => server.close());
  return server;
}

describe('the attempt timeout', () => {
  it("ends an attempt at the task's own timeout, where the service's is 30 s", async () => {
    const downstream = await silentDownstream();
    await start();
    const attempt = await onlyAttempt({ targetUrl: `${downstream.url}/slow`, attemptTimeoutMs: 200 });
    expect(attempt.outcome).toBe('exhausted');
    expect(attempt.errorMessage).toContain('no response within 200 ms');
    expect(attempt.durationMs).toBeGreaterThanOrEqual(195);
    expect(attempt.durationMs).toBeLessThan(5_000);
  });

  it("applies the target's timeout to its tasks that set none, and a task's own over it", async () => {
    const downstream = await silentDownstream();
    await start();
    const put = await call('PUT', `/targets/${encodeURIComponent(downstream.url)}`, { attemptTimeoutMs: 300 });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.settings).toMatchObject({ attemptTimeoutMs: 300, connectTimeoutMs: null });

    const fromTarget = await onlyAttempt({ targetUrl: `${downstream.url}/a` });
    expect(fromTarget.errorMessage).toContain('no response within 300 ms');
    expect(fromTarget.durationMs).toBeGreaterThanOrEqual(295);
    expect(fromTarget.durationMs).toBeLessThan(5_000);

    const own = await onlyAttempt({ targetUrl: `${downstream.url}/b`, attemptTimeoutMs: 150 });
    expect(own.errorMessage).toContain('no response within 150 ms');
    expect(own.durationMs).toBeLessThan(295);
  });
});

describe('the connect timeout', () => {
  it("ends a connect the target never answers at the task's own timeout, then at the target's, then at the service's", async () => {
    const { port, close } = await unansweredPort();
    cleanups.push(close);
    await start({ connectTimeoutMs: 400 });
    const url = `http://127.0.0.1:${port}`;

    const own = await onlyAttempt({ targetUrl: `${url}/a`, connectTimeoutMs: 150 });
    expect(own.errorMessage).toContain('could not connect within 150 ms');
    expect(own.durationMs).toBeGreaterThanOrEqual(145);
    expect(own.durationMs).toBeLessThan(5_000);

    const fromService = await onlyAttempt({ targetUrl: `${url}/b` });
    expect(fromService.errorMessage).toContain('could not connect within 400 ms');
    expect(fromService.durationMs).toBeGreaterThanOrEqual(395);

    expect((await call('PUT', `/targets/${encodeURIComponent(url)}`, { connectTimeoutMs: 250 })).status).toBe(200);
    const target = await onlyAttempt({ targetUrl: `${url}/c` });
    expect(target.errorMessage).toContain('could not connect within 250 ms');
    expect(target.durationMs).toBeGreaterThanOrEqual(245);
    expect(target.durationMs).toBeLessThan(395);
  }, 30_000);
});
