import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RetryTask } from '../src/domain/task.js';
import type { InsertResult, Store } from '../src/store/store.js';
import { EnqueueBatcher } from '../src/tasks/enqueue-batcher.js';
import { startApi, type ApiHarness } from './api-harness.js';
import { makeTask } from './fixtures/tasks.js';
import { waitFor } from './wait-for.js';

let api: ApiHarness;
let insertCalls: number[] = [];
beforeAll(async () => {
  api = await startApi({
    wrapStore: (store: Store) => {
      const insertTasks = store.insertTasks.bind(store);
      store.insertTasks = async (tasks) => {
        insertCalls.push(tasks.length);
        return insertTasks(tasks);
      };
      return store;
    },
  });
});
afterAll(async () => {
  await api.close();
});

const task = (n: number, extra: Record<string, unknown> = {}) => ({
  targetUrl: `https://api.example.com/items/${n}`,
  method: 'PUT',
  body: { n },
  ...extra,
});

describe('POST /retry-tasks/batch', () => {
  it('enqueues the valid entries in one transaction and gives each entry its own result, in order', async () => {
    insertCalls = [];
    const res = await api.call('POST', '/retry-tasks/batch', {
      tasks: [task(1), task(2, { method: 'BREW' }), task(3), task(4, { targetUrl: 'http://10.0.0.1/' }), task(5, { delayMs: -1 })],
    });
    expect(res.status).toBe(200);
    const results = res.body.results as { status: number; task?: { taskId: string; targetUrl: string }; error?: Record<string, unknown> }[];
    expect(results.map((r) => r.status)).toEqual([201, 400, 201, 400, 400]);
    expect(results[0]?.task?.targetUrl).toBe('https://api.example.com/items/1');
    expect(results[2]?.task?.targetUrl).toBe('https://api.example.com/items/3');
    expect(results[1]?.error).toMatchObject({
      code: 'VALIDATION_FAILED',
      status: 400,
      errors: [expect.objectContaining({ field: 'tasks[1].method', rule: expect.stringContaining('one of GET') })],
    });
    expect(results[3]?.error).toMatchObject({ code: 'TARGET_NOT_ALLOWED', errors: [expect.objectContaining({ field: 'tasks[3].targetUrl' })] });
    expect(results[4]?.error).toMatchObject({ errors: [expect.objectContaining({ field: 'tasks[4].delayMs' })] });
    expect(insertCalls).toEqual([2]);
    for (const r of [results[0], results[2]]) {
      expect((await api.call('GET', `/retry-tasks/${r?.task?.taskId}`)).status).toBe(200);
    }
  });

  it('answers ids instead of whole tasks to Prefer: return=minimal, in order, errors and replays as usual', async () => {
    const tasks = [
      task(31, { idempotencyKey: 'minimal-31' }),
      // Decided without a lookup (an address), refused; and one decided in place and created (a public address).
      task(32, { targetUrl: 'http://10.0.0.1/' }),
      task(33, { targetUrl: 'http://93.184.215.14/items/33' }),
      task(31, { idempotencyKey: 'minimal-31' }),
    ];
    for (const prefer of ['return=minimal', 'respond-async, RETURN = "minimal"; x=1']) {
      const res = await api.call('POST', '/retry-tasks/batch', { tasks }, { prefer });
      expect(res.status).toBe(200);
      expect(res.headers['preference-applied']).toBe('return=minimal');
      const results = res.body.results as { status: number; taskId?: string; task?: unknown; error?: { code: string } }[];
      // The second time, the keyed task is a replay; the unkeyed one is a new task again.
      expect(results.map((r) => r.status)).toEqual([prefer === 'return=minimal' ? 201 : 200, 400, 201, 200]);
      expect(results.every((r) => r.task === undefined)).toBe(true);
      expect(results[1]?.error?.code).toBe('TARGET_NOT_ALLOWED');
      expect(results[3]?.taskId).toBe(results[0]?.taskId);
      for (const i of [0, 2]) expect((await api.stored(results[i]?.taskId ?? '')).targetUrl).toBe(i === 0 ? 'https://api.example.com/items/31' : 'http://93.184.215.14/items/33');
    }
    const whole = await api.call('POST', '/retry-tasks/batch', { tasks: [task(31, { idempotencyKey: 'minimal-31' })] }, { prefer: 'return=representation' });
    expect(whole.headers['preference-applied']).toBeUndefined();
    expect((whole.body.results as { task: { idempotencyKey: string } }[])[0]?.task.idempotencyKey).toBe('minimal-31');
  });

  it('keeps the traceparent of the request with every task of the batch, and none that is malformed', async () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const res = await api.call('POST', '/retry-tasks/batch', { tasks: [task(21), task(22)] }, { traceparent });
    const ids = (res.body.results as { task: { taskId: string } }[]).map((r) => r.task.taskId);
    expect(ids).toHaveLength(2);
    for (const id of ids) expect((await api.stored(id)).traceContext).toBe(traceparent);
    const bad = await api.call('POST', '/retry-tasks/batch', { tasks: [task(23)] }, { traceparent: 'not-a-traceparent' });
    const [entry] = bad.body.results as { task: { taskId: string } }[];
    expect((await api.stored(entry?.task.taskId ?? '')).traceContext).toBeNull();
  });

  it('tells replays from conflicts, within the batch and against earlier tasks', async () => {
    const first = await api.enqueue({ idempotencyKey: 'batch-old', body: { v: 1 } });
    const res = await api.call('POST', '/retry-tasks/batch', {
      tasks: [
        task(1, { idempotencyKey: 'batch-new' }),
        task(1, { idempotencyKey: 'batch-new' }),
        task(2, { idempotencyKey: 'batch-new' }),
        { targetUrl: 'https://api.example.com/orders', method: 'POST', body: { v: 1 }, idempotencyKey: 'batch-old' },
        { targetUrl: 'https://api.example.com/orders', method: 'POST', body: { v: 2 }, idempotencyKey: 'batch-old' },
      ],
    });
    const results = res.body.results as { status: number; task?: { taskId: string }; error?: { code: string } }[];
    expect(results.map((r) => r.status)).toEqual([201, 200, 422, 200, 422]);
    expect(results[1]?.task?.taskId).toBe(results[0]?.task?.taskId);
    expect(results[2]?.error?.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(results[3]?.task?.taskId).toBe(first.body.taskId);
  });

  it('takes 1,000 tasks in one call and refuses 1,001', async () => {
    insertCalls = [];
    const ok = await api.call('POST', '/retry-tasks/batch', { tasks: Array.from({ length: 1000 }, (_, i) => task(i)) });
    expect(ok.status).toBe(200);
    expect((ok.body.results as { status: number }[]).every((r) => r.status === 201)).toBe(true);
    expect(insertCalls).toEqual([1000]);
    const tooMany = await api.call('POST', '/retry-tasks/batch', { tasks: Array.from({ length: 1001 }, (_, i) => task(i)) });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.errors).toEqual([
      { field: 'tasks', rule: 'an array of at most 1000 tasks', message: 'tasks must be an array of at most 1000 tasks, got 1001' },
    ]);
  });

  it.each([
    ['no tasks field', {}, 'tasks'],
    ['tasks that is not an array', { tasks: { a: 1 } }, 'tasks'],
    ['an extra field', { tasks: [], more: 1 }, 'body'],
    ['an array body', [task(1)], 'body'],
  ])('refuses %s', async (_name, body, field) => {
    const res = await api.call('POST', '/retry-tasks/batch', body);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ field })]);
  });

  it('answers an empty batch with no results', async () => {
    expect((await api.call('POST', '/retry-tasks/batch', { tasks: [] })).body).toEqual({ results: [] });
  });
});

