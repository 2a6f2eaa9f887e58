import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/service/logger.js';
import { DEFAULT_CONFIG } from '../src/service/retryd-config.js';
import { startRetryd, type RunningRetryd } from '../src/service/start-retryd.js';
import { runCli, startServiceProcess } from './service-harness.js';

// Timeouts through the built `retryd` CLI: `serve --connect-timeout`, `targets set --attempt-timeout|--connect-timeout`
// and `tasks get` (against a running service on loopback, without API keys).

let dir: string;
let service: RunningRetryd;
let env: Record<string, string>;
// Allowed, and never called: the service runs the API alone.
const targetKey = 'http://127.0.0.1:9';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'retryd-cli-timeouts-'));
  service = await startRetryd(
    // The API alone: the tasks here are only read back, never sent.
    { ...DEFAULT_CONFIG, port: 0, store: `sqlite:${join(dir, 'retryd.db')}`, sqliteSync: 'normal', graceMs: 0, role: 'api', allowTargets: ['127.0.0.1/32'] },
    createLogger('silent'),
  );
  env = { RETRYD_URL: service.url };
});
afterAll(async () => {
  await service.close();
  await rm(dir, { recursive: true, force: true });
});

async function enqueue(body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${service.url}/retry-tasks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ targetUrl: `${targetKey}/orders`, method: 'POST', ...body }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { taskId: string }).taskId;
}

describe('retryd tasks get', () => {
  it("prints the task's own timeouts, and where they come from when it sets none", async () => {
    const own = await runCli(['tasks', 'get', await enqueue({ attemptTimeoutMs: 120_000 })], env);
    expect(own.code).toBe(0);
    expect(own.stdout).toMatch(/^timeouts:\s+attempt 120000 ms; connect the target's, else the service's$/m);
    const none = await runCli(['tasks', 'get', await enqueue({})], env);
    expect(none.stdout).toMatch(/^timeouts:\s+attempt the target's, else the service's; connect the target's, else the service's$/m);
    const json = await runCli(['tasks', 'get', await enqueue({ attemptTimeoutMs: 9_000, connectTimeoutMs: 900 }), '--json'], env);
    expect(JSON.parse(json.stdout)).toMatchObject({ attemptTimeoutMs: 9_000, connectTimeoutMs: 900 });
  });
});

describe('retryd targets set --attempt-timeout, --connect-timeout', () => {
  it("sets a target's timeouts, clears one with none, and refuses a bad value naming the flag and the rule", async () => {
    const set = await runCli(['targets', 'set', targetKey, '--attempt-timeout', '120000', '--connect-timeout', '2000', '--json'], env);
    expect(set.stderr).toBe('');
    expect(JSON.parse(set.stdout)).toMatchObject({ targetKey, settings: { attemptTimeoutMs: 120_000, connectTimeoutMs: 2_000 } });
    const cleared = await runCli(['targets', 'set', targetKey, '--connect-timeout', 'none', '--json'], env);
    expect(JSON.parse(cleared.stdout)).toMatchObject({ settings: { attemptTimeoutMs: 120_000, connectTimeoutMs: null } });

    const bad = await runCli(['targets', 'set', targetKey, '--attempt-timeout', '0'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--attempt-timeout must be a whole number of ms from 1 to 1800000 (30 minutes), or none, got "0"');
    // Past the attempt timeout the service refuses it, and says which rule.
    const tied = await runCli(['targets', 'set', targetKey, '--attempt-timeout', '100', '--connect-timeout', '200'], env);
    expect(tied.code).not.toBe(0);
    expect(tied.stderr).toContain('connectTimeoutMs must be <= attemptTimeoutMs (100)');
  });
});

describe('retryd serve --connect-timeout', () => {
  it('refuses a connect timeout longer than the attempt timeout, in one line naming both flags', async () => {
    const refused = await runCli(['serve', '--port', '0', '--store', 'sqlite::memory:', '--attempt-timeout', '1000', '--connect-timeout', '2000']);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim()).toBe('retryd: --connect-timeout must be at most --attempt-timeout (1000), got 2000');
    const notANumber = await runCli(['serve', '--port', '0', '--store', 'sqlite::memory:', '--connect-timeout', 'soon']);
    expect(notANumber.code).toBe(2);
    expect(notANumber.stderr).toContain('--connect-timeout must be an integer from 1 to');
  });

  it('takes the flag or RETRYD_CONNECT_TIMEOUT_MS, and defaults to 5000 or the attempt timeout when shorter, as the start line says', async () => {
    for (const [args, envOf, expected] of [
      [[], {}, 5_000],
      [['--attempt-timeout', '2000'], {}, 2_000],
      [['--connect-timeout', '1500'], {}, 1_500],
      [[], { RETRYD_CONNECT_TIMEOUT_MS: '700' }, 700],
    ] as const) {
      const running = await startServiceProcess(['--store', `sqlite:${join(dir, `serve-${expected}.db`)}`, ...args], envOf);
      try {
        expect(running.logs.find((l) => l.event === 'start')).toMatchObject({ connectTimeoutMs: expected });
        // Answering: its signal handlers are in place.
        expect((await fetch(`${running.url}/healthz`)).status).toBe(200);
      } finally {
        running.child.kill('SIGTERM');
        expect(await running.exited).toBe(0);
      }
    }
  }, 60_000);
});
