import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../src/service/logger.js';
import { DEFAULT_CONFIG } from '../src/service/retryd-config.js';
import { startRetryd } from '../src/service/start-retryd.js';
import { reply, startServer } from './engine-helpers.js';
import { runCli as run, startServiceProcess } from './service-harness.js';
import { waitFor } from './wait-for.js';

// Per-target protection in the running service: on by default, `--protection off` / RETRYD_PROTECTION for targets that
// fail by design, and the log lines its events write.

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'retryd-protection-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Enqueues `count` POSTs to `targetUrl` on `policy` in one batch; their task ids. */
async function enqueue(serviceUrl: string, count: number, targetUrl: string, policy: Record<string, unknown>): Promise<string[]> {
  const created = await fetch(`${serviceUrl}/retry-tasks/batch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tasks: Array.from({ length: count }, () => ({ targetUrl, method: 'POST', policy })) }),
  });
  expect(created.status).toBe(200);
  return ((await created.json()) as { results: { task: { taskId: string } }[] }).results.map((r) => r.task.taskId);
}

describe('retryd serve --protection', () => {
  it('is explained in --help with its environment variable', async () => {
    const { stdout, code } = await run(['serve', '--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('--protection <mode>');
    expect(stdout).toContain('RETRYD_PROTECTION');
  });

  it.each([
    [['--protection', 'maybe'], {}, 'retryd: --protection must be one of on, off, got "maybe"'],
    [[], { RETRYD_PROTECTION: 'no' }, 'retryd: --protection must be one of on, off, got "no"'],
  ])('refuses %j %j with one line naming the flag and its choices, exit code 2', async (args, env, message) => {
    const { code, stderr } = await run(['serve', '--port', '0', '--store', `sqlite:${join(dir, 'bad.db')}`, ...args], env);
    expect(code).toBe(2);
    expect(stderr.trim()).toBe(message);
  });

  it('is on by default and off from the flag or RETRYD_PROTECTION, as the start line says', async () => {
    for (const [args, env, expected] of [
      [[], {}, 'on'],
      [['--protection', 'off'], {}, 'off'],
      [[], { RETRYD_PROTECTION: 'off' }, 'off'],
    ] as const) {
      const service = await startServiceProcess(['--store', `sqlite:${join(dir, `mode-${expected}-${args.length}.db`)}`, ...args], env);
      try {
        expect(service.logs.find((l) => l.event === 'start')).toMatchObject({ protection: expected });
        expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
      } finally {
        service.child.kill('SIGTERM');
        expect(await service.exited).toBe(0);
      }
    }
  }, 90_000);
});

describe('the running service', () => {
  it('opens the breaker of a failing target with the default settings, logs it, and closes it when the target recovers', async () => {
    const TASKS = 30;
    let healthy = false;
    const downstream = await startServer((_req, res) => reply(res, healthy ? 200 : 500));
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const service = await startRetryd(
      { ...DEFAULT_CONFIG, port: 0, store: `sqlite:${join(dir, 'service.db')}`, allowTargets: ['127.0.0.1/32'], sqliteSync: 'normal', graceMs: 0 },
      createLogger('info', sink),
    );
    try {
      const policy = { maxAttempts: 20, backoffType: 'FIXED', initialDelayMs: 500, multiplier: 1, maxDelayMs: 500, jitterType: 'NONE' };
      const ids = await enqueue(service.url, TASKS, `${downstream.url}/hook`, policy);
      const opened = await waitFor('the breaker_open line', () => lines.find((l) => l.event === 'breaker_open'));
      expect(opened).toMatchObject({ level: 40, tenantId: 'default', target: downstream.url, reopenCount: 0, cause: 'failures' });

      healthy = true;
      const closed = await waitFor('the breaker_closed line', () => lines.find((l) => l.event === 'breaker_closed'), 20_000);
      expect(closed).toMatchObject({ level: 30, tenantId: 'default', target: downstream.url, cause: 'probes_succeeded' });
      const tasks = async () =>
        Promise.all(ids.map(async (id) => (await (await fetch(`${service.url}/retry-tasks/${id}`)).json()) as { status: string; attemptNumber: number }));
      await waitFor('every task to succeed', async () => (await tasks()).every((t) => t.status === 'SUCCEEDED'), 20_000);
      // The outage cost about one failed call per task: each was held, then succeeded. The probes are the exception:
      // the breaker's open periods (10–20 ms, then 20% longer) may let one or two through before the target recovers.
      expect((await tasks()).filter((t) => t.attemptNumber > 2).length).toBeLessThanOrEqual(3);
      expect(downstream.requests.length).toBeLessThanOrEqual(2 * TASKS + 3);
    } finally {
      await service.close();
      await downstream.close();
    }
  }, 30_000);

  it("never sends a held task's retry sooner than its policy says: against a target that stays down, attempts keep their spacing", async () => {
    const TASKS = 20;
    const DELAY_MS = 400;
    const downstream = await startServer((_req, res) => reply(res, 503));
    const service = await startRetryd(
      { ...DEFAULT_CONFIG, port: 0, store: `sqlite:${join(dir, 'down.db')}`, allowTargets: ['127.0.0.1/32'], sqliteSync: 'normal', graceMs: 0 },
      createLogger('silent'),
    );
    try {
      const policy = { maxAttempts: 4, backoffType: 'FIXED', initialDelayMs: DELAY_MS, multiplier: 1, maxDelayMs: DELAY_MS, jitterType: 'NONE' };
      const ids = await enqueue(service.url, TASKS, `${downstream.url}/hook`, policy);
      // The breaker's open periods start at 10–20 ms: a task that probed every one of them (as its held retry once did)
      // ran out of attempts in about a tenth of a second. At its policy's pace, a task's fourth attempt is 1.2 s after its first.
      await waitFor(
        'a task out of attempts',
        async () => ((await (await fetch(`${service.url}/retry-tasks?status=EXHAUSTED&limit=1`)).json()) as { items: unknown[] }).items.length > 0,
        20_000,
      );
      let retries = 0;
      for (const id of ids) {
        const { items } = (await (await fetch(`${service.url}/retry-tasks/${id}/attempts?limit=100`)).json()) as { items: { attemptNumber: number; startedAt: number }[] };
        const started = items.sort((a, b) => a.attemptNumber - b.attemptNumber).map((a) => a.startedAt);
        for (let i = 1; i < started.length; i++, retries++) {
          // Whole ms both: a retry due at t is sent at t or later.
          expect(started[i]! - started[i - 1]!, `task ${id}, attempt ${i + 1}`).toBeGreaterThanOrEqual(DELAY_MS - 1);
        }
      }
      expect(retries).toBeGreaterThan(0);
    } finally {
      await service.close();
      await downstream.close();
    }
  }, 60_000);

  it('paces a target that is full (a bare 503 beyond 500 calls a second), and every task gets done', async () => {
    const TASKS = 1_000;
    // W7's d: a token bucket of 500 a second (a tenth of a second's worth): 200 while it has a token, a bare 503 beyond.
    let tokens = 50;
    let filledAt = Date.now();
    const downstream = await startServer((_req, res) => {
      const now = Date.now();
      tokens = Math.min(50, tokens + ((now - filledAt) * 500) / 1_000);
      filledAt = now;
      if (tokens < 1) return reply(res, 503);
      tokens -= 1;
      return reply(res, 200);
    });
    const service = await startRetryd(
      { ...DEFAULT_CONFIG, port: 0, store: `sqlite:${join(dir, 'full.db')}`, allowTargets: ['127.0.0.1/32'], sqliteSync: 'normal', graceMs: 0, concurrency: 64 },
      createLogger('silent'),
    );
    try {
      const policy = { maxAttempts: 30, backoffType: 'EXPONENTIAL', initialDelayMs: 20, multiplier: 2, maxDelayMs: 1_000, jitterType: 'FULL' };
      await enqueue(service.url, TASKS, `${downstream.url}/hook`, policy);
      const target = `${service.url}/targets/${encodeURIComponent(downstream.url)}`;
      // Tested (its sends halved for a moment), then found full and paced: a rate in the store's gate.
      await waitFor(
        'a pace for the full target',
        async () => {
          const view = (await (await fetch(target)).json()) as { allowedRatePerSecond: number | null };
          return view.allowedRatePerSecond !== null;
        },
        20_000,
      );
      const counts = async () => (await (await fetch(`${service.url}/retry-tasks?status=SUCCEEDED&limit=1000`)).json()) as { items: unknown[] };
      await waitFor('every task to succeed', async () => (await counts()).items.length === TASKS, 60_000, 50);
      // How many calls the pace saves is W7's d to measure (npm run bench:w7 -- --cases d), not a timed test's.
    } finally {
      await service.close();
      await downstream.close();
    }
  }, 90_000);
});
