import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileBlobStore } from '../src/blobs/file-blob-store.js';
import { DEFAULT_TENANT } from '../src/domain/task.js';
import type { Engine } from '../src/engine/engine.js';
import { TargetGuard, parseAllowList } from '../src/security/target-guard.js';
import type { SqliteStore } from '../src/backends/sqlite/sqlite-store.js';
import { TaskService } from '../src/tasks/task-service.js';
import { FaultyStore, FAST_POLICY, openTempStore, reply, startServer, testEngine, waitFor, waitForStatus, type TestServer } from './engine-helpers.js';

let store: SqliteStore;
let faulty: FaultyStore;
let cleanup: () => Promise<void>;
let engine: Engine;
let service: TaskService;
let server: TestServer;
let wakes = 0;
/** Requests held by the downstream until released (for a busy engine). */
let held: (() => void)[] = [];
let holding = false;

beforeEach(async () => {
  let dir: string;
  ({ store, dir, cleanup } = await openTempStore());
  faulty = new FaultyStore(store);
  server = await startServer((_req, res) => {
    if (holding) held.push(() => reply(res, 200));
    else reply(res, 200);
  });
  ({ engine } = testEngine(faulty.store, { concurrency: 2 }));
  wakes = 0;
  service = new TaskService({
    store: faulty.store,
    blobs: new FileBlobStore(join(dir, 'blobs')),
    targetGuard: new TargetGuard({ allow: parseAllowList('127.0.0.1/32') }),
    wake: () => {
      wakes++;
      engine.wake();
    },
    handOff: engine,
  });
  await engine.start();
});

afterEach(async () => {
  holding = false;
  for (const release of held) release();
  held = [];
  await engine.stop({ graceMs: 1_000 });
  await server.close();
  await cleanup();
});

const input = (extra: Record<string, unknown> = {}) => ({ targetUrl: `${server.url}/x`, method: 'POST', policy: FAST_POLICY, ...extra });

describe('hand-off from the enqueue to the local engine', () => {
  it('inserts a task due now already leased to the engine and runs it without a claim', async () => {
    // The engine's one claim at start, on the empty store.
    await waitFor(() => faulty.calls.get('claimDue') === 1, { what: 'the claim at start' });
    const { kind, task } = await service.enqueue(DEFAULT_TENANT, input());
    expect(kind).toBe('created');
    expect(task).toMatchObject({ status: 'IN_FLIGHT', leaseOwner: engine.workerId, fencingToken: 1 });
    expect(task.leaseExpiresAt).toBeGreaterThan(task.createdAt);
    const done = await waitForStatus(store, task, 'SUCCEEDED');
    expect(done.attemptNumber).toBe(1);
    expect(server.requests).toHaveLength(1);
    expect(faulty.calls.get('claimDue')).toBe(1);
    expect(faulty.calls.get('completeAndClaim') ?? 0).toBe(0);
    // Nothing was left waiting, so the engine was not woken to look for it.
    expect(wakes).toBe(0);
  });

  it('leaves tasks due later, and those beyond the free capacity, to a claim', async () => {
    holding = true;
    const later = await service.enqueue(DEFAULT_TENANT, input({ delayMs: 60_000 }));
    expect(later.task).toMatchObject({ status: 'PENDING', leaseOwner: null, fencingToken: 0 });
    const results = await service.enqueueBatch(DEFAULT_TENANT, [input(), input(), input()]);
    const statuses = results.map((r) => (r.kind === 'error' ? r.kind : r.task.status));
    // Concurrency 2: two handed over, the third waits for a slot.
    expect(statuses).toEqual(['IN_FLIGHT', 'IN_FLIGHT', 'PENDING']);
    expect(wakes).toBe(2);
    const third = results[2];
    if (third === undefined || third.kind === 'error') throw new Error('expected the third task');
    await waitForStatus(store, third.task, 'PENDING');
    holding = false;
    for (const release of held.splice(0)) release();
    await waitForStatus(store, third.task, 'SUCCEEDED');
    expect(server.requests).toHaveLength(3);
  });

  it('gives the slot back when the key was taken, and when the write fails', async () => {
    const first = await service.enqueue(DEFAULT_TENANT, input({ idempotencyKey: 'order-1' }));
    await waitForStatus(store, first.task, 'SUCCEEDED');
    const again = await service.enqueue(DEFAULT_TENANT, input({ idempotencyKey: 'order-1' }));
    expect(again.kind).toBe('replayed');
    faulty.failing.add('insertTasks');
    await expect(service.enqueue(DEFAULT_TENANT, input())).rejects.toThrow('the sqlite store failed');
    faulty.failing.delete('insertTasks');
    // Both slots are free again: a batch of two is handed over whole.
    const results = await service.enqueueBatch(DEFAULT_TENANT, [input(), input()]);
    expect(results.map((r) => (r.kind === 'error' ? r.kind : r.task.status))).toEqual(['IN_FLIGHT', 'IN_FLIGHT']);
  });

  it('hands nothing to a stopped engine', async () => {
    await engine.stop({ graceMs: 1_000 });
    const { task } = await service.enqueue(DEFAULT_TENANT, input());
    expect(task).toMatchObject({ status: 'PENDING', leaseOwner: null });
  });
});
