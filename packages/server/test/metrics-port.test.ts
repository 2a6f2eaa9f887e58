import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeys } from '../src/access/api-keys.js';
import { openStore } from '../src/service/open-store.js';
import { ConfigError, DEFAULT_CONFIG, type RetrydConfig } from '../src/service/retryd-config.js';
import { startRetryd, type RunningRetryd } from '../src/service/start-retryd.js';
import { quietLogger } from './captured-logger.js';
import { reply, startServer } from './engine-helpers.js';
import { waitFor } from './wait-for.js';
import { parseSamples, valueOf } from './metrics-text.js';
import { cleanupAfterEach } from './service-harness.js';

// --metrics-port: /metrics, /healthz and /readyz on a port of their own, for workers (no API) and to move the scrape
// off the API's port; real services on loopback sharing one SQLite file.

let dir: string;
let config: RetrydConfig;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'retryd-metrics-port-'));
  config = { ...DEFAULT_CONFIG, port: 0, allowTargets: ['127.0.0.1/32'], sqliteSync: 'normal', graceMs: 0 };
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const cleanup = cleanupAfterEach();
const start = async (overrides: Partial<RetrydConfig>): Promise<RunningRetryd> => {
  const service = await startRetryd({ ...config, ...overrides }, quietLogger());
  cleanup.push(() => service.close());
  return service;
};
const metricsUrlOf = (service: RunningRetryd): string => {
  if (service.metricsUrl === undefined) throw new Error('expected a metrics URL');
  return service.metricsUrl;
};
const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

/** A TCP server holding a free loopback port, so the service finds it taken. */
async function holdPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return { port: address.port, server };
}

describe('--metrics-port', () => {
  it("serves a worker's own attempts, and its health, on a port of their own while another instance takes the API", async () => {
    const store = `sqlite:${join(dir, 'worker.db')}`;
    const downstream = await startServer((_req, res) => reply(res, 200));
    cleanup.push(() => downstream.close());
    const api = await start({ store, role: 'api' });
    const worker = await start({ store, role: 'worker', metricsPort: 0 });
    expect(worker.url).toBe('');
    const metricsUrl = metricsUrlOf(worker);
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(api.metricsUrl).toBeUndefined();

    for (const probe of ['/healthz', '/readyz']) expect((await fetch(`${metricsUrl}${probe}`)).status, probe).toBe(200);
    // The API is not on the metrics port: nothing but the scrape and the probes.
    expect((await fetch(`${metricsUrl}/retry-tasks`)).status).toBe(404);

    const enqueued = await fetch(`${api.url}/retry-tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ targetUrl: `${downstream.url}/ok`, method: 'POST' }),
    });
    expect(enqueued.status).toBe(201);
    // The attempt is the worker's: its counters show it, where an API-only instance's never would.
    await waitFor(
      "the worker's attempt in its metrics",
      async () => {
        const scraped = await fetch(`${metricsUrl}/metrics`);
        expect(scraped.status).toBe(200);
        const labels = { outcome: 'succeeded', policy: 'default', target: downstream.url };
        return valueOf(parseSamples(await scraped.text()), 'retry_attempts_total', labels) === 1;
      },
      30_000,
      50,
    );
  }, 60_000);

  it('moves /metrics off the API port of an all instance, and asks the same keys there: a metrics key, not an anonymous scrape', async () => {
    const store = `sqlite:${join(dir, 'keys.db')}`;
    const opened = await openStore(store);
    const keys = new ApiKeys(opened.store);
    const scraper = (await keys.create({ tenantId: 'default', scope: 'metrics', name: 'prometheus' })).token;
    const admin = (await keys.create({ tenantId: 'default', scope: 'admin', name: 'ops' })).token;
    await opened.store.close();
    await opened.blobs.close?.();

    const service = await start({ store, metricsPort: 0 });
    const metricsUrl = metricsUrlOf(service);
    // Gone from the API's port (a route it does not have, for any key), and read on the metrics port with either key.
    expect((await fetch(`${service.url}/metrics`, bearer(admin))).status).toBe(404);
    expect((await fetch(`${metricsUrl}/metrics`, bearer(admin))).status).toBe(200);
    const anonymous = await fetch(`${metricsUrl}/metrics`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const scraped = await fetch(`${metricsUrl}/metrics`, bearer(scraper));
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('# TYPE retry_in_flight gauge');
    // The probes stay public, as on the API's port.
    expect((await fetch(`${metricsUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
  }, 60_000);

  it('stops the start naming the flag when the metrics port (or the API port) is taken, and leaves nothing running', async () => {
    const held = await holdPort();
    cleanup.push(() => new Promise((resolve) => held.server.close(resolve)));
    for (const role of ['worker', 'all'] as const) {
      const started = startRetryd({ ...config, store: `sqlite:${join(dir, `taken-${role}.db`)}`, role, metricsPort: held.port }, quietLogger());
      await expect(started).rejects.toThrow(ConfigError);
      await expect(started).rejects.toThrow(`--metrics-port ${held.port}: 127.0.0.1:${held.port} is taken by another process (EADDRINUSE); choose another port`);
    }
    // The API's own port, the same way.
    const api = startRetryd({ ...config, store: `sqlite:${join(dir, 'taken-api.db')}`, port: held.port }, quietLogger());
    await expect(api).rejects.toThrow(`--port ${held.port}: 127.0.0.1:${held.port} is taken by another process (EADDRINUSE); choose another port`);
    // The store was closed: a new service opens the same file and starts.
    await start({ store: `sqlite:${join(dir, 'taken-all.db')}`, metricsPort: 0 });
  }, 60_000);

  it('refuses the API port itself, and a worker serving its metrics beyond loopback while the store holds no key', async () => {
    await expect(startRetryd({ ...config, store: 'sqlite::memory:', port: 18_080, metricsPort: 18_080 }, quietLogger())).rejects.toThrow(
      '--metrics-port must differ from --port (18080), got 18080',
    );
    const beyond = startRetryd({ ...config, store: `sqlite:${join(dir, 'beyond.db')}`, role: 'worker', host: '0.0.0.0', metricsPort: 0 }, quietLogger());
    await expect(beyond).rejects.toThrow(/--host 0\.0\.0\.0 serves beyond loopback, and the store holds no API key/);
  }, 60_000);
});