describe('EnqueueBatcher (group commit)', () => {
  const inserted = (tasks: readonly RetryTask[]): InsertResult[] => tasks.map((t) => ({ kind: 'inserted', task: t }));

  it('writes an idle submission without waiting for a timer, and merges those that arrive during a write', async () => {
    const calls: string[][] = [];
    let release: () => void = () => undefined;
    const batcher = new EnqueueBatcher({
      insert: async (tasks) => {
        calls.push(tasks.map((t) => t.taskId));
        if (calls.length === 1) await new Promise<void>((r) => (release = r));
        return inserted(tasks);
      },
    });
    const a = batcher.submit([makeTask({ taskId: 'a' })]);
    await waitFor('the write of a', () => calls.length === 1);
    expect(calls).toEqual([['a']]);
    const b = batcher.submit([makeTask({ taskId: 'b' })]);
    const c = batcher.submit([makeTask({ taskId: 'c1' }), makeTask({ taskId: 'c2' })]);
    await new Promise((r) => setImmediate(r));
    expect(calls).toHaveLength(1);
    release();
    const [ra, rb, rc] = await Promise.all([a, b, c]);
    expect(calls).toEqual([['a'], ['b', 'c1', 'c2']]);
    expect(ra.map((r) => r.task.taskId)).toEqual(['a']);
    expect(rb.map((r) => r.task.taskId)).toEqual(['b']);
    expect(rc.map((r) => r.task.taskId)).toEqual(['c1', 'c2']);
  });

  it('keeps up to maxConcurrentWrites writes in flight, merging what arrives while all are busy', async () => {
    const calls: string[][] = [];
    const releases: (() => void)[] = [];
    const batcher = new EnqueueBatcher({
      maxConcurrentWrites: 2,
      insert: async (tasks) => {
        calls.push(tasks.map((t) => t.taskId));
        await new Promise<void>((r) => releases.push(r));
        return inserted(tasks);
      },
    });
    const a = batcher.submit([makeTask({ taskId: 'a' })]);
    await waitFor('the write of a', () => calls.length === 1);
    expect(calls).toEqual([['a']]);
    const b = batcher.submit([makeTask({ taskId: 'b' })]);
    await waitFor('the write of b', () => calls.length === 2);
    expect(calls).toEqual([['a'], ['b']]);
    const c = batcher.submit([makeTask({ taskId: 'c' })]);
    const d = batcher.submit([makeTask({ taskId: 'd' })]);
    await new Promise((r) => setImmediate(r));
    expect(calls).toHaveLength(2);
    releases[1]?.();
    await waitFor('the write of c and d', () => calls.length === 3);
    expect(calls).toEqual([['a'], ['b'], ['c', 'd']]);
    for (const release of [releases[0], releases[2]]) release?.();
    const results = await Promise.all([a, b, c, d]);
    expect(results.map((r) => r.map((x) => x.task.taskId))).toEqual([['a'], ['b'], ['c'], ['d']]);
    await batcher.drain();
    expect(() => new EnqueueBatcher({ insert: async () => [], maxConcurrentWrites: 0 })).toThrow('maxConcurrentWrites must be an integer >= 1, got 0');
  });

  it('merges submissions made in the same turn of the event loop', async () => {
    const insert = vi.fn(async (tasks: readonly RetryTask[]) => inserted(tasks));
    const batcher = new EnqueueBatcher({ insert });
    await Promise.all(Array.from({ length: 10 }, () => batcher.submit([makeTask()])));
    expect(insert).toHaveBeenCalledTimes(1);
  });

  it('sends a key repeated within one write once, and answers the repeat as a duplicate of the first', async () => {
    const insert = vi.fn(async (tasks: readonly RetryTask[]) => inserted(tasks));
    const batcher = new EnqueueBatcher({ insert });
    const first = makeTask({ idempotencyKey: 'same' });
    const [r1, r2] = await Promise.all([batcher.submit([first]), batcher.submit([makeTask({ idempotencyKey: 'same' })])]);
    expect(insert.mock.calls[0]?.[0]).toHaveLength(1);
    expect(r1).toEqual([{ kind: 'inserted', task: first }]);
    expect(r2).toEqual([{ kind: 'duplicate', task: first }]);
    // The same key in another tenant is another task.
    const other = await batcher.submit([makeTask({ idempotencyKey: 'same', tenantId: 'other' }), makeTask({ idempotencyKey: 'same' })]);
    expect(other.map((r) => r.kind)).toEqual(['inserted', 'inserted']);
  });

  it('never splits one submission, and caps how many tasks a write merges', async () => {
    const insert = vi.fn(async (tasks: readonly RetryTask[]) => inserted(tasks));
    const batcher = new EnqueueBatcher({ insert, maxTasksPerFlush: 3 });
    await Promise.all([
      batcher.submit([makeTask(), makeTask()]),
      batcher.submit([makeTask(), makeTask()]),
      batcher.submit([makeTask(), makeTask(), makeTask(), makeTask()]),
    ]);
    expect(insert.mock.calls.map((c) => c[0].length)).toEqual([2, 2, 4]);
  });

  it('rejects every submission of a failed write and carries on with the next', async () => {
    let fail = true;
    const batcher = new EnqueueBatcher({
      insert: async (tasks) => {
        if (fail) throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
        return inserted(tasks);
      },
    });
    const failed = await Promise.allSettled([batcher.submit([makeTask()]), batcher.submit([makeTask()])]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    expect(await batcher.submit([makeTask()])).toHaveLength(1);
    await batcher.drain();
  });
});
