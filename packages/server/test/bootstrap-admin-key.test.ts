import { afterAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../src/access/api-key-token.js';
import { cleanupAfterEach, runCli, startServiceProcess, stopService } from './service-harness.js';
import { POSTGRES_STORE, SQLITE_STORE, type SharedStore } from './shared-stores.js';

// The first admin key of a deployment from RETRYD_BOOTSTRAP_ADMIN_KEY: the built CLI on a fresh store of its own.
describe.each<SharedStore>([SQLITE_STORE, POSTGRES_STORE])('RETRYD_BOOTSTRAP_ADMIN_KEY on $name', (shared) => {
  const cleanup = cleanupAfterEach();
  afterAll(() => shared.drop());

  const serve = async (store: string, key: string, host = '127.0.0.1') => {
    const service = await startServiceProcess(['--store', store, '--host', host, '--allow-targets', '127.0.0.1/32'], { RETRYD_BOOTSTRAP_ADMIN_KEY: key });
    cleanup.push(() => stopService(service));
    return service;
  };
  const listKeys = async (store: string) => {
    const run = await runCli(['keys', 'list', '--json', '--store', store]);
    expect(run.code, run.stderr).toBe(0);
    return run.stdout.trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as { keyId: string; tenantId: string; scope: string; revokedAt: number | null });
  };

  it('makes a fresh store serve beyond loopback with that key, once, and adds a different key given later', async () => {
    const store = shared.freshUrl();
    const first = generateApiKey();
    // Beyond loopback with an empty store would refuse to start without the key.
    const service = await serve(store, first.token, '0.0.0.0');
    expect(service.logs.find((l) => l.event === 'start')?.auth).toBe('api-keys');
    expect(service.logs.find((l) => l.event === 'bootstrap_admin_key')).toMatchObject({ outcome: 'created', keyId: first.keyId });
    expect((await fetch(`${service.url}/retry-tasks`)).status).toBe(401);
    expect((await fetch(`${service.url}/api-keys`, { headers: { authorization: `Bearer ${first.token}` } })).status).toBe(200);
    expect(JSON.stringify(service.logs)).not.toContain(first.secret);
    await stopService(service);

    const again = await serve(store, first.token);
    expect(again.logs.find((l) => l.event === 'bootstrap_admin_key')).toMatchObject({ outcome: 'present', keyId: first.keyId });
    await stopService(again);
    expect(await listKeys(store)).toEqual([expect.objectContaining({ keyId: first.keyId, tenantId: 'default', scope: 'admin', revokedAt: null })]);

    const second = generateApiKey();
    const later = await serve(store, second.token);
    expect(later.logs.find((l) => l.event === 'bootstrap_admin_key')).toMatchObject({ outcome: 'created', keyId: second.keyId });
    for (const key of [first, second]) expect((await fetch(`${later.url}/api-keys`, { headers: { authorization: `Bearer ${key.token}` } })).status).toBe(200);
    await stopService(later);
    expect((await listKeys(store)).map((k) => k.keyId).sort()).toEqual([first.keyId, second.keyId].sort());
  }, 60_000);

  it('never brings back a revoked key, and refuses a key id the store holds with another secret', async () => {
    const store = shared.freshUrl();
    const key = generateApiKey();
    await stopService(await serve(store, key.token));
    expect((await runCli(['keys', 'revoke', key.keyId, '--store', store])).code).toBe(0);
    const revoked = await serve(store, key.token);
    expect(revoked.logs.find((l) => l.event === 'bootstrap_admin_key')).toMatchObject({ outcome: 'revoked', keyId: key.keyId });
    expect((await fetch(`${revoked.url}/api-keys`, { headers: { authorization: `Bearer ${key.token}` } })).status).toBe(401);
    await stopService(revoked);

    const other = generateApiKey();
    const clash = `rtd_${key.keyId}_${other.secret}`;
    const run = await runCli(['serve', '--port', '0', '--store', store], { RETRYD_BOOTSTRAP_ADMIN_KEY: clash });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`RETRYD_BOOTSTRAP_ADMIN_KEY: the store already holds API key ${key.keyId}`);
    expect(run.stderr + run.stdout).not.toContain(other.secret);
  }, 60_000);
});

describe('RETRYD_BOOTSTRAP_ADMIN_KEY that is not a key', () => {
  it('stops the start before the store opens, naming the variable and the rule, never the value', async () => {
    const run = await runCli(['serve', '--port', '0', '--store', 'sqlite::memory:'], { RETRYD_BOOTSTRAP_ADMIN_KEY: 'hunter2-not-a-key' });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('retryd: RETRYD_BOOTSTRAP_ADMIN_KEY must be an API key: rtd_, 16 lower-case hex digits, _, then 43 base64url characters');
    expect(run.stderr).not.toContain('hunter2');
  });
});
