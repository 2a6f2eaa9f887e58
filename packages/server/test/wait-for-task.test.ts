import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { TaskStatus } from '@retryd/core';
import { ManualClock } from '@retryd/core/testing';
import { RetrydClient, TaskWaitTimeoutError } from '@retryd/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/service/logger.js';
import { DEFAULT_CONFIG } from '../src/service/retryd-config.js';
import { startRetryd, type RunningRetryd } from '../src/service/start-retryd.js';
import { TaskWaiters, type WaitOutcome } from '../src/tasks/task-waiters.js';
import { reply, startServer, type TestServer } from './engine-helpers.js';

// Waiting for a task to end: the waiters on a manual clock (what wakes them, what they read), then the service's long
// poll (GET /retry-tasks/{taskId}?waitMs=) and RetrydClient.waitForTask against a real service and downstream.

describe('TaskWaiters', () => {
  /** Waiters whose reads are counted and answered from `statuses` (a task not there is gone). */
  function waitersOn(statuses: Map<string, TaskStatus>, options: { maxWaiters?: number } = {}) {
    const clock = new ManualClock(0);
    const reads: string[] = [];
    const waiters = new TaskWaiters({
      clock,
      pollMs: 1_000,
      ...options,
      readStatus: async (_tenant, taskId) => {
        reads.push(taskId);
        return statuses.get(taskId);
      },
    });
    return { clock, reads, waiters };
  }

  it('answers every waiter of a task the moment it is told the task ended, and no other', async () => {
    const { waiters } = waitersOn(new Map([['a', 'PENDING'], ['b', 'PENDING']]));
    const outcomes: [string, WaitOutcome][] = [];
    const track = (id: string) => waiters.wait('t1', id, 10_000).then((o) => outcomes.push([id, o]));
    const all = [track('a'), track('a'), track('b')];
    expect(waiters.size).toBe(3);
    waiters.ended('t1', 'a');
    waiters.ended('t2', 'b'); // another tenant's task of the same id
    await Promise.all(all.slice(0, 2));
    expect(outcomes).toEqual([['a', 'ended'], ['a', 'ended']]);
    expect(waiters.size).toBe(1);
    waiters.close();
    await all[2];
    expect(outcomes.at(-1)).toEqual(['b', 'aborted']);
  });

  it('reads each waited-for task once a poll, however many wait for it, and none while nobody waits', async () => {
    const statuses = new Map<string, TaskStatus>([['a', 'PENDING'], ['b', 'IN_FLIGHT']]);
    const { clock, reads, waiters } = waitersOn(statuses);
    await clock.advance(5_000);
    expect(reads).toEqual([]);
    const a = [waiters.wait('t', 'a', 60_000), waiters.wait('t', 'a', 60_000), waiters.wait('t', 'a', 60_000)];
    const b = waiters.wait('t', 'b', 60_000);
    await clock.advance(999);
    expect(reads).toEqual([]);
    await clock.advance(1);
    expect(reads.sort()).toEqual(['a', 'b']);
    // Ended where this process could not see it: the next poll finds it.
    statuses.set('a', 'SUCCEEDED');
    await clock.advance(1_000);
    expect(await Promise.all(a)).toEqual(['ended', 'ended', 'ended']);
    expect(reads.sort()).toEqual(['a', 'a', 'b', 'b']);
    statuses.delete('b'); // purged: gone counts as ended
    await clock.advance(1_000);
    expect(await b).toBe('ended');
    const before = reads.length;
    await clock.advance(10_000);
    expect(reads.length).toBe(before);
  });

  it('ends a wait when its time passes, when its caller aborts, and refuses waiters past its limit', async () => {
    const { clock, waiters } = waitersOn(new Map([['a', 'PENDING']]), { maxWaiters: 2 });
    const timed = waiters.wait('t', 'a', 1_500);
    const caller = new AbortController();
    const left = waiters.wait('t', 'a', 60_000, caller.signal);
    expect(await waiters.wait('t', 'a', 60_000)).toBe('busy');
    caller.abort();
    expect(await left).toBe('aborted');
    await clock.advance(1_500);
    expect(await timed).toBe('timeout');
    expect(waiters.size).toBe(0);
  });

  it('keeps waiting through a store that fails a read', async () => {
    const clock = new ManualClock(0);
    let failing = true;
    const waiters = new TaskWaiters({
      clock,
      pollMs: 1_000,
      readStatus: async () => {
        if (failing) throw new Error('store down');
        return 'CANCELLED';
      },
    });
    let outcome: WaitOutcome | undefined;
    void waiters.wait('t', 'a', 10_000).then((o) => (outcome = o));
    await clock.advance(2_000);
    expect(outcome).toBeUndefined();
    failing = false;
    await clock.advance(1_000);
    expect(outcome).toBe('ended');
  });
});

