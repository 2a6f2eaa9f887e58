import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { deriveIdempotencyKey } from '@retryd/core';
import { ManualClock } from '@retryd/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_RETRY, HandoffSpool, RetrydClient, SpoolFullError, handoffKey, type DeadSpoolEntry, type QueueClock } from '../src/index.js';
import type { EnqueueRequest } from '../src/service/api-types.js';
import { fileSpoolStorage } from '../src/file-spool/index.js';
import { closedPortUrl } from './loopback-server.js';
import { startService, type TestService } from './service-harness.js';
import { tempDirPerTest } from './temp-dir.js';
import { waitFor } from '../../server/test/wait-for.js';

// The spool's own rules (limits, backoff, order, setting aside) with a real journal, against a port where nothing
// listens (retryd down) or a real retryd service.

const run = promisify(execFile);
const ONE_TRY = { ...CLIENT_RETRY, maxAttempts: 1 };
const order = (n: number, key = `order-${n}`): EnqueueRequest & { idempotencyKey: string } => ({
  targetUrl: `http://127.0.0.1:9/orders/${n}`,
  method: 'POST',
  body: { n },
  idempotencyKey: key,
});

const temp = tempDirPerTest('retryd-handoff-spool-');

describe('HandoffSpool while retryd does not answer', () => {
  let down: RetrydClient;
  beforeAll(async () => {
    down = new RetrydClient({ url: await closedPortUrl(), apiKey: 'rtd_unused', retry: ONE_TRY });
  });

  it('refuses a call past maxEntries or maxBytes with an error naming the limit, and keeps nothing of it', async () => {
    const clock = new ManualClock(1_000);
    const spool = await HandoffSpool.open({ client: down, storage: fileSpoolStorage({ directory: temp.dir }), maxEntries: 2, clock });
    await spool.spool(order(1));
    await spool.spool(order(1)); // the same call again: kept once
    await spool.spool(order(2));
    const full = await spool.spool(order(3), new Error('retryd unreachable')).catch((error: unknown) => error);
    expect(full).toBeInstanceOf(SpoolFullError);
    expect(full).toMatchObject({ code: 'SPOOL_FULL', limit: 'maxEntries', max: 2, held: 2, cause: new Error('retryd unreachable') });
    expect((full as Error).message).toMatch(/^the spool is full: it holds 2 entries \(waiting and set aside\) and maxEntries is 2/);
    const bytes = spool.stats.bytes;
    await spool.close();

    const reopened = await HandoffSpool.open({ client: down, storage: fileSpoolStorage({ directory: temp.dir }), maxBytes: bytes + 10, clock });
    expect(reopened.entries().map((e) => e.request.idempotencyKey)).toEqual(['order-1', 'order-2']);
    await expect(reopened.spool(order(3))).rejects.toMatchObject({ limit: 'maxBytes', max: bytes + 10, held: bytes });
    clock.tick(5_000);
    expect(reopened.stats).toMatchObject({ entries: 2, bytes, oldestAgeMs: 5_000, dead: 0 });
    await reopened.close();
    await expect(HandoffSpool.open({ client: down, storage: fileSpoolStorage({ directory: temp.dir }), maxEntries: 0 })).rejects.toThrow('maxEntries must be an integer >= 1, got 0');
  });

  it('tries again on the backoff, with jitter drawn by computeDelay, reporting each failed pass', async () => {
    const manual = new ManualClock();
    const delays: number[] = [];
    const clock: QueueClock = {
      now: () => manual.now(),
      setTimer: (ms, callback) => (delays.push(ms), manual.setTimer(ms, callback)),
      clearTimer: (handle) => manual.clearTimer(handle),
    };
    const errors: unknown[] = [];
    let failed = () => {};
    const spool = await HandoffSpool.open({
      client: down,
      storage: fileSpoolStorage({ directory: temp.dir }),
      retry: { initialDelayMs: 100, multiplier: 2, maxDelayMs: 300, jitterType: 'FULL' },
      random: () => 0.5,
      clock,
      onError: (error) => {
        errors.push(error);
        failed();
      },
    });
    await spool.spool(order(1));
    expect(delays).toEqual([50]);
    for (const expected of [[50, 100], [50, 100, 150], [50, 100, 150, 150]]) {
      const pass = new Promise<void>((resolve) => (failed = resolve));
      await manual.advance(delays.at(-1)!);
      await pass;
      await waitFor('the next pass to be set', () => delays.length === expected.length);
      expect(delays).toEqual(expected);
    }
    expect(errors.map((e) => (e as Error).name)).toEqual(['RetrydUnreachableError', 'RetrydUnreachableError', 'RetrydUnreachableError']);
    expect(spool.stats).toMatchObject({ entries: 1, waitingForRetryd: true });
    await spool.close();
  });
});

