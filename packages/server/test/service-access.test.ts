import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiKeys } from '../src/access/api-keys.js';
import { openStore } from '../src/service/open-store.js';
import { DEFAULT_CONFIG, type RetrydConfig } from '../src/service/retryd-config.js';
import { isLoopbackHost, startRetryd } from '../src/service/start-retryd.js';
import { runCli as run } from './service-harness.js';
import { capturedLogger } from './captured-logger.js';

describe('retryd serve: who may listen where', () => {
  let dir: string;
  let config: RetrydConfig;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'retryd-access-'));
    config = { ...DEFAULT_CONFIG, port: 0, store: `sqlite:${join(dir, 'retryd.db')}`, sqliteSync: 'normal', graceMs: 0 };
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  it('tells loopback hosts from the others', () => {
    for (const host of ['127.0.0.1', '127.3.4.5', 'localhost', '::1', '[::1]']) expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.2', 'retryd.internal', '127.0.0.1.nip.io']) expect(isLoopbackHost(host), host).toBe(false);
  });

  it('refuses to listen beyond loopback without an API key, naming the way out', async () => {
    const { logger } = capturedLogger();
    await expect(startRetryd({ ...config, host: '0.0.0.0' }, logger)).rejects.toThrow(
      /--host 0\.0\.0\.0 serves beyond loopback, and the store holds no API key.*retryd keys create.*--auth-done-upstream/,
    );
  });

  it('listens beyond loopback with --auth-done-upstream, and says so loudly', async () => {
    const { logger, lines } = capturedLogger();
    const service = await startRetryd({ ...config, host: '0.0.0.0', authDoneUpstream: true }, logger);
    try {
      expect(lines.find((l) => l.event === 'start')).toMatchObject({ auth: 'upstream' });
      expect(lines.find((l) => l.event === 'auth_done_upstream')).toMatchObject({ level: 40 });
      const port = new URL(service.url).port;
      expect((await fetch(`http://127.0.0.1:${port}/retry-tasks`)).status).toBe(200);
    } finally {
      await service.close();
    }
  });

  it('listens beyond loopback once the store holds a key, and then every request needs one', async () => {
    const { store, blobs } = await openStore(config.store);
    const { token } = await new ApiKeys(store).create({ tenantId: 'default', scope: 'read', name: 'probe' });
    await store.close();
    await blobs.close?.();
    const { logger, lines } = capturedLogger();
    const service = await startRetryd({ ...config, host: '0.0.0.0' }, logger);
    try {
      expect(lines.find((l) => l.event === 'start')).toMatchObject({ auth: 'api-keys' });
      const base = `http://127.0.0.1:${new URL(service.url).port}`;
      expect((await fetch(`${base}/retry-tasks`)).status).toBe(401);
      expect((await fetch(`${base}/retry-tasks`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
      expect((await fetch(`${base}/readyz`)).status).toBe(200);
    } finally {
      await service.close();
    }
  });

  it('starts open on loopback without a key, and says how to add one', async () => {
    const { logger, lines } = capturedLogger();
    const service = await startRetryd(config, logger);
    try {
      expect(lines.find((l) => l.event === 'start')).toMatchObject({ auth: 'open' });
      expect(String(lines.find((l) => l.event === 'auth_open')?.msg)).toContain('retryd keys create');
    } finally {
      await service.close();
    }
  });
});

describe('retryd keys and retryd tenants (the commands)', () => {
  let dir: string;
  let store: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'retryd-keys-'));
    store = `sqlite:${join(dir, 'retryd.db')}`;
    // keys and tenants work on a store that exists: migrate makes it, as a deployment's first step does.
    expect((await run(['migrate', '--store', store])).code).toBe(0);
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  it('creates a key shown once, lists keys without secrets, revokes one', async () => {
    const created = await run(['keys', 'create', '--tenant', 'acme', '--scope', 'write', '--name', 'deploy bot', '--store', store]);
    expect(created.code).toBe(0);
    const token = created.stdout.trim();
    expect(token).toMatch(/^rtd_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    const keyId = token.slice(4, 20);
    expect(created.stderr).toContain(`created API key ${keyId}`);

    const listed = await run(['keys', 'list', '--json', '--store', store]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(token.slice(21));
    expect(JSON.parse(listed.stdout.trim())).toMatchObject({ keyId, tenantId: 'acme', scope: 'write', name: 'deploy bot', revokedAt: null });
    expect(listed.stdout).not.toContain('secretHash');
    expect((await run(['keys', 'list', '--store', store])).stdout).toMatch(new RegExp(`${keyId}\\s+acme\\s+write\\s+deploy bot`));

    const revoked = await run(['keys', 'revoke', keyId, '--store', store]);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toContain(`revoked API key ${keyId}`);
    expect(JSON.parse((await run(['keys', 'list', '--json', '--store', store])).stdout.trim()).revokedAt).toEqual(expect.any(Number));
  });

  it('answers a wrong request in one line naming the field, with exit code 2', async () => {
    const badTenant = await run(['keys', 'create', '--tenant', 'no spaces', '--scope', 'read', '--name', 'x', '--store', store]);
    expect(badTenant.code).toBe(2);
    expect(badTenant.stderr).toContain('tenantId must be');
    const badScope = await run(['keys', 'create', '--scope', 'root', '--name', 'x', '--store', store]);
    expect(badScope.code).toBe(2);
    expect(badScope.stderr).toContain("'root' is invalid");
    const unknown = await run(['keys', 'revoke', '0123456789abcdef', '--store', store]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no API key 0123456789abcdef');
  });

  it("shows, sets and clears a tenant's own limits", async () => {
    expect((await run(['tenants', 'limits', 'acme', '--store', store])).stdout).toContain('max pending tasks: none');
    const set = await run(['tenants', 'limits', 'acme', '--max-pending-tasks', '500', '--store', store]);
    expect(set.code).toBe(0);
    expect(set.stdout).toContain('max pending tasks: 500');
    const rate = await run(['tenants', 'limits', 'acme', '--requests-per-second', '50', '--store', store]);
    expect(rate.stdout).toContain('requests per second: 50');
    expect(rate.stdout).toContain('max pending tasks: 500');
    expect((await run(['tenants', 'limits', 'acme', '--requests-per-second', 'many', '--store', store])).code).toBe(2);
    // `none` lifts one limit and keeps the other.
    const lifted = await run(['tenants', 'limits', 'acme', '--max-pending-tasks', 'none', '--store', store]);
    expect(lifted, lifted.stderr).toMatchObject({ code: 0 });
    expect(lifted.stdout).toContain('max pending tasks: none');
    expect(lifted.stdout).toContain('requests per second: 50');
    await run(['tenants', 'limits', 'acme', '--clear', '--store', store]);
    expect((await run(['tenants', 'limits', 'acme', '--store', store])).stdout).toContain('requests per second: none');
  });

  it("shows, sets and clears a tenant's own retention and ceilings", async () => {
    const shown = await run(['tenants', 'retention', 'acme', '--store', store]);
    expect(shown, shown.stderr).toMatchObject({ code: 0 });
    expect(shown.stdout).toContain("SUCCEEDED tasks: the service's");
    const kept = await run(['tenants', 'retention', 'acme', '--succeeded', '1d', '--dead-letters', '90d', '--store', store]);
    expect(kept.code).toBe(0);
    expect(kept.stdout).toContain('SUCCEEDED tasks: 1 d');
    expect(kept.stdout).toContain('dead letters (FAILED, EXHAUSTED): 90 d');
    const short = await run(['tenants', 'retention', 'acme', '--succeeded', '30s', '--store', store]);
    expect(short.code).toBe(2);
    expect(short.stderr).toContain('--succeeded must be a period from 1 min to 3650 d');
    expect((await run(['tenants', 'retention', 'acme', '--succeeded', 'none', '--store', store])).stdout).toContain("SUCCEEDED tasks: the service's");

    const capped = await run(['tenants', 'ceilings', 'acme', '--max-attempts', '20', '--max-budget', '1d', '--store', store]);
    expect(capped.code).toBe(0);
    expect(capped.stdout).toContain('most attempts: 20');
    expect(capped.stdout).toContain('most total budget (and the budget of a policy that sets none): 1 d');
    expect((await run(['tenants', 'ceilings', 'acme', '--max-attempts', '0', '--store', store])).code).toBe(2);
    await run(['tenants', 'ceilings', 'acme', '--clear', '--store', store]);
    expect((await run(['tenants', 'ceilings', 'acme', '--store', store])).stdout).toContain("most attempts: the service's");
  });
});
