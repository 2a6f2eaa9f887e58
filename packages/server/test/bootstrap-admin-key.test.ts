import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
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

const CLI = join(import.meta.dirname, '..', 'dist', 'cli', 'main.js');
/** The line of docs/server.md that sets RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256 from $KEY without retryd (sha256sum). */
const DOCUMENTED_ONE_LINER = readFileSync(join(import.meta.dirname, '..', '..', '..', 'docs', 'server.md'), 'utf8')
  .split('\n')
  .find((line) => line.startsWith('export RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256=') && line.includes('sha256sum'));

/** What a shell prints for `script`, with KEY in its environment; a failure throws with its stderr. */
async function shell(script: string, key: string): Promise<string> {
  const { stdout } = await promisify(execFile)('sh', ['-c', script], { env: { ...process.env, KEY: key, RETRYD_CLI: CLI }, timeout: 20_000 });
  return stdout;
}

/** `retryd keys hash` fed `input` on stdin: its exit code and output. */
async function keysHash(input: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return promisify(execFile)('sh', ['-c', `printf %s "$KEY" | "${process.execPath}" "$RETRYD_CLI" keys hash`], { env: { ...process.env, KEY: input, RETRYD_CLI: CLI }, timeout: 20_000 }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

// The same first key given as its id and hash (RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256): the key stays out of the service's environment.
describe.each<SharedStore>([SQLITE_STORE, POSTGRES_STORE])('RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256 on $name', (shared) => {
  const cleanup = cleanupAfterEach();
  afterAll(() => shared.drop());

  it('makes the key from its hash, which retryd keys hash and the documented one-liner both print, and the key itself finds it present', async () => {
    const store = shared.freshUrl();
    const key = generateApiKey();
    const printed = await keysHash(key.token);
    expect(printed.code, printed.stderr).toBe(0);
    const hash = printed.stdout.trim();
    expect(hash).toBe(`${key.keyId}:${createHash('sha256').update(key.secret).digest('hex')}`);
    if (DOCUMENTED_ONE_LINER === undefined) throw new Error('docs/server.md has no sha256sum line for RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256');
    expect(await shell(`${DOCUMENTED_ONE_LINER}; printf %s "$RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256"`, key.token)).toBe(hash);

    // Upper-case hex, as some tools print it, is the same hash.
    const [id, digest] = hash.split(':') as [string, string];
    const service = await startServiceProcess(['--store', store, '--host', '0.0.0.0'], { RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256: `${id}:${digest.toUpperCase()}` });
    cleanup.push(() => stopService(service));
    expect(service.logs.find((l) => l.event === 'start')?.auth).toBe('api-keys');
    expect(service.logs.find((l) => l.event === 'bootstrap_admin_key')).toMatchObject({ outcome: 'created', keyId: key.keyId });
    expect((await fetch(`${service.url}/retry-tasks`)).status).toBe(401);
    expect((await fetch(`${service.url}/api-keys`, { headers: { authorization: `Bearer ${key.token}` } })).status).toBe(200);
    await stopService(service);

    const again = await startServiceProcess(['--store', store], { RETRYD_BOOTSTRAP_ADMIN_KEY: key.token });
    cleanup.push(() => stopService(again));
    expect(again.logs.find((l) => l.event === 'bootstrap_admin_key')).toMatchObject({ outcome: 'present', keyId: key.keyId });
    await stopService(again);
    const listed = await runCli(['keys', 'list', '--json', '--store', store]);
    expect(listed.stdout.trim().split('\n').map((line) => JSON.parse(line) as unknown)).toEqual([
      expect.objectContaining({ keyId: key.keyId, tenantId: 'default', scope: 'admin', name: 'bootstrap (RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256)', revokedAt: null }),
    ]);

    // Another hash for that id is another secret: refused, naming the variable.
    const clash = await runCli(['serve', '--port', '0', '--store', store], { RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256: `${key.keyId}:${'0'.repeat(64)}` });
    expect(clash.code).toBe(2);
    expect(clash.stderr).toContain(`RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256: the store already holds API key ${key.keyId}`);
  }, 90_000);
});

describe('RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256 that is not a key id and hash', () => {
  const { keyId, token, secret } = generateApiKey();
  const digest = createHash('sha256').update(secret).digest('hex');
  const rule = "RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256 must be a key's id and hash as retryd keys hash prints them: its 16 lower-case hex digits, :, then the 64 hex digits";
  it.each([
    ['the key itself', { RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256: token }, rule],
    ['a hash without the id', { RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256: digest }, rule],
    ['a short hash', { RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256: `${keyId}:${digest.slice(1)}` }, rule],
    ["sha256sum's whole line", { RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256: `${keyId}:${digest}  -` }, "(sha256sum prints the hash then '  -': keep the hash alone)"],
    ['both variables', { RETRYD_BOOTSTRAP_ADMIN_KEY: token, RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256: `${keyId}:${digest}` }, 'RETRYD_BOOTSTRAP_ADMIN_KEY and RETRYD_BOOTSTRAP_ADMIN_KEY_SHA256 are both set: set one of them'],
  ])('stops the start before the store opens for %s, naming the variable, never the key', async (_what, env, message) => {
    const run = await runCli(['serve', '--port', '0', '--store', 'sqlite::memory:'], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
    expect(run.stderr).not.toContain(secret);
  });

  it('retryd keys hash refuses what is not a key, naming the rule, never echoing it', async () => {
    const run = await keysHash(`${token.slice(0, -1)}!`);
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toBe('retryd: retryd keys hash reads an API key on stdin: rtd_, 16 lower-case hex digits, _, then 43 base64url characters (A-Z a-z 0-9 - _), as retryd keys create prints one; got 64 characters that are not one');
    expect(run.stderr).not.toContain(secret.slice(0, -1));
  });
});

describe('RETRYD_BOOTSTRAP_ADMIN_KEY that is not a key', () => {
  it('stops the start before the store opens, naming the variable and the rule, never the value', async () => {
    const run = await runCli(['serve', '--port', '0', '--store', 'sqlite::memory:'], { RETRYD_BOOTSTRAP_ADMIN_KEY: 'hunter2-not-a-key' });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('retryd: RETRYD_BOOTSTRAP_ADMIN_KEY must be an API key: rtd_, 16 lower-case hex digits, _, then 43 base64url characters');
    expect(run.stderr).not.toContain('hunter2');
  });
});
