import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { IdempotentDownstream, startServiceProcess, type ServiceProcess } from './service-harness.js';
import { waitFor } from './wait-for.js';

const TASKS = 2_000;
const policy = { maxAttempts: 20, backoffType: 'FIXED', initialDelayMs: 5, multiplier: 1, maxDelayMs: 5, jitterType: 'NONE' };

async function countByStatus(url: string, status: string): Promise<number> {
  let count = 0;
  let cursor: string | undefined;
  do {
    const res = await fetch(`${url}/retry-tasks?status=${status}&limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    const page = (await res.json()) as { items: unknown[]; nextCursor?: string };
    count += page.items.length;
    cursor = page.nextCursor;
  } while (cursor);
  return count;
}

describe('crash recovery (kill -9 mid-run)', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
  });

  it('every acknowledged task reaches SUCCEEDED after a restart, and the downstream processes each key once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'retryd-crash-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const downstream = new IdempotentDownstream(1);
    const target = await downstream.start();
    cleanup.push(() => downstream.close());
    // The default protections, and a "not ready yet" downstream (every key fails its first call): its first wave opens
    // the breaker, whose probes (retries, which it answers) close it again, before the kill or after the restart.
    const args = ['--store', `sqlite:${join(dir, 'retryd.db')}`, '--allow-targets', '127.0.0.1/32', '--attempt-timeout', '1000', '--visibility-timeout', '1500', '--concurrency', '64'];

    const first: ServiceProcess = await startServiceProcess(args);
    cleanup.push(async () => first.child.kill('SIGKILL'));
    const keys: string[] = [];
    for (let b = 0; b < TASKS / 1_000; b++) {
      const tasks = Array.from({ length: 1_000 }, (_, i) => {
        const key = `order-${b * 1_000 + i}`;
        keys.push(key);
        return { targetUrl: `${target}/charge`, method: 'POST', idempotencyKey: key, body: { n: i }, policy };
      });
      const res = await fetch(`${first.url}/retry-tasks/batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tasks }) });
      expect(res.status).toBe(200);
      const results = ((await res.json()) as { results: { status: number }[] }).results;
      expect(results.every((r) => r.status === 201)).toBe(true);
    }

    // Kill it hard while work is half done: some keys processed, many not.
    await waitFor('some progress', () => downstream.processed.size >= 200);
    first.child.kill('SIGKILL');
    await first.exited;
    const processedAtKill = downstream.processed.size;
    expect(processedAtKill).toBeLessThan(TASKS);

    const second = await startServiceProcess(args);
    cleanup.push(async () => {
      second.child.kill('SIGTERM');
      await second.exited;
    });
    await waitFor('every key processed', () => downstream.processed.size === TASKS, 60_000);
    await waitFor('every task SUCCEEDED', async () => (await countByStatus(second.url, 'SUCCEEDED')) === TASKS, 30_000);

    for (const key of keys) expect(downstream.processed.get(key), key).toBe(1);
    expect(await countByStatus(second.url, 'PENDING')).toBe(0);
    expect(await countByStatus(second.url, 'IN_FLIGHT')).toBe(0);
    expect(await countByStatus(second.url, 'FAILED')).toBe(0);
    expect(await countByStatus(second.url, 'EXHAUSTED')).toBe(0);
  }, 120_000);
});
