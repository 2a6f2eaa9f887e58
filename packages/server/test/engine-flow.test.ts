import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AttemptLog, RetryTask } from '../src/domain/task.js';
import type { Engine } from '../src/engine/engine.js';
import type { SqliteStore } from '../src/backends/sqlite/sqlite-store.js';
import { enqueue, FAST_POLICY, openTempStore, reply, startServer, taskFor, testEngine, waitForStatus, type Reported, type TestServer } from './engine-helpers.js';
import { makePolicy } from './fixtures/tasks.js';
import { waitFor } from './wait-for.js';

let store: SqliteStore;
let cleanup: () => Promise<void>;
let engine: Engine;
let errors: Reported;
let server: TestServer | undefined;
const deadLetters: RetryTask[] = [];
const attempts: AttemptLog[] = [];
/** The task each onAttempt call was given, rebuilt by the engine from its claim and the store's summary. */
const attemptTasks: RetryTask[] = [];

beforeEach(async () => {
  ({ store, cleanup } = await openTempStore());
  deadLetters.length = 0;
  attempts.length = 0;
  attemptTasks.length = 0;
  ({ engine, errors } = testEngine(store, {
    onDeadLetter: (task) => deadLetters.push(task),
    onAttempt: (task, attempt) => {
      attemptTasks.push(task);
      attempts.push(attempt);
    },
  }));
  await engine.start();
});

afterEach(async () => {
  await engine.stop({ graceMs: 1_000 });
  await server?.close();
  server = undefined;
  await cleanup();
});

async function attemptsOf(task: RetryTask): Promise<AttemptLog[]> {
  return (await store.listAttempts(task.tenantId, task.taskId, { limit: 100 })).items;
}

