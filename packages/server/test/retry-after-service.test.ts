import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, type RetrydConfig } from '../src/service/retryd-config.js';
import { startRetryd, type RunningRetryd } from '../src/service/start-retryd.js';
import { capturedLogger } from './captured-logger.js';
import { reply, startServer, type TestServer } from './engine-helpers.js';
import { waitFor } from './wait-for.js';
import { serviceNow } from './service-clock.js';

// What a downstream's Retry-After may ask of the running service: no more than `--max-retry-after` (an hour by
// default) unless the task's policy backs off longer itself, for the task and for a hold of its whole target; and an
// operator ends any hold (`POST /targets/{targetKey}/release`, or the breaker's close or reset).

const policy = { maxAttempts: 5, backoffType: 'FIXED', initialDelayMs: 50, multiplier: 1, maxDelayMs: 50, jitterType: 'NONE' };

describe('Retry-After in the running service', () => {
  let dir: string;
  let config: RetrydConfig;
  let service: RunningRetryd | undefined;
  const servers: TestServer[] = [];
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'retryd-retry-after-'));
    config = { ...DEFAULT_CONFIG, port: 0, store: `sqlite:${join(dir, 'retryd.db')}`, sqliteSync: 'normal', graceMs: 0, allowTargets: ['127.0.0.1/32'] };
  });
  afterEach(async () => {
    await service?.close();
    service = undefined;
    for (const server of servers.splice(0)) await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function start(overrides: Partial<RetrydConfig> = {}): Promise<{ call: (method: string, path: string, body?: unknown) => Promise<{ status: number; body: Record<string, unknown> }>; lines: Record<string, unknown>[] }> {
    const { logger, lines } = capturedLogger();
    const started = await startRetryd({ ...config, ...overrides }, logger);
    service = started;
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${started.url}${path}`, {
        method,
        ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    return { call, lines };
  }

  const target = (server: TestServer) => `/targets/${encodeURIComponent(server.url)}`;
  async function enqueue(call: Awaited<ReturnType<typeof start>>['call'], server: TestServer): Promise<string> {
    const created = await call('POST', '/retry-tasks', { targetUrl: `${server.url}/hook`, method: 'POST', policy });
    expect(created.status).toBe(201);
    return (created.body as { taskId: string }).taskId;
  }
  const statusOf = async (call: Awaited<ReturnType<typeof start>>['call'], taskId: string) => (await call('GET', `/retry-tasks/${taskId}`)).body;

  it('dead-letters a task whose Retry-After asks for decades, instead of parking it until 2058', async () => {
    const downstream = await startServer((_req, res) => reply(res, 429, '', { 'retry-after': '999999999' }));
    servers.push(downstream);
    const { call } = await start();
    const taskId = await enqueue(call, downstream);
    const task = await waitFor(
      'the task to end',
      async () => {
        const body = await statusOf(call, taskId);
        return body.status !== 'PENDING' && body.status !== 'IN_FLIGHT' && body;
      },
    );
    expect(task).toMatchObject({
      status: 'EXHAUSTED',
      deadLetterReason: 'retry_after_beyond_limit',
      nextAttemptAt: null,
      lastError: 'HTTP 429: Retry-After asked for 999999999 s, more than the 3600 s allowed',
    });
    // The whole target is held ten minutes at most (MAX_RETRY_AFTER_HOLD_MS), not for the decades asked.
    const held = (await call('GET', target(downstream))).body.heldUntil as number;
    expect(held).toBeLessThanOrEqual(serviceNow() + 600_000);
  });

  it("holds a target no longer than --max-retry-after, and dead-letters the task that asked for longer", async () => {
    const downstream = await startServer((_req, res) => reply(res, 503, '', { 'retry-after': '600' }));
    servers.push(downstream);
    const { call } = await start({ maxRetryAfterMs: 2_000 });
    const before = serviceNow();
    const taskId = await enqueue(call, downstream);
    await waitFor('the task to be dead-lettered', async () => (await statusOf(call, taskId)).status === 'EXHAUSTED');
    expect(await statusOf(call, taskId)).toMatchObject({ deadLetterReason: 'retry_after_beyond_limit' });
    const held = (await call('GET', target(downstream))).body.heldUntil as number | null;
    // Held for the 2 s allowed, not for the 600 s asked.
    expect(held).not.toBeNull();
    expect(held!).toBeLessThanOrEqual(serviceNow() + 2_000);
    expect(held!).toBeGreaterThanOrEqual(before);
  });

  it.each([
    ['the release action', { path: '/release', body: undefined }],
    ["the breaker's close", { path: '/breaker', body: { action: 'close' } }],
    ["the breaker's reset", { path: '/breaker', body: { action: 'reset' } }],
  ])('lets an operator end a Retry-After hold: %s', async (_name, { path, body }) => {
    let busy = true;
    const downstream = await startServer((_req, res) => (busy ? reply(res, 503, '', { 'retry-after': '300' }) : reply(res, 200, 'ok')));
    servers.push(downstream);
    const { call, lines } = await start();
    const first = await enqueue(call, downstream);
    // Its own retry waits the 300 s asked, and so does the whole target.
    await waitFor('the Retry-After hold', async () => ((await call('GET', target(downstream))).body.heldUntil as number | null) !== null);
    busy = false;
    const second = await enqueue(call, downstream);
    expect((await statusOf(call, second)).status).toBe('PENDING');
    const ended = await call('POST', `${target(downstream)}${path}`, body);
    expect(ended.status).toBe(200);
    expect(ended.body.heldUntil).toBeNull();
    // The task that waited on the hold goes at once; the first keeps the wait its own answer asked for.
    await waitFor('the held task to succeed once released', async () => (await statusOf(call, second)).status === 'SUCCEEDED');
    expect(await statusOf(call, first)).toMatchObject({ status: 'PENDING' });
    expect(lines.filter((l) => l.event === 'target_released')).toMatchObject([{ level: 30, tenantId: 'default', target: downstream.url, cause: 'operator' }]);
  });
});
