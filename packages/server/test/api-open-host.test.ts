import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostNameOf, normaliseAllowedHost } from '../src/access/open-hosts.js';
import { ApiKeys } from '../src/access/api-keys.js';
import { Authenticator } from '../src/access/authenticator.js';
import { TenantLimiter } from '../src/access/tenant-limiter.js';
import type { AppAccess } from '../src/api/build-app.js';
import { createLogger } from '../src/service/logger.js';
import { ConfigError, DEFAULT_CONFIG } from '../src/service/retryd-config.js';
import { startRetryd } from '../src/service/start-retryd.js';
import type { Store } from '../src/store/store.js';
import { startApi, type ApiHarness } from './api-harness.js';

// A service with no API key answers anyone who reaches it as the default tenant; a browser reaches a loopback service
// from any page whose name an attacker rebinds to 127.0.0.1, and sends that name in Host. So an open service answers
// only requests for localhost, the loopback addresses and the names it is given.

const accessOf =
  (openHosts: string[] = []) =>
  (store: Store): AppAccess => ({
    authenticator: new Authenticator(store, { keyCheckMs: 0 }),
    limiter: new TenantLimiter(store, { defaults: { requestsPerSecond: null, maxPendingTasks: null } }),
    apiKeys: new ApiKeys(store),
    openHosts,
  });

describe('Host of a service without API keys', () => {
  let api: ApiHarness;
  beforeAll(async () => {
    api = await startApi({ access: accessOf(['retryd.internal', '10.1.2.3']) });
  });
  afterAll(async () => api.close());

  it('answers 421 HOST_NOT_ALLOWED to another name, naming the header and the rule', async () => {
    for (const host of ['rebind.attacker.example', 'rebind.attacker.example:8080', 'localhost.attacker.example', '127.0.0.1.nip.io']) {
      const res = await api.call('GET', '/retry-tasks', undefined, { host });
      expect(res.status, host).toBe(421);
      expect(res.body).toMatchObject({ code: 'HOST_NOT_ALLOWED', status: 421, errors: [{ field: 'headers.Host' }] });
      expect(res.body.detail).toContain(JSON.stringify(hostNameOf(host)));
      expect(res.body.detail).toContain('--allowed-hosts');
    }
    // A write is refused before it is read, as any request is.
    const enqueue = await api.call('POST', '/retry-tasks', { targetUrl: 'https://api.example.com/', method: 'POST' }, { host: 'rebind.attacker.example' });
    expect(enqueue.status).toBe(421);
  });

  it('answers localhost, the loopback addresses and the names given, on any port and in any case', async () => {
    for (const host of ['localhost', 'LOCALHOST:8080', 'localhost.', '127.0.0.1', '127.0.0.1:9', '127.1.2.3:80', '[::1]', '[::1]:8080', 'retryd.internal:443', 'Retryd.Internal', '10.1.2.3:8080']) {
      expect((await api.call('GET', '/retry-tasks', undefined, { host })).status, host).toBe(200);
    }
  });

  it('keeps the health probes, the docs and the console public whatever the Host', async () => {
    for (const path of ['/healthz', '/readyz', '/openapi.json', '/docs']) {
      expect((await api.call('GET', path, undefined, { host: 'rebind.attacker.example' })).status, path).toBe(200);
    }
  });

  it('answers 421 to a request with no Host at all', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(api.url).port), '127.0.0.1');
      let data = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => (data += chunk));
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
      socket.write('GET /retry-tasks HTTP/1.0\r\n\r\n');
    });
    expect(answer).toMatch(/^HTTP\/1\.1 421 /);
    expect(answer).toContain('a missing or malformed Host');
  });

  it('leaves the Host alone once the service has a key: the key is what counts', async () => {
    const keyed = await startApi({ access: accessOf() });
    try {
      const { token } = await new ApiKeys(keyed.store).create({ tenantId: 'default', scope: 'read', name: 'reader' });
      expect((await keyed.call('GET', '/retry-tasks', undefined, { host: 'retryd.example.com' })).status).toBe(401);
      expect((await keyed.call('GET', '/retry-tasks', undefined, { host: 'retryd.example.com', authorization: `Bearer ${token}` })).status).toBe(200);
    } finally {
      await keyed.close();
    }
  });
});

describe('--allowed-hosts', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'retryd-hosts-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('lets retryd serve answer the names given, and no other', async () => {
    const config = { ...DEFAULT_CONFIG, port: 0, store: `sqlite:${join(dir, 'hosts.db')}`, sqliteSync: 'normal' as const, graceMs: 0, role: 'api' as const };
    const service = await startRetryd({ ...config, allowedHosts: ['Retryd.Internal'] }, createLogger('silent'));
    try {
      const status = async (host: string) => {
        const res = await request(`${service.url}/retry-tasks`, { headers: { host } });
        await res.body.dump();
        return res.statusCode;
      };
      expect(await status('retryd.internal:8080')).toBe(200);
      expect(await status('localhost')).toBe(200);
      expect(await status('retryd.example.com')).toBe(421);
    } finally {
      await service.close();
    }
    await expect(startRetryd({ ...config, allowedHosts: ['http://retryd.internal'] }, createLogger('silent'))).rejects.toThrow(
      new ConfigError('--allowed-hosts must be host names or addresses without a scheme or port (e.g. retryd.internal), got "http://retryd.internal"'),
    );
  });

  it('normalises names and refuses what is not a host name', () => {
    expect(normaliseAllowedHost('Retryd.Internal.')).toBe('retryd.internal');
    expect(normaliseAllowedHost('::1')).toBe('[::1]');
    expect(normaliseAllowedHost('[2001:db8::1]')).toBe('[2001:db8::1]');
    for (const bad of ['retryd.internal:8080', 'http://retryd.internal', '*.example.com', 'a b', '']) expect(normaliseAllowedHost(bad), bad).toBeUndefined();
    expect(hostNameOf('[::1]:8080')).toBe('[::1]');
    expect(hostNameOf('[::1')).toBeUndefined();
    expect(hostNameOf('Example.COM.:80')).toBe('example.com');
  });
});
