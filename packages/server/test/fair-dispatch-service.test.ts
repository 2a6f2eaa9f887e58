import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiKeys } from '../src/access/api-keys.js';
import { protectionPatch } from '../src/cli/targets-command.js';
import { openStore } from '../src/service/open-store.js';
import { DEFAULT_CONFIG, type RetrydConfig } from '../src/service/retryd-config.js';
import { startRetryd } from '../src/service/start-retryd.js';
import { quietLogger } from './captured-logger.js';
import { reply, startServer, type TestServer } from './engine-helpers.js';
import { waitFor } from './wait-for.js';

// The service's dispatch slots shared between tenants, on loopback with the default concurrency (256) and the default
// bounds: a tenant's admin turns its own target's protections off and enqueues 300 tasks to a target that never
// answers; another tenant's task to another origin is dispatched at once, not when those attempts time out.

const policy = { maxAttempts: 3, backoffType: 'FIXED', initialDelayMs: 100, multiplier: 1, maxDelayMs: 100, jitterType: 'NONE' };

describe('dispatch slots shared between tenants, in the running service', () => {
  let dir: string;
  let config: RetrydConfig;
  const servers: TestServer[] = [];
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'retryd-fair-'));
    // The defaults but for the attempt timeout: long enough that nothing ends while the test looks, short enough to stop.
    config = { ...DEFAULT_CONFIG, port: 0, store: `sqlite:${join(dir, 'retryd.db')}`, sqliteSync: 'normal', graceMs: 0, allowTargets: ['127.0.0.1/32'], attemptTimeoutMs: 10_000 };
  });
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("dispatches another tenant's task at once while 300 tasks hang on one tenant's unprotected target", async () => {
    const hanging = await startServer(() => undefined);
    const fast = await startServer((_req, res) => reply(res, 200, 'ok'));
    servers.push(hanging, fast);
    const { store, blobs } = await openStore(config.store);
    const keys = new ApiKeys(store);
    const admin = (await keys.create({ tenantId: 'acme', scope: 'admin', name: 'acme-admin' })).token;
    const writer = (await keys.create({ tenantId: 'globex', scope: 'write', name: 'globex-writer' })).token;
    await store.close();
    await blobs.close?.();
    const service = await startRetryd(config, quietLogger());
    try {
      const call = async (token: string, method: string, path: string, body?: unknown) => {
        const response = await fetch(`${service.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return { status: response.status, body: (await response.json()) as Record<string, unknown> };
      };
      // acme's admin turns its own target's protections off (no breaker, no slow start, no adaptive limit)...
      expect((await call(admin, 'PUT', `/targets/${encodeURIComponent(hanging.url)}`, protectionPatch(false))).status).toBe(200);
      // ...and fills its queue for it.
      const tasks = Array.from({ length: 300 }, () => ({ targetUrl: `${hanging.url}/hook`, method: 'POST', policy }));
      expect((await call(admin, 'POST', '/retry-tasks/batch', { tasks })).status).toBe(200);
      // The target holds at most all but a sixteenth of the 256 slots: 240 attempts hang.
      await waitFor('240 attempts on the hanging target', () => hanging.requests.length >= 240);

      const started = Date.now();
      const created = await call(writer, 'POST', '/retry-tasks', { targetUrl: `${fast.url}/hook`, method: 'POST', policy });
      expect(created.status).toBe(201);
      const taskId = (created.body as { taskId: string }).taskId;
      await waitFor("globex's task to succeed", async () => (await call(writer, 'GET', `/retry-tasks/${taskId}`)).body.status === 'SUCCEEDED', 8_000);
      const tookMs = Date.now() - started;
      // Before acme's attempts could time out (10 s): none of them has ended, and no more of them went out.
      expect(hanging.requests).toHaveLength(240);
      expect(tookMs).toBeLessThan(8_000);
      expect(fast.requests).toHaveLength(1);
    } finally {
      await service.close();
    }
  }, 60_000);
});
