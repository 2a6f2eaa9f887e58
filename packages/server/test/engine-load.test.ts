import { afterEach, beforeEach, expect, it } from 'vitest';
import type { RetryPolicy } from '@retryd/core';
import type { Engine } from '../src/engine/engine.js';
import type { SqliteStore } from '../src/backends/sqlite/sqlite-store.js';
import { enqueue, openTempStore, reply, startServer, taskFor, testEngine, type Reported, type TestServer } from './engine-helpers.js';
import { waitFor } from './wait-for.js';

let store: SqliteStore;
let cleanup: () => Promise<void>;
let server: TestServer;
let engine: Engine;
let errors: Reported;

// W1's downstream: each key fails a few times (0, 1 or 2, by key), then succeeds; every request is counted.
const seen = new Map<string, number>();
const succeeded = new Map<string, number>();
let duplicates = 0;

beforeEach(async () => {
  ({ store, cleanup } = await openTempStore());
  seen.clear();
  succeeded.clear();
  duplicates = 0;
  server = await startServer((req, res) => {
    const key = String(req.headers['idempotency-key']);
    const n = (seen.get(key) ?? 0) + 1;
    seen.set(key, n);
    if (succeeded.has(key)) duplicates++;
    const failures = Number(key.slice(key.lastIndexOf('-') + 1)) % 3;
    if (n <= failures) return reply(res, 503);
    succeeded.set(key, (succeeded.get(key) ?? 0) + 1);
    reply(res, 200, 'ok');
  });
  // A generous attempt timeout: on a starved CI machine a 2 s timeout can expire on a request the server did answer,
  // and the retry is then (correctly) a second success for that key — at-least-once, which this test is not about.
  ({ engine, errors } = testEngine(store, { concurrency: 64, claimBatchSize: 32, attemptTimeoutMs: 20_000 }));
  await engine.start();
});

afterEach(async () => {
  await engine.stop({ graceMs: 1_000 });
  await server.close();
  await cleanup();
});

it('drives 1,000 tasks through a flaky downstream: every key succeeds exactly once', async () => {
  const policy: RetryPolicy = { maxAttempts: 5, backoffType: 'EXPONENTIAL', initialDelayMs: 1, multiplier: 2, maxDelayMs: 10, jitterType: 'FULL' };
  const tasks = Array.from({ length: 1_000 }, (_, i) => taskFor(server.url, policy, { idempotencyKey: `key-${i}` }));
  for (let i = 0; i < tasks.length; i += 250) await enqueue(store, engine, ...tasks.slice(i, i + 250));

  await waitFor('1,000 successes', async () => (await store.admin.countByStatus()).SUCCEEDED === 1_000, 30_000);
  expect(succeeded.size).toBe(1_000);
  const twice = tasks.filter((t) => succeeded.get(t.idempotencyKey) !== 1);
  const logs = await Promise.all(twice.map((t) => store.listAttempts(t.tenantId, t.taskId, { limit: 10 })));
  expect(logs.map((l) => l.items.map((a) => [a.attemptNumber, a.outcome, a.errorMessage]))).toEqual([]);
  expect(duplicates).toBe(0);
  // 334 keys fail none, 333 once, 333 twice: 1,000 + 333 + 666 attempts.
  expect(server.requests).toHaveLength(1_999);
  const counts = await store.admin.countByStatus();
  expect(counts).toMatchObject({ PENDING: 0, IN_FLIGHT: 0, FAILED: 0, EXHAUSTED: 0 });
  expect(errors).toEqual([]);
  const sample = tasks[5]!;
  expect((await store.listAttempts(sample.tenantId, sample.taskId, { limit: 10 })).items.map((a) => a.outcome)).toEqual([
    'retry_scheduled',
    'retry_scheduled',
    'succeeded',
  ]);
});