describe('Engine with a real downstream', () => {
  it('succeeds on the first try', async () => {
    server = await startServer((_req, res) => reply(res, 200, 'done'));
    const [task] = await enqueue(store, engine, taskFor(server.url));
    const done = await waitForStatus(store, task!, 'SUCCEEDED');
    expect(done).toMatchObject({ attemptNumber: 1, lastResponseStatus: 200, lastError: null, leaseOwner: null, nextAttemptAt: null });
    expect(await attemptsOf(task!)).toMatchObject([{ attemptNumber: 1, outcome: 'succeeded', responseStatus: 200, responseBodySnippet: 'done', workerId: 'test-worker' }]);
    expect(attempts).toHaveLength(1);
    expect(errors).toEqual([]);
  });

  it('retries 503, 503 then succeeds on 200, with the same Idempotency-Key every time', async () => {
    server = await startServer((_req, res, i) => reply(res, i < 2 ? 503 : 200));
    const [task] = await enqueue(store, engine, taskFor(server.url, FAST_POLICY, { idempotencyKey: 'order-42' }));
    await waitForStatus(store, task!, 'SUCCEEDED');
    expect(server.requests.map((r) => r.headers['idempotency-key'])).toEqual(['order-42', 'order-42', 'order-42']);
    expect(server.requests.map((r) => r.headers['retryd-attempt'])).toEqual(['1', '2', '3']);
    expect((await attemptsOf(task!)).map((a) => [a.attemptNumber, a.responseStatus, a.outcome])).toEqual([
      [1, 503, 'retry_scheduled'],
      [2, 503, 'retry_scheduled'],
      [3, 200, 'succeeded'],
    ]);
    // The fixed 5 ms backoff separates the attempts.
    const [a, b, c] = server.requests.map((r) => r.at);
    expect(b! - a!).toBeGreaterThanOrEqual(4);
    expect(c! - b!).toBeGreaterThanOrEqual(4);
  });

  it('dead-letters a 400 at once and never retries it', async () => {
    server = await startServer((_req, res) => reply(res, 400, '{"error":"bad"}'));
    const [task] = await enqueue(store, engine, taskFor(server.url));
    const failed = await waitForStatus(store, task!, 'FAILED');
    expect(failed).toMatchObject({ attemptNumber: 1, deadLetterReason: 'permanent_status:400', lastError: 'HTTP 400' });
    expect(server.requests).toHaveLength(1);
    // The hook gets the whole task exactly as stored, though the store only returned a summary.
    await waitFor('the dead letter', () => deadLetters.length === 1);
    expect(deadLetters).toEqual([failed]);
    expect(attemptTasks).toEqual([failed]);
  });

  it('treats a 302 as a failure and does not follow it', async () => {
    server = await startServer((_req, res) => reply(res, 302, '', { location: '/elsewhere' }));
    const [task] = await enqueue(store, engine, taskFor(`${server.url}/start`));
    expect(await waitForStatus(store, task!, 'FAILED')).toMatchObject({ deadLetterReason: 'permanent_status:302' });
    expect(server.requests.map((r) => r.url)).toEqual(['/start']);
  });

  it('exhausts after maxAttempts', async () => {
    server = await startServer((_req, res) => reply(res, 500));
    const [task] = await enqueue(store, engine, taskFor(server.url, { ...FAST_POLICY, maxAttempts: 3 }));
    const exhausted = await waitForStatus(store, task!, 'EXHAUSTED');
    expect(exhausted).toMatchObject({ attemptNumber: 3, deadLetterReason: 'max_attempts' });
    expect(server.requests).toHaveLength(3);
    const log = await attemptsOf(task!);
    expect(log.map((a) => a.outcome)).toEqual(['retry_scheduled', 'retry_scheduled', 'exhausted']);
    await waitFor('three attempts and the dead letter', () => attempts.length === 3 && deadLetters.length === 1);
    expect(deadLetters).toEqual([exhausted]);
    expect(attempts).toEqual(log);
    expect(attemptTasks.map((t) => [t.status, t.attemptNumber, t.nextAttemptAt === null])).toEqual([
      ['PENDING', 1, false],
      ['PENDING', 2, false],
      ['EXHAUSTED', 3, true],
    ]);
    expect(attemptTasks.at(-1)).toEqual(exhausted);
  });

  it('exhausts at once when Retry-After lands past the budget', async () => {
    server = await startServer((_req, res) => reply(res, 429, '', { 'retry-after': '60' }));
    const [task] = await enqueue(store, engine, taskFor(server.url, { ...FAST_POLICY, totalBudgetMs: 10_000 }));
    expect(await waitForStatus(store, task!, 'EXHAUSTED')).toMatchObject({ attemptNumber: 1, deadLetterReason: 'retry_after_beyond_budget' });
    expect(server.requests).toHaveLength(1);
  });

  it('retries after a timeout', async () => {
    server = await startServer((_req, res, i) => (i === 0 ? undefined : reply(res, 200)));
    await engine.stop();
    ({ engine, errors } = testEngine(store, { attemptTimeoutMs: 100 }));
    await engine.start();
    const [task] = await enqueue(store, engine, taskFor(server.url));
    await waitForStatus(store, task!, 'SUCCEEDED');
    expect((await attemptsOf(task!)).map((a) => [a.outcome, a.errorMessage])).toEqual([
      ['retry_scheduled', 'no response within 100 ms (ATTEMPT_TIMEOUT)'],
      ['succeeded', null],
    ]);
  });

  it('retries a refused connection', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const [task] = await enqueue(store, engine, taskFor(`http://127.0.0.1:${port}/`, { ...FAST_POLICY, maxAttempts: 2 }));
    const exhausted = await waitForStatus(store, task!, 'EXHAUSTED');
    expect(exhausted.lastError).toContain('ECONNREFUSED');
    expect((await attemptsOf(task!)).map((a) => a.outcome)).toEqual(['retry_scheduled', 'exhausted']);
  });

  it('caps the logged response body at 4 KiB', async () => {
    server = await startServer((_req, res) => reply(res, 400, 'é'.repeat(100_000)));
    const [task] = await enqueue(store, engine, taskFor(server.url));
    await waitForStatus(store, task!, 'FAILED');
    const [attempt] = await attemptsOf(task!);
    expect(Buffer.byteLength(attempt!.responseBodySnippet!)).toBe(4096);
  });

  it('runs named policies as the store holds them, re-read after invalidatePolicy()', async () => {
    server = await startServer((_req, res) => reply(res, 503));
    await store.putPolicy(makePolicy('short', { policy: { ...FAST_POLICY, maxAttempts: 2 } }), 'create');
    const [first] = await enqueue(store, engine, taskFor(server.url, FAST_POLICY, { policy: null, policyId: 'short' }));
    expect(await waitForStatus(store, first!, 'EXHAUSTED')).toMatchObject({ attemptNumber: 2 });
    await store.putPolicy(makePolicy('short', { policy: { ...FAST_POLICY, maxAttempts: 3 }, version: 2 }), 'replace');
    engine.invalidatePolicy(first!.tenantId, 'short');
    const [second] = await enqueue(store, engine, taskFor(server.url, FAST_POLICY, { policy: null, policyId: 'short' }));
    expect(await waitForStatus(store, second!, 'EXHAUSTED')).toMatchObject({ attemptNumber: 3 });
  });

  it('reports a throwing hook and carries on', async () => {
    await engine.stop();
    ({ engine, errors } = testEngine(store, {
      onAttempt: () => {
        throw new Error('hook broke');
      },
    }));
    await engine.start();
    server = await startServer((_req, res, i) => reply(res, i === 0 ? 503 : 200));
    const [task] = await enqueue(store, engine, taskFor(server.url));
    await waitForStatus(store, task!, 'SUCCEEDED');
    await waitFor('two reported errors', () => errors.length === 2);
    expect(errors.map((e) => [e.operation, (e.error as Error).message])).toEqual([
      ['hook', 'hook broke'],
      ['hook', 'hook broke'],
    ]);
  });
});
