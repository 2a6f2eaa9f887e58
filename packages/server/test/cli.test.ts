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
      ['--metrics-port', 'RETRYD_METRICS_PORT'],
      ['--host', 'RETRYD_HOST'],
      ['--store', 'RETRYD_STORE'],
      ['--concurrency', 'RETRYD_CONCURRENCY'],
      ['--allow-targets', 'RETRYD_ALLOW_TARGETS'],
      ['--attempt-timeout', 'RETRYD_ATTEMPT_TIMEOUT_MS'],
      ['--visibility-timeout', 'RETRYD_VISIBILITY_TIMEOUT_MS'],
      ['--grace', 'RETRYD_GRACE_MS'],
      ['--sync', 'RETRYD_SQLITE_SYNC'],
      ['--sqlite-cache', 'RETRYD_SQLITE_CACHE_MIB'],
      ['--secrets-file', 'RETRYD_SECRETS_FILE'],
      ['--credential-headers', 'RETRYD_CREDENTIAL_HEADERS'],
      ['--allowed-hosts', 'RETRYD_ALLOWED_HOSTS'],
      ['--request-timeout', 'RETRYD_REQUEST_TIMEOUT_MS'],
      ['--headers-timeout', 'RETRYD_HEADERS_TIMEOUT_MS'],
      ['--keep-alive-timeout', 'RETRYD_KEEP_ALIVE_TIMEOUT_MS'],
      ['--max-connections', 'RETRYD_MAX_CONNECTIONS'],
      ['--max-in-flight-per-tenant', 'RETRYD_MAX_IN_FLIGHT_PER_TENANT'],
      ['--max-in-flight-per-target', 'RETRYD_MAX_IN_FLIGHT_PER_TARGET'],
      ['--max-retry-after', 'RETRYD_MAX_RETRY_AFTER'],
    ]) {
      expect(stdout).toContain(flag);
      expect(stdout).toContain(env);
    }
  });

  it('applies every flag, and environment variables where no flag is given', async () => {
    const service = await startServiceProcess(
      ['--store', `sqlite:${join(dir, 'flags.db')}`, '--attempt-timeout', '1000', '--visibility-timeout', '1500', '--grace', '250', '--sync', 'normal', '--sqlite-cache', '16', '--max-in-flight-per-target', '5', '--max-retry-after', '10m'],
      { RETRYD_CONCURRENCY: '7', RETRYD_ALLOW_TARGETS: '127.0.0.1/32,10.0.0.0/8', RETRYD_REQUEST_TIMEOUT_MS: '20000', RETRYD_ALLOWED_HOSTS: 'Retryd.Internal', RETRYD_MAX_IN_FLIGHT_PER_TENANT: '6' },
    );
    try {
      expect(service.logs.find((l) => l.event === 'start')).toMatchObject({
        concurrency: 7,
        maxInFlightPerTenant: 6,
        maxInFlightPerTarget: 5,
        maxRetryAfterMs: 600_000,
        attemptTimeoutMs: 1000,
        visibilityTimeoutMs: 1500,
        graceMs: 250,
        sqliteSync: 'normal',
        sqliteCacheMiB: 16,
        allowTargets: ['127.0.0.1/32', '10.0.0.0/8'],
        connections: { requestTimeoutMs: 20_000, headersTimeoutMs: 10_000, keepAliveTimeoutMs: 72_000 },
        allowedHosts: ['retryd.internal'],
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
    [['--request-timeout', '1000', '--headers-timeout', '2000'], '--headers-timeout must be at most --request-timeout (1000), got 2000'],
    [['--max-connections', '0'], '--max-connections must be an integer from 1 to'],
    [['--max-in-flight-per-target', '0'], '--max-in-flight-per-target must be an integer from 1 to 100000, got "0"'],
    [['--max-retry-after', 'soon'], '--max-retry-after must be a period from 0 ms to 3650 d (a number with ms, s, m, h or d; plain ms), got "soon"'],
    [['--metrics-port', '70000'], '--metrics-port must be an integer from 0 to 65535, got "70000"'],
    [['--port', '18081', '--metrics-port', '18081'], '--metrics-port must differ from --port (18081), got 18081'],
    [['--allowed-hosts', 'retryd.internal:8080'], '--allowed-hosts must be host names or addresses without a scheme or port (e.g. retryd.internal), got "retryd.internal:8080"'],
  ])('refuses %j with one line naming the flag and the rule, exit code 2', async (args, message) => {
    const { code, stderr } = await run(['serve', '--port', '0', '--store', `sqlite:${join(dir, 'bad.db')}`, ...args]);
    expect(code).toBe(2);
    expect(stderr).toContain(message);
    expect(stderr).not.toContain('    at ');
  });

  it('serves a worker\'s /metrics and /healthz on RETRYD_METRICS_PORT, and stops with exit code 2 naming the flag when that port is taken', async () => {
    const store = `sqlite:${join(dir, 'worker.db')}`;
    const worker = await startServiceProcess(['--store', store, '--role', 'worker'], { RETRYD_METRICS_PORT: '0' });
    try {
      const start = worker.logs.find((l) => l.event === 'start');
      expect(start).toMatchObject({ role: 'worker', auth: 'open', metricsUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) });
      const metricsUrl = start?.metricsUrl as string;
      expect((await fetch(`${metricsUrl}/healthz`)).status).toBe(200);
      expect(await (await fetch(`${metricsUrl}/metrics`)).text()).toContain('# TYPE retry_in_flight gauge');
      // Its port, taken: a second worker cannot have it.
      const taken = new URL(metricsUrl).port;
      const { code, stderr } = await run(['serve', '--store', store, '--role', 'worker', '--metrics-port', taken]);
      expect(code).toBe(2);
      expect(stderr.trim()).toBe(`retryd: --metrics-port ${taken}: 127.0.0.1:${taken} is taken by another process (EADDRINUSE); choose another port`);
    } finally {
      worker.child.kill('SIGTERM');
      expect(await worker.exited).toBe(0);
    }
  });

  it.each([
    [{ RETRYD_ENCRYPTION_KEY: 'c2hvcnQ=' }, [], 'retryd: RETRYD_ENCRYPTION_KEY entry 1 must be base64 of 32 bytes, got 5 bytes'],
    [{}, ['--secrets-file', '/no/such/secrets.json'], 'retryd: --secrets-file must name a readable JSON file of secret names to string values; /no/such/secrets.json cannot be read (ENOENT)'],
    [
      { RETRYD_TENANT_SECRET_a__b__C: 'v' },
      [],
      "retryd: RETRYD_TENANT_SECRET_a__b__C must name one tenant's secret; it reads as tenant a's b__C and as tenant a__b's C: give it in --secrets-file instead",
    ],
    [
      {},
      ['--credential-headers', 'X-Pin,bad name'],
      'retryd: --credential-headers must list header names of token characters (RFC 9110), at most 256 bytes each, separated by commas; got "bad name"',
    ],
  ])('refuses a bad encryption key or secrets file (%j %j) with one line, exit code 2', async (env, args, message) => {
    const { code, stderr } = await run(['serve', '--port', '0', '--store', `sqlite:${join(dir, 'bad.db')}`, ...args], env);
    expect(code).toBe(2);
    expect(stderr.trim()).toBe(message);
  });
});
