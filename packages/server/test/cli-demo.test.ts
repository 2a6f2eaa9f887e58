import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanupAfterEach, runCli, startServiceProcess, stopService } from './service-harness.js';
import { waitFor } from './wait-for.js';

const CLI = join(import.meta.dirname, '..', 'dist', 'cli', 'main.js');

/** The rows of the attempt table the demo prints: attempt number, answer and what came next. */
function timelineOf(stdout: string): { attempt: number; answer: string; then: string }[] {
  return stdout
    .split('\n')
    .map((line) => /^\s+(\d+)\s+\d\d:\d\d:\d\d\.\d{3}\s+\S+ m?s\s+\S+ m?s\s+(\S+)\s+(.+)$/.exec(line))
    .filter((m) => m !== null)
    .map((m) => ({ attempt: Number(m[1]), answer: m[2] as string, then: m[3] as string }));
}

// `retryd demo`, the quick start's command, run as a newcomer runs it: the built CLI, nothing beyond loopback.
describe('retryd demo', () => {
  const cleanup = cleanupAfterEach();

  it('shows attempt 1 and 2 answered 503 and attempt 3 200, the console URL of the task, and deletes its store', async () => {
    const run = await runCli(['demo', '--exit']);
    expect(run.code, run.stderr).toBe(0);
    const timeline = timelineOf(run.stdout);
    expect(timeline.map(({ attempt, answer }) => [attempt, answer])).toEqual([[1, '503'], [2, '503'], [3, '200']]);
    expect(timeline[0]!.then).toMatch(/^retry in \d+ ms$/);
    expect(timeline[2]!.then).toBe('succeeded');
    expect(run.stdout).toMatch(/task SUCCEEDED after 3 attempts in [\d.]+ s; the target saw Idempotency-Key demo-\S+ on every one\./);
    const taskId = /enqueued\s+task (\S+),/.exec(run.stdout)?.[1];
    expect(run.stdout).toMatch(new RegExp(`console\\s+http://127\\.0\\.0\\.1:\\d+/#/tasks/${taskId}\\n`));
    const dir = /a throwaway SQLite store in (\S+)\)/.exec(run.stdout)?.[1];
    expect(dir).toBeDefined();
    expect(existsSync(dir!)).toBe(false);
  }, 30_000);

  it('keeps serving the console until Ctrl-C, then stops with exit code 0', async () => {
    const child = spawn(process.execPath, [CLI, 'demo'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    cleanup.push(async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    await waitFor('the demo to serve on', () => stdout.includes('Ctrl-C stops it'));
    const consoleUrl = /console\s+(\S+)/.exec(stdout)![1]!;
    const task = await fetch(new URL(`/retry-tasks/${consoleUrl.split('/#/tasks/')[1]}`, consoleUrl));
    expect(task.status).toBe(200);
    expect(((await task.json()) as { status: string }).status).toBe('SUCCEEDED');
    expect((await fetch(consoleUrl)).status).toBe(200);
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  }, 30_000);

  it('uses a running service with --url', async () => {
    const service = await startServiceProcess(['--store', 'sqlite::memory:', '--allow-targets', '127.0.0.1/32']);
    cleanup.push(() => stopService(service));
    const run = await runCli(['demo', '--url', service.url]);
    expect(run.code, run.stderr).toBe(0);
    expect(timelineOf(run.stdout).map((row) => row.answer)).toEqual(['503', '503', '200']);
    expect(run.stdout).toContain(`console     ${service.url}/#/tasks/`);
    expect(run.stdout).not.toContain('throwaway');
  }, 30_000);

  it('tells, with --url, a service that blocks targets on this machine', async () => {
    const service = await startServiceProcess(['--store', 'sqlite::memory:']);
    cleanup.push(() => stopService(service));
    const run = await runCli(['demo', '--url', service.url]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^retryd: .*127\.0\.0\.1/m);
  }, 30_000);
});
