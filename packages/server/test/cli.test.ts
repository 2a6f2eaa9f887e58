import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli as run, startServiceProcess } from './service-harness.js';

describe('retryd serve (the command)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'retryd-cli-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('--help explains every flag with its environment variable', async () => {
    const { stdout, code } = await run(['serve', '--help']);
    expect(code).toBe(0);
    for (const [flag, env] of [
      ['--port', 'RETRYD_PORT'],
      ['--host', 'RETRYD_HOST'],
      ['--store', 'RETRYD_STORE'],
      ['--concurrency', 'RETRYD_CONCURRENCY'],
      ['--allow-targets', 'RETRYD_ALLOW_TARGETS'],
      ['--attempt-timeout', 'RETRYD_ATTEMPT_TIMEOUT_MS'],
      ['--visibility-timeout', 'RETRYD_VISIBILITY_TIMEOUT_MS'],
      ['--grace', 'RETRYD_GRACE_MS'],
      ['--sync', 'RETRYD_SQLITE_SYNC'],
      ['--sqlite-cache', 'RETRYD_SQLITE_CACHE_MIB'],
    ]) {
      expect(stdout).toContain(flag);
      expect(stdout).toContain(env);
    }
  });

  it('applies every flag, and environment variables where no flag is given', async () => {
    const service = await startServiceProcess(
      ['--store', `sqlite:${join(dir, 'flags.db')}`, '--attempt-timeout', '1000', '--visibility-timeout', '1500', '--grace', '250', '--sync', 'normal', '--sqlite-cache', '16'],
      { RETRYD_CONCURRENCY: '7', RETRYD_ALLOW_TARGETS: '127.0.0.1/32,10.0.0.0/8' },
    );
    try {
      expect(service.logs.find((l) => l.event === 'start')).toMatchObject({
        concurrency: 7,
        attemptTimeoutMs: 1000,
        visibilityTimeoutMs: 1500,
        graceMs: 250,
        sqliteSync: 'normal',
        sqliteCacheMiB: 16,
        allowTargets: ['127.0.0.1/32', '10.0.0.0/8'],
      });
      expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
    } finally {
      service.child.kill('SIGTERM');
      expect(await service.exited).toBe(0);
    }
    expect(service.logs.some((l) => l.event === 'stop')).toBe(true);
  });

  it.each([
    [['--port', 'abc'], '--port must be an integer from 0 to 65535, got "abc"'],
    [['--concurrency', '0'], '--concurrency must be an integer from 1 to 100000, got "0"'],
    [['--sqlite-cache', '0'], '--sqlite-cache must be an integer from 1 to 65536, got "0"'],
    [['--allow-targets', '10.0.0.0/99'], '--allow-targets: "10.0.0.0/99" is not a CIDR'],
    [['--store', 'mysql://db'], '--store'],
    [['--attempt-timeout', '2000', '--visibility-timeout', '1000'], '--visibility-timeout must be greater than --attempt-timeout (2000), got 1000'],
  ])('refuses %j with one line naming the flag and the rule, exit code 2', async (args, message) => {
    const { code, stderr } = await run(['serve', '--port', '0', '--store', `sqlite:${join(dir, 'bad.db')}`, ...args]);
    expect(code).toBe(2);
    expect(stderr).toContain(message);
    expect(stderr).not.toContain('    at ');
  });

  it.each([
    [{ RETRYD_ENCRYPTION_KEY: 'c2hvcnQ=' }, [], 'retryd: RETRYD_ENCRYPTION_KEY entry 1 must be base64 of 32 bytes, got 5 bytes'],
    [{}, ['--secrets-file', '/no/such/secrets.json'], 'retryd: --secrets-file must name a readable JSON file of secret names to string values; /no/such/secrets.json cannot be read (ENOENT)'],
  ])('refuses a bad encryption key or secrets file (%j %j) with one line, exit code 2', async (env, args, message) => {
    const { code, stderr } = await run(['serve', '--port', '0', '--store', `sqlite:${join(dir, 'bad.db')}`, ...args], env);
    expect(code).toBe(2);
    expect(stderr.trim()).toBe(message);
  });
});