describe('HandoffSpool and a running retryd', () => {
  let service: TestService;
  let client: RetrydClient;
  beforeAll(async () => {
    service = await startService();
    client = new RetrydClient({ url: service.url, apiKey: service.apiKey, retry: ONE_TRY });
  }, 60_000);
  afterAll(async () => {
    await service?.close();
  });

  it('sets aside what the service refuses for good, forwards the rest in order, and keeps the set-aside across a restart', async () => {
    await client.enqueueTask(order(1, 'taken-key'));
    const forwarded: string[] = [];
    const rejected: DeadSpoolEntry[] = [];
    const storage = fileSpoolStorage({ directory: temp.dir });
    // Stored while retryd was away, forwarded when the spool opens.
    const offline = await HandoffSpool.open({ client: new RetrydClient({ url: await closedPortUrl(), retry: ONE_TRY }), storage });
    await offline.spool(order(2, 'before'));
    await offline.spool(order(3, 'taken-key')); // the key of another request: 422
    await offline.spool({ ...order(4, 'bad-method'), method: 'BREW' as EnqueueRequest['method'] }); // 400
    await offline.spool(order(5, 'after'));
    await offline.close();

    const spool = await HandoffSpool.open({
      client,
      storage: fileSpoolStorage({ directory: temp.dir }),
      onForwarded: (entry) => forwarded.push(entry.request.idempotencyKey),
      onRejected: (dead) => rejected.push(dead),
    });
    await waitFor('the spool to forward or set aside every entry', () => spool.stats.entries === 0);
    expect(forwarded).toEqual(['before', 'after']);
    expect(rejected.map((d) => [d.request.idempotencyKey, d.status, d.code])).toEqual([
      ['taken-key', 422, 'IDEMPOTENCY_KEY_REUSED'],
      ['bad-method', 400, 'VALIDATION_FAILED'],
    ]);
    expect(rejected[0]?.detail).toMatch(/already belongs to task/);
    expect(spool.stats).toMatchObject({ entries: 0, dead: 2 });
    await spool.close();

    const later = await HandoffSpool.open({ client, storage: fileSpoolStorage({ directory: temp.dir }) });
    expect(later.deadEntries().map((d) => d.request.idempotencyKey)).toEqual(['taken-key', 'bad-method']);
    expect(await later.discardDead(later.deadEntries()[0]!.seq)).toBe(true);
    expect(later.stats.dead).toBe(1);
    await later.close();
    const keys = (await client.listTasks({ limit: 1000 })).items.map((t) => t.idempotencyKey);
    expect(keys.filter((k) => k === 'before' || k === 'after' || k === 'taken-key').sort()).toEqual(['after', 'before', 'taken-key']);
  });

  it('forwards what a process that died left in its spool directory, once each, from a new process', async () => {
    // A real process spools three calls with retryd out of its reach, then is killed: no close, its lock left behind.
    const script = `
      import { HandoffSpool, RetrydClient } from '@retryd/client';
      import { fileSpoolStorage } from '@retryd/client/file-spool';
      const client = new RetrydClient({ url: process.env.GONE_URL, apiKey: 'x', retry: { maxAttempts: 1, backoffType: 'FIXED', initialDelayMs: 1, multiplier: 1, maxDelayMs: 1, jitterType: 'NONE' } });
      const spool = await HandoffSpool.open({ client, storage: fileSpoolStorage({ directory: process.env.SPOOL_DIR }) });
      for (const n of [1, 2, 3]) await spool.spool({ targetUrl: 'http://127.0.0.1:9/orders/' + n, method: 'POST', body: { n }, idempotencyKey: 'restart-' + n });
      process.kill(process.pid, 'SIGKILL');`;
    const child = await run(process.execPath, ['--input-type=module', '-e', script], {
      cwd: join(import.meta.dirname, '..'),
      env: { ...process.env, GONE_URL: await closedPortUrl(), SPOOL_DIR: temp.dir },
    }).catch((error: { signal?: string }) => error);
    expect(child).toMatchObject({ signal: 'SIGKILL' });

    const forwarded: string[] = [];
    const spool = await HandoffSpool.open({ client, storage: fileSpoolStorage({ directory: temp.dir }), onForwarded: (entry) => forwarded.push(entry.request.idempotencyKey) });
    await waitFor('the new process to forward what the old one left', () => spool.stats.entries === 0);
    expect(forwarded).toEqual(['restart-1', 'restart-2', 'restart-3']);
    await spool.close();
    const keys = (await client.listTasks({ limit: 1000 })).items.map((t) => t.idempotencyKey).filter((k) => k?.startsWith('restart-'));
    expect(keys.sort()).toEqual(['restart-1', 'restart-2', 'restart-3']);
  });
});

describe('handoffKey', () => {
  it('derives the same key from the same method, URL and body, never a random one, and core derives it', async () => {
    const key = await handoffKey('post', 'https://orders.example.com/orders?b=2&a=1', '{"sku":"A1"}');
    expect(key).toMatch(/^[0-9a-f]{32}$/);
    expect(await handoffKey('POST', 'https://orders.example.com/orders/?a=1&b=2#top', '{"sku":"A1"}')).toBe(key);
    expect(key).toBe(deriveIdempotencyKey({ method: 'POST', url: 'https://orders.example.com/orders?a=1&b=2', body: '{"sku":"A1"}' }));
    expect(await handoffKey('POST', 'https://orders.example.com/orders', '{"sku":"A2"}')).not.toBe(await handoffKey('POST', 'https://orders.example.com/orders', '{"sku":"A1"}'));
    expect(await handoffKey('PUT', 'https://orders.example.com/orders', '{"sku":"A1"}')).not.toBe(await handoffKey('POST', 'https://orders.example.com/orders', '{"sku":"A1"}'));
    await expect(handoffKey('POST', '/orders', undefined)).rejects.toThrow(/url must be an absolute URL/);
  });
});