describe('GET /retry-tasks/{taskId}?waitMs= and RetrydClient.waitForTask', () => {
  let dir: string;
  let service: RunningRetryd;
  let downstream: TestServer;
  /** Answers held by the downstream, released by the test. */
  const held: (() => void)[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'retryd-wait-'));
    downstream = await startServer(async (req, res) => {
      if (req.url.startsWith('/held')) await new Promise<void>((release) => held.push(release));
      if (req.url.startsWith('/fails')) reply(res, 503, 'not yet');
      else reply(res, 200, 'ok');
    });
    const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });
    service = await startRetryd(
      { ...DEFAULT_CONFIG, port: 0, store: `sqlite:${join(dir, 'service.db')}`, allowTargets: ['127.0.0.1/32'], graceMs: 0 },
      createLogger('info', quiet),
    );
  });

  afterAll(async () => {
    for (const release of held.splice(0)) release();
    await service.close();
    await downstream.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function enqueue(path: string, policy?: unknown): Promise<string> {
    const res = await fetch(`${service.url}/retry-tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ targetUrl: `${downstream.url}${path}`, method: 'POST', body: 'x', ...(policy === undefined ? {} : { policy }) }),
    });
    const body = (await res.json()) as { taskId: string };
    expect(res.status, JSON.stringify(body)).toBe(201);
    return body.taskId;
  }

  /** Fails once, then waits an hour for its next attempt: PENDING for the whole of a test. */
  const HOUR_POLICY = { maxAttempts: 3, backoffType: 'FIXED', initialDelayMs: 3_600_000, multiplier: 1, maxDelayMs: 3_600_000, jitterType: 'NONE' };

  const get = async (taskId: string, query = '') => {
    const res = await fetch(`${service.url}/retry-tasks/${taskId}${query}`);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  async function heldCall(): Promise<() => void> {
    const deadline = Date.now() + 10_000;
    while (held.length === 0) {
      if (Date.now() > deadline) throw new Error('the downstream got no call');
      await new Promise((r) => setTimeout(r, 10));
    }
    return held.shift() as () => void;
  }

  it('answers a waiting request when the task ends, not before', async () => {
    const taskId = await enqueue('/held');
    const release = await heldCall();
    let answered = false;
    const waiting = get(taskId, '?waitMs=20000').then((r) => {
      answered = true;
      return r;
    });
    // The attempt is in flight and held: the wait has nothing to answer yet.
    await new Promise((r) => setTimeout(r, 200));
    expect(answered).toBe(false);
    release();
    const { status, body } = await waiting;
    expect(status).toBe(200);
    expect(body.status).toBe('SUCCEEDED');
  });

  it('answers the task as it stands when the wait passes, and at once for a task that has ended', async () => {
    const taskId = await enqueue('/fails', HOUR_POLICY);
    const started = Date.now();
    const { body } = await get(taskId, '?waitMs=400');
    expect(Date.now() - started).toBeGreaterThanOrEqual(390);
    expect(['PENDING', 'IN_FLIGHT']).toContain(body.status);

    const done = await enqueue('/ok');
    const client = new RetrydClient({ url: service.url });
    expect((await client.waitForTask(done, { timeoutMs: 10_000 })).status).toBe('SUCCEEDED');
    const again = Date.now();
    expect((await get(done, '?waitMs=30000')).body.status).toBe('SUCCEEDED');
    expect(Date.now() - again).toBeLessThan(5_000);
  });

  it('wakes a waiter when the task is cancelled', async () => {
    const taskId = await enqueue('/fails', HOUR_POLICY);
    const client = new RetrydClient({ url: service.url });
    const waited = client.waitForTask(taskId, { timeoutMs: 20_000 });
    await new Promise((r) => setTimeout(r, 100));
    // Cancel once it waits for its next attempt (PENDING); a cancel of its first attempt in flight lands at its end.
    const deadline = Date.now() + 10_000;
    let cancelled = false;
    while (!cancelled && Date.now() < deadline) {
      const res = await fetch(`${service.url}/retry-tasks/${taskId}`, { method: 'DELETE' });
      cancelled = res.status === 200 || res.status === 202;
      if (!cancelled) await new Promise((r) => setTimeout(r, 20));
    }
    expect((await waited).status).toBe('CANCELLED');
  });

  it('waitForTask gives up with the task as last read, and stops when its signal aborts', async () => {
    const taskId = await enqueue('/fails', HOUR_POLICY);
    const client = new RetrydClient({ url: service.url });
    const error = await client.waitForTask(taskId, { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskWaitTimeoutError);
    expect((error as TaskWaitTimeoutError).task.taskId).toBe(taskId);
    expect((error as TaskWaitTimeoutError).message).toMatch(/had not ended after 300 ms/);

    const controller = new AbortController();
    const aborted = client.waitForTask(taskId, { timeoutMs: 60_000, signal: controller.signal }).catch((e: unknown) => e);
    setTimeout(() => controller.abort(new Error('caller gave up')), 100);
    expect(((await aborted) as Error).message).toBe('caller gave up');
  });

  it('answers every waiting request when the service stops, instead of holding the stop for their waits', async () => {
    const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });
    const other = await startRetryd(
      { ...DEFAULT_CONFIG, port: 0, store: `sqlite:${join(dir, 'stopping.db')}`, allowTargets: ['127.0.0.1/32'], graceMs: 0 },
      createLogger('info', quiet),
    );
    const res = await fetch(`${other.url}/retry-tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ targetUrl: `${downstream.url}/fails`, method: 'POST', policy: HOUR_POLICY }),
    });
    const { taskId } = (await res.json()) as { taskId: string };
    const waiting = fetch(`${other.url}/retry-tasks/${taskId}?waitMs=30000`).then(async (r) => ({ status: r.status, body: (await r.json()) as { status: string } }));
    await new Promise((r) => setTimeout(r, 200));
    const stopping = Date.now();
    await other.close();
    // Well under the 30 s wait: the waiter was answered with the task as it stood.
    expect(Date.now() - stopping).toBeLessThan(10_000);
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(['PENDING', 'IN_FLIGHT']).toContain(answer.body.status);
  });

  it('refuses a wait beyond the longest, naming the field and the rule', async () => {
    const taskId = await enqueue('/ok');
    const { status, body } = await get(taskId, '?waitMs=30001');
    expect(status).toBe(400);
    expect(JSON.stringify(body)).toMatch(/waitMs/);
    expect(JSON.stringify(body)).toMatch(/30000/);
  });
});
