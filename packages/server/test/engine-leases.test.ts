import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RetryTask } from '../src/domain/task.js';
import type { Engine } from '../src/engine/engine.js';
import { CompletionAbandonedError, FencedOutError } from '../src/engine/engine-errors.js';
import type { SqliteStore } from '../src/backends/sqlite/sqlite-store.js';
import {
  enqueue,
  FaultyStore,
  openTempStore,
  reply,
  startServer,
  taskFor,
  testEngine,
  waitFor,
  waitForStatus,
  type TestServer,
} from './engine-helpers.js';

let store: SqliteStore;
let cleanup: () => Promise<void>;
let server: TestServer | undefined;
const engines: Engine[] = [];

beforeEach(async () => {
  ({ store, cleanup } = await openTempStore());
});

afterEach(async () => {
  for (const engine of engines.splice(0)) await engine.stop({ graceMs: 500 });
  await server?.close();
  server = undefined;
  await cleanup();
});

function track<T extends { engine: Engine }>(made: T): T {
  engines.push(made.engine);
  return made;
}

async function attemptsOf(task: RetryTask) {
  return (await store.listAttempts(task.tenantId, task.taskId, { limit: 100 })).items;
}

describe('leases and fencing', () => {
  it('reclaims a task whose worker died, logs the lost attempt as lease_expired, then succeeds', async () => {
    server = await startServer((_req, res) => reply(res, 200));
    const [task] = await enqueue(store, undefined, taskFor(server.url));
    const [dead] = await store.claimDue(Date.now(), { limit: 1, leaseMs: 50, workerId: 'dead-worker' });
    expect(dead?.taskId).toBe(task!.taskId);

    const { engine, errors } = track(testEngine(store));
    await engine.start();
    const done = await waitForStatus(store, task!, 'SUCCEEDED');
    expect(done.attemptNumber).toBe(2);
    const log = await attemptsOf(task!);
    expect(log.map((a) => [a.attemptNumber, a.outcome, a.workerId])).toEqual([
      [1, 'lease_expired', 'dead-worker'],
      [2, 'succeeded', 'test-worker'],
    ]);
    expect(log[0]!.errorMessage).toContain('did not report');
    expect(server.requests.map((r) => r.headers['retryd-attempt'])).toEqual(['2']);
    expect(errors).toEqual([]);
  });

  it('fences out the late completion of a worker paused past its lease', async () => {
    server = await startServer((_req, res) => reply(res, 200));
    const faulty = new FaultyStore(store);
    const paused = track(testEngine(faulty.store, { workerId: 'paused', leaseMs: 300, attemptTimeoutMs: 200 }));
    await paused.engine.start();
    const resume = faulty.hold('completeAttempts');
    const [task] = await enqueue(store, paused.engine, taskFor(server.url));
    const claimed = await waitForStatus(store, task!, 'IN_FLIGHT');
    await waitFor(() => server!.requests.length === 1 && Date.now() > claimed.leaseExpiresAt! + 5, { what: 'the lease to lapse' });

    // Another instance reaps the lapsed lease and finishes the task.
    const other = track(testEngine(store, { workerId: 'other' }));
    await other.engine.start();
    const done = await waitForStatus(store, task!, 'SUCCEEDED');
    expect(done.leaseOwner).toBeNull();

    resume();
    await waitFor(() => paused.errors.find((e) => e.error instanceof FencedOutError), { what: 'the fenced-out report' });
    expect(await store.getTask(task!.tenantId, task!.taskId)).toEqual(done);
    expect((await attemptsOf(task!)).map((a) => [a.outcome, a.workerId])).toEqual([
      ['lease_expired', 'paused'],
      ['succeeded', 'other'],
    ]);
    expect(other.errors).toEqual([]);
  });
});

