import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeys } from '../src/access/api-keys.js';
import { openStore } from '../src/service/open-store.js';
import { DEFAULT_CONFIG, type RetrydConfig } from '../src/service/retryd-config.js';
import { startRetryd } from '../src/service/start-retryd.js';
import { quietLogger } from './captured-logger.js';
import { reply, startServer } from './engine-helpers.js';
import { parseSamples, valueOf, type Sample } from './metrics-text.js';
import { waitFor } from './wait-for.js';

// GET /metrics on a running service: what a few real attempts leave in the counters, and who may read them.

let dir: string;
let config: RetrydConfig;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'retryd-metrics-'));
  config = { ...DEFAULT_CONFIG, port: 0, allowTargets: ['127.0.0.1/32'], sqliteSync: 'normal', graceMs: 0 };
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

describe('GET /metrics', () => {
  it('counts a success, a retry after a 503 and a dead letter with their outcome, policy and target', async () => {
    const seen = new Map<string, number>();
    const downstream = await startServer((req, res) => {
      const key = String(req.headers['idempotency-key']);
      const n = (seen.get(key) ?? 0) + 1;
      seen.set(key, n);
      if (req.url === '/bad') return reply(res, 400);
      if (req.url === '/flaky' && n === 1) return reply(res, 503);
      return reply(res, 200);
    });
    const service = await startRetryd({ ...config, store: `sqlite:${join(dir, 'counts.db')}` }, quietLogger());
    try {
      const fast = { maxAttempts: 5, backoffType: 'FIXED', initialDelayMs: 10, multiplier: 1, maxDelayMs: 10, jitterType: 'NONE' };
      expect((await post(`${service.url}/retry-policies`, { policyId: 'fast', ...fast })).status).toBe(201);
      const enqueued = await post(`${service.url}/retry-tasks/batch`, {
        tasks: [
          { targetUrl: `${downstream.url}/ok`, method: 'POST', policyId: 'fast' },
          { targetUrl: `${downstream.url}/flaky`, method: 'POST', policy: fast },
          { targetUrl: `${downstream.url}/bad`, method: 'POST', policyId: 'fast' },
        ],
      });
      expect(enqueued.status).toBe(200);
      const ids = ((await enqueued.json()) as { results: { task: { taskId: string } }[] }).results.map((r) => r.task.taskId);
      const statuses = async () =>
        Promise.all(ids.map(async (id) => ((await (await fetch(`${service.url}/retry-tasks/${id}`)).json()) as { status: string }).status));
      await waitFor('the three tasks to end', async () => (await statuses()).join() === 'SUCCEEDED,SUCCEEDED,FAILED');

      const target = downstream.url;
      // The counters move once the results are durable: poll until the last one shows.
      let samples: Sample[] = [];
      await waitFor(
        'four attempts in the metrics',
        async () => {
          const response = await fetch(`${service.url}/metrics`);
          expect(response.status).toBe(200);
          expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
          samples = parseSamples(await response.text());
          return valueOf(samples, 'retry_attempt_duration_seconds_count') === 4;
        },
      );
      const attempts = samples.filter((s) => s.name === 'retry_attempts_total');
      const rows = attempts.map((s) => ({ outcome: s.labels.outcome ?? '', policy: s.labels.policy ?? '', target: s.labels.target, value: s.value }));
      expect(rows.sort((a, b) => a.outcome.localeCompare(b.outcome) || a.policy.localeCompare(b.policy))).toEqual([
        { outcome: 'failed', policy: 'fast', target, value: 1 },
        { outcome: 'retry_scheduled', policy: 'inline', target, value: 1 },
        { outcome: 'succeeded', policy: 'fast', target, value: 1 },
        { outcome: 'succeeded', policy: 'inline', target, value: 1 },
      ]);
      expect(valueOf(samples, 'retry_dead_letters_total', { reason: 'permanent_status:400' })).toBe(1);
      expect(valueOf(samples, 'retry_task_age_seconds_count', { status: 'SUCCEEDED' })).toBe(2);
      expect(valueOf(samples, 'retry_task_age_seconds_count', { status: 'FAILED' })).toBe(1);
      expect(valueOf(samples, 'retry_schedule_lag_seconds_count')).toBe(4);
      expect(valueOf(samples, 'retry_tasks', { status: 'SUCCEEDED' })).toBe(2);
      expect(valueOf(samples, 'retry_tasks', { status: 'FAILED' })).toBe(1);
      expect(valueOf(samples, 'retry_tasks', { status: 'PENDING' })).toBe(0);
      expect(valueOf(samples, 'retry_in_flight')).toBe(0);
      expect(valueOf(samples, 'retry_target_breaker_state', { target, state: 'closed' })).toBe(1);
      expect(valueOf(samples, 'retry_target_breaker_state', { target, state: 'open' })).toBe(0);
      expect(valueOf(samples, 'retry_target_held', { target })).toBe(0);
      expect(samples.some((s) => s.name === 'retry_target_held_tasks')).toBe(false);
      // Every attempt's result was committed at least once; the claims are timed too (at least the first, at start).
      expect(valueOf(samples, 'retry_store_duration_seconds_count', { operation: 'commit' })).toBeGreaterThanOrEqual(1);
      expect(valueOf(samples, 'retry_store_duration_seconds_count', { operation: 'claim' })).toBeGreaterThanOrEqual(1);
      expect(valueOf(samples, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
      expect(samples.some((s) => s.name.startsWith('nodejs_'))).toBe(true);

      // An operator opens the target's breaker and limits its rate: the per-target gauges follow at the next scrape.
      const targetPath = `${service.url}/targets/${encodeURIComponent(target)}`;
      expect((await fetch(targetPath, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ rateLimit: { ratePerSecond: 50, burst: 5 } }) })).status).toBe(200);
      expect((await post(`${targetPath}/breaker`, { action: 'open' })).status).toBe(200);
      samples = parseSamples(await (await fetch(`${service.url}/metrics`)).text());
      expect(valueOf(samples, 'retry_target_breaker_state', { target, state: 'open' })).toBe(1);
      expect(valueOf(samples, 'retry_target_breaker_state', { target, state: 'closed' })).toBe(0);
      expect(valueOf(samples, 'retry_target_held', { target })).toBe(1);
      expect(valueOf(samples, 'retry_target_held_tasks', { target })).toBe(0);
      // Tasks for the held target wait PENDING: the gauge counts them.
      const held = await post(`${service.url}/retry-tasks/batch`, {
        tasks: [1, 2, 3].map((n) => ({ targetUrl: `${downstream.url}/ok`, method: 'POST', policyId: 'fast', body: { n } })),
      });
      expect(held.status).toBe(200);
      await waitFor(
        'three held tasks in the metrics',
        async () => valueOf(parseSamples(await (await fetch(`${service.url}/metrics`)).text()), 'retry_target_held_tasks', { target }) === 3,
      );
      // No adaptive limit below the configured one (a bare 503 lowers nothing): /targets shows none, and the gauge the
      // configured 50/s.
      const shown = ((await (await fetch(targetPath)).json()) as { allowedRatePerSecond: number | null }).allowedRatePerSecond;
      expect(shown).toBeNull();
      expect(valueOf(samples, 'retry_target_allowed_rate_per_second', { target })).toBe(50);

      const openapi = (await (await fetch(`${service.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
      expect(Object.keys(openapi.paths)).not.toContain('/metrics');
    } finally {
      await service.close();
      await downstream.close();
    }
  }, 30_000);

  it('shows a task stuck on a held target while it waits, ageing, and drops it once it ends', async () => {
    const downstream = await startServer((_req, res) => reply(res, 200));
    const service = await startRetryd({ ...config, store: `sqlite:${join(dir, 'oldest.db')}` }, quietLogger());
    try {
      const target = downstream.url;
      const targetPath = `${service.url}/targets/${encodeURIComponent(target)}`;
      expect((await post(`${targetPath}/breaker`, { action: 'open', durationMs: 600_000 })).status).toBe(200);
      const enqueued = await post(`${service.url}/retry-tasks`, { targetUrl: `${downstream.url}/ok`, method: 'POST' });
      expect(enqueued.status).toBe(201);
      const { taskId, createdAt } = (await enqueued.json()) as { taskId: string; createdAt: number };
      const scrape = async () => parseSamples(await (await fetch(`${service.url}/metrics`)).text());
      const age = async () => valueOf(await scrape(), 'retry_oldest_pending_age_seconds', { target });

      // Read from the store at scrape time (at most once per 5 s), its age computed at each scrape: it grows while the
      // task waits, and no task has ended.
      const first = await waitFor('the waiting task in the gauge', async () => (await age()) ?? false);
      expect(first).toBeGreaterThanOrEqual(0);
      // createdAt is whole ms and the service's clock is not: its age may read up to a millisecond beyond Date.now()'s.
      expect(first).toBeLessThanOrEqual((Date.now() + 1 - createdAt) / 1_000);
      await waitFor('the age to grow by a second', async () => ((await age()) ?? 0) >= first + 1);
      expect(valueOf(await scrape(), 'retry_task_age_seconds_count', { status: 'CANCELLED' })).toBeUndefined();

      expect((await fetch(`${service.url}/retry-tasks/${taskId}`, { method: 'DELETE' })).status).toBe(200);
      await waitFor('the series to go once the task ended', async () => (await age()) === undefined, 15_000);
    } finally {
      await service.close();
      await downstream.close();
    }
  }, 30_000);

  it('spans tenants, so only a metrics or admin key of the default tenant may read it, and a metrics key reads nothing else', async () => {
    const storeUrl = `sqlite:${join(dir, 'access.db')}`;
    const { store, blobs } = await openStore(storeUrl);
    const keys = new ApiKeys(store);
    const admin = (await keys.create({ tenantId: 'default', scope: 'admin', name: 'ops' })).token;
    const scraper = (await keys.create({ tenantId: 'default', scope: 'metrics', name: 'prometheus' })).token;
    const reader = (await keys.create({ tenantId: 'default', scope: 'read', name: 'dashboards' })).token;
    const otherAdmin = (await keys.create({ tenantId: 'acme', scope: 'admin', name: 'acme ops' })).token;
    await store.close();
    await blobs.close?.();
    const service = await startRetryd({ ...config, store: storeUrl }, quietLogger());
    try {
      const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
      const as = (token?: string) => (token === undefined ? {} : { headers: bearer(token) });
      const scrape = (token?: string) => fetch(`${service.url}/metrics`, as(token));
      const anonymous = await scrape();
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
      for (const token of [reader, otherAdmin]) {
        const refused = await scrape(token);
        expect(refused.status).toBe(403);
        expect(((await refused.json()) as { detail: string }).detail).toContain('an admin or metrics key of the default tenant');
      }
      for (const token of [admin, scraper]) {
        const allowed = await scrape(token);
        expect(allowed.status).toBe(200);
        expect(await allowed.text()).toContain('# TYPE retry_attempts_total counter');
      }
      // A scraper's key reads the metrics alone: no task, key, target or console number.
      for (const path of ['/retry-tasks', '/dead-letters', '/retry-policies', '/targets', '/api-keys', '/console/stats']) {
        const refused = await fetch(`${service.url}${path}`, as(scraper));
        expect(refused.status, path).toBe(403);
      }
      expect((await post(`${service.url}/retry-tasks`, { targetUrl: 'http://127.0.0.1:9/x', method: 'POST' }, bearer(scraper))).status).toBe(403);
      // Metrics keys are the default tenant's: its admins may make one, another tenant's may not.
      const made = await post(`${service.url}/api-keys`, { name: 'second scraper', scope: 'metrics' }, bearer(admin));
      expect(made.status).toBe(201);
      expect((await scrape(((await made.json()) as { key: string }).key)).status).toBe(200);
      const refused = await post(`${service.url}/api-keys`, { name: 'acme scraper', scope: 'metrics' }, bearer(otherAdmin));
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { errors: { field: string; message: string }[] }).errors).toEqual([
        expect.objectContaining({ field: 'scope', message: 'scope must be read, write or admin for tenant acme: metrics keys belong to the default tenant' }),
      ]);
    } finally {
      await service.close();
    }
  });
});