describe('stop()', () => {
  it('hands back the lease of a slow call when the grace period runs out, without counting an attempt', async () => {
    server = await startServer(() => undefined);
    const { engine } = track(testEngine(store));
    await engine.start();
    const [task] = await enqueue(store, engine, taskFor(server.url));
    await waitFor(() => server!.requests.length === 1);
    const started = Date.now();
    await engine.stop({ graceMs: 100 });
    expect(Date.now() - started).toBeLessThan(1_000);
    const released = await store.getTask(task!.tenantId, task!.taskId);
    expect(released).toMatchObject({ status: 'PENDING', attemptNumber: 0, leaseOwner: null, leaseExpiresAt: null });
    expect(released!.nextAttemptAt).toBeLessThanOrEqual(Date.now());
    expect(await attemptsOf(task!)).toEqual([]);
    expect(engine.load).toEqual({ inFlight: 0, held: 0, unwrittenResults: 0 });
  });

  it('lets calls in flight finish within the grace period and records them', async () => {
    server = await startServer((_req, res) => {
      setTimeout(() => reply(res, 200), 100);
    });
    const { engine } = track(testEngine(store));
    await engine.start();
    const [task] = await enqueue(store, engine, taskFor(server.url));
    await waitFor(() => server!.requests.length === 1);
    await engine.stop({ graceMs: 5_000 });
    expect(await store.getTask(task!.tenantId, task!.taskId)).toMatchObject({ status: 'SUCCEEDED', attemptNumber: 1 });
  });

  it('claims nothing after stop and is disposable', async () => {
    server = await startServer((_req, res) => reply(res, 200));
    {
      await using engine = track(testEngine(store)).engine;
      await engine.start();
    }
    const [task] = await enqueue(store, undefined, taskFor(server.url));
    await new Promise((resolve) => setImmediate(resolve));
    expect(await store.getTask(task!.tenantId, task!.taskId)).toMatchObject({ status: 'PENDING' });
  });
});

describe('store failures', () => {
  it('survives a failing claim and carries on once the store is back', async () => {
    server = await startServer((_req, res) => reply(res, 200));
    const faulty = new FaultyStore(store);
    faulty.failing.add('claimDue');
    const { engine, errors } = track(testEngine(faulty.store));
    await engine.start();
    const [task] = await enqueue(store, engine, taskFor(server.url));
    await waitFor(() => errors.length >= 2, { what: 'claim failures' });
    expect(errors.every((e) => e.operation === 'claim')).toBe(true);
    faulty.failing.delete('claimDue');
    await waitForStatus(store, task!, 'SUCCEEDED');
  });

  it('keeps an attempt result while the store fails and writes it once, when it is back', async () => {
    server = await startServer((_req, res) => reply(res, 200));
    const faulty = new FaultyStore(store);
    faulty.failing.add('completeAttempts');
    const { engine, errors } = track(testEngine(faulty.store));
    await engine.start();
    const [task] = await enqueue(store, engine, taskFor(server.url));
    await waitFor(() => errors.filter((e) => e.operation === 'complete').length >= 3, { what: 'write failures' });
    faulty.failing.delete('completeAttempts');
    await waitForStatus(store, task!, 'SUCCEEDED');
    expect(await attemptsOf(task!)).toHaveLength(1);
    expect(server.requests).toHaveLength(1);
  });

  it('gives a result up (and says so) only once its lease has lapsed; the reaper then logs the attempt', async () => {
    server = await startServer((_req, res, i) => reply(res, i === 0 ? 200 : 500));
    const faulty = new FaultyStore(store);
    faulty.failing.add('completeAttempts');
    const { engine, errors } = track(testEngine(faulty.store, { leaseMs: 400, attemptTimeoutMs: 300 }));
    await engine.start();
    const [task] = await enqueue(store, engine, taskFor(server.url, undefined, { policy: { ...taskFor('').policy!, maxAttempts: 1 } }));
    await waitFor(() => errors.find((e) => e.error instanceof CompletionAbandonedError), { what: 'the abandoned result' });
    faulty.failing.delete('completeAttempts');
    const exhausted = await waitForStatus(store, task!, 'EXHAUSTED');
    expect(exhausted.deadLetterReason).toBe('max_attempts');
    expect((await attemptsOf(task!)).map((a) => a.outcome)).toEqual(['lease_expired']);
  });
});
