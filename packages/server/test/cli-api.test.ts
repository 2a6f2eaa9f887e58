import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeys } from '../src/access/api-keys.js';
import { createLogger } from '../src/service/logger.js';
import { openStore } from '../src/service/open-store.js';
import { DEFAULT_CONFIG } from '../src/service/retryd-config.js';
import { startRetryd, type RunningRetryd } from '../src/service/start-retryd.js';
import { waitFor } from './wait-for.js';
import { serviceNow } from './service-clock.js';

const CLI = join(import.meta.dirname, '..', 'dist', 'cli', 'main.js');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let token = '';
let readToken = '';

/**
 * Runs the built CLI with only the environment given (none of the test runner's RETRYD_ variables), stdin from
 * `input` (not a terminal), and checks that no API key ever shows in what it printed.
 */
function run(args: string[], env: Record<string, string> = {}, input = ''): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      for (const key of [token, readToken]) {
        if (key !== '' && (stdout.includes(key) || stderr.includes(key))) reject(new Error(`an API key was printed by retryd ${args.join(' ')}`));
      }
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

const lines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('retryd tasks, dlq, policies and targets (against a running service)', () => {
  let dir: string;
  let service: RunningRetryd;
  let target: Server;
  let targetKey: string;
  let failing = true;
  let env: Record<string, string>;
  const failed: string[] = [];

  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${service.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return (await response.json()) as Record<string, unknown> & { items?: Record<string, unknown>[] };
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'retryd-cli-api-'));
    const storeUrl = `sqlite:${join(dir, 'retryd.db')}`;
    const { store, blobs } = await openStore(storeUrl);
    token = (await new ApiKeys(store).create({ tenantId: 'default', scope: 'admin', name: 'cli test' })).token;
    readToken = (await new ApiKeys(store).create({ tenantId: 'default', scope: 'read', name: 'cli test (read)' })).token;
    await store.close();
    await blobs.close?.();

    // 400 (not retried: a dead letter at once) until the test lets it succeed.
    target = createServer((request, response) => {
      request.resume();
      response.writeHead(failing ? 400 : 200).end(failing ? 'no such order' : 'ok');
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    targetKey = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;

    service = await startRetryd(
      { ...DEFAULT_CONFIG, port: 0, store: storeUrl, sqliteSync: 'normal', graceMs: 0, allowTargets: ['127.0.0.1/32'] },
      createLogger('silent'),
    );
    env = { RETRYD_URL: service.url, RETRYD_API_KEY: token };

    for (let i = 0; i < 3; i += 1) {
      const task = await api('POST', '/retry-tasks', { targetUrl: `${targetKey}/orders/${i}`, method: 'POST', body: { order: i } });
      failed.push(task.taskId as string);
    }
    await waitFor('three dead letters', async () => (await api('GET', '/dead-letters')).items?.length === 3);
  });

  afterAll(async () => {
    await service.close();
    await new Promise((resolve) => target.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it('lists tasks as a table and as one JSON object per line, filtered by status', async () => {
    const table = await run(['tasks', 'list'], env);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^task id\s+status/);
    for (const id of failed) expect(table.stdout).toContain(id);

    const json = await run(['tasks', 'list', '--status', 'FAILED', '--json'], env);
    expect(json.code).toBe(0);
    expect(lines(json.stdout).map((t) => t.taskId).sort()).toEqual([...failed].sort());
    expect((await run(['tasks', 'list', '--status', 'SUCCEEDED', '--json'], env)).stdout).toBe('');
  });

  it('pages with --limit, tells the next cursor on stderr, and reads every page with --all', async () => {
    const first = await run(['tasks', 'list', '--limit', '2', '--json'], env);
    expect(lines(first.stdout)).toHaveLength(2);
    const cursor = /--cursor (\S+)/.exec(first.stderr)?.[1];
    expect(cursor).toBeDefined();
    const second = await run(['tasks', 'list', '--limit', '2', '--cursor', cursor as string, '--json'], env);
    expect(lines(second.stdout)).toHaveLength(1);
    expect(second.stderr).toBe('');
    const all = await run(['tasks', 'list', '--limit', '1', '--all', '--json'], env);
    expect(lines(all.stdout)).toHaveLength(3);
  });

  it('shows a task with its attempt timeline, and as one JSON document', async () => {
    const text = await run(['tasks', 'get', failed[0] as string], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('status:');
    expect(text.stdout).toContain('FAILED');
    // Relative to now by default; ISO 8601 with --absolute.
    expect(text.stdout).toMatch(/^1\s+(?:now|\d+ s ago)\s+400\s+failed\s+\d+ms\s+-$/m);
    const absolute = await run(['tasks', 'get', failed[0] as string, '--absolute'], env);
    expect(absolute.stdout).toMatch(/^1\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\s+400\s+failed\s+\d+ms\s+-$/m);
    const listed = await run(['tasks', 'list', '--status', 'FAILED'], env);
    expect(listed.stdout).toMatch(new RegExp(`^${failed[0]}\\s+FAILED\\s+.*\\s+-\\s+(?:now|\\d+ s ago)\\s+`, 'm'));
    const json = await run(['tasks', 'get', failed[0] as string, '--json'], env);
    const task = JSON.parse(json.stdout) as { taskId: string; attempts: { outcome: string; responseStatus: number }[] };
    expect(task.taskId).toBe(failed[0]);
    expect(task.attempts).toEqual([expect.objectContaining({ outcome: 'failed', responseStatus: 400 })]);
  });

  it('takes --url and --api-key as flags too', async () => {
    const result = await run(['tasks', 'get', failed[0] as string, '--json', '--url', service.url, '--api-key', token]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ taskId: failed[0] });
  });

  it('answers exit codes a script can rely on, with the problem in a line and no stack', async () => {
    const notFound = await run(['tasks', 'get', 'no-such-task'], env);
    expect(notFound.code).toBe(3);
    expect(notFound.stderr).toContain('no-such-task');

    const noKey = await run(['tasks', 'list'], { RETRYD_URL: service.url });
    expect(noKey.code).toBe(5);
    expect(noKey.stderr).toContain('401 UNAUTHENTICATED');

    const badKey = await run(['tasks', 'list', '--api-key', 'rtd_0000000000000000_nope'], { RETRYD_URL: service.url });
    expect(badKey.code).toBe(5);

    const narrow = await run(['targets', 'breaker', targetKey, 'open'], { RETRYD_URL: service.url, RETRYD_API_KEY: readToken });
    expect(narrow.code).toBe(5);
    expect(narrow.stderr).toContain('403 FORBIDDEN');

    const badTarget = await run(['targets', 'get', 'https://API.example.com:443/x'], env);
    expect(badTarget.code).toBe(2);
    expect(badTarget.stderr).toContain('targetKey');
    expect(badTarget.stderr).toContain('https://api.example.com');

    const badFlag = await run(['tasks', 'list', '--limit', '0'], env);
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toContain('--limit must be an integer from 1 to 1000, got "0"');

    // A port nothing listens on any more: the connection is refused (every read is tried three times first).
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const unreachable = await run(['tasks', 'list'], { RETRYD_URL: closedUrl, RETRYD_API_KEY: token });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain(`cannot reach ${closedUrl}: connect ECONNREFUSED`);

    // A proxy in front that answers with its own page rather than a problem.
    const proxy = createServer((_request, response) => response.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad Gateway</h1>'));
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const badGateway = await run(['policies', 'list'], { RETRYD_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, RETRYD_API_KEY: token });
    await new Promise((resolve) => proxy.close(resolve));
    expect(badGateway.code).toBe(1);
    expect(badGateway.stderr).toContain('the service answered HTTP 502');

    for (const result of [notFound, noKey, badKey, narrow, badTarget, badFlag, unreachable, badGateway]) expect(result.stderr).not.toContain('    at ');
  });

  it('creates and replaces a policy from a file or stdin, and refuses an invalid one naming the field', async () => {
    const file = join(dir, 'policy.json');
    await writeFile(file, JSON.stringify({ maxAttempts: 4, backoffType: 'FIXED', initialDelayMs: 100, multiplier: 1, maxDelayMs: 100, jitterType: 'NONE' }));
    const created = await run(['policies', 'put', 'quick', '--file', file], env);
    expect(created.code).toBe(0);
    expect(created.stdout).toContain('created policy quick');

    const shown = await run(['policies', 'get', 'quick', '--json'], env);
    const policy = JSON.parse(shown.stdout) as Record<string, unknown>;
    expect(policy).toMatchObject({ policyId: 'quick', maxAttempts: 4, backoffType: 'FIXED' });

    // What get --json prints goes back in, edited, through stdin.
    const replaced = await run(['policies', 'put', 'quick', '--file', '-', '--json'], env, JSON.stringify({ ...policy, maxAttempts: 6 }));
    expect(replaced.code).toBe(0);
    expect(JSON.parse(replaced.stdout)).toMatchObject({ policyId: 'quick', maxAttempts: 6 });
    expect(lines((await run(['policies', 'list', '--json'], env)).stdout).map((p) => p.policyId)).toContain('quick');

    await writeFile(file, JSON.stringify({ maxAttempts: 0, backoffType: 'FIXED', initialDelayMs: 100, multiplier: 1, maxDelayMs: 100, jitterType: 'NONE' }));
    const invalid = await run(['policies', 'put', 'quick', '--file', file], env);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('maxAttempts');
    expect(invalid.stderr).toContain('400 VALIDATION_FAILED');

    await writeFile(file, '{ not json');
    const notJson = await run(['policies', 'put', 'quick', '--file', file], env);
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toContain('is not JSON');
  });

  it("sets a target's limits and protection, reads them back, and works its breaker", async () => {
    const set = await run(['targets', 'set', targetKey, '--rate', '50', '--max-in-flight', '4', '--protection', 'off', '--json'], env);
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ targetKey, settings: { rateLimit: { ratePerSecond: 50 }, maxInFlight: 4, breaker: { enabled: false } } });

    const file = join(dir, 'settings.json');
    await writeFile(file, JSON.stringify({ breaker: { enabled: true }, maxInFlight: 8 }));
    const fromFile = await run(['targets', 'set', targetKey, '--file', file, '--rate', 'none'], env);
    expect(fromFile.stderr).toBe('');
    expect(fromFile.code).toBe(0);
    const got = JSON.parse((await run(['targets', 'get', targetKey, '--json'], env)).stdout) as { settings: Record<string, unknown> };
    expect(got.settings).toMatchObject({ rateLimit: { ratePerSecond: null, burst: null }, maxInFlight: 8, breaker: { enabled: true }, adaptive: { enabled: false } });

    const listed = await run(['targets', 'list'], env);
    expect(listed.stdout).toContain(targetKey);

    const opened = await run(['targets', 'breaker', targetKey, 'open', '--json'], env);
    expect(opened.code).toBe(0);
    expect(JSON.parse(opened.stdout)).toMatchObject({ breaker: { state: 'OPEN' } });
    const hour = await run(['targets', 'breaker', targetKey, 'open', '--duration-ms', '3600000', '--json'], env);
    const openUntil = JSON.parse(hour.stdout).breaker.openUntil as number;
    expect(openUntil).toBeGreaterThan(Date.now() + 3_500_000);
    // A task of the held target is due and not running: `tasks get` says why (then it is cancelled, out of the way).
    const held = (await api('POST', '/retry-tasks', { targetUrl: `${targetKey}/orders/held`, method: 'POST' })).taskId as string;
    const shown = await run(['tasks', 'get', held], env);
    expect(shown.stdout).toContain(`\nwaiting:         breaker_open: target's circuit breaker open until ${new Date(openUntil).toISOString()}, then probes\n`);
    await api('DELETE', `/retry-tasks/${held}`);
    const tooLong = await run(['targets', 'breaker', targetKey, 'open', '--duration-ms', '0'], env);
    expect(tooLong.code).toBe(2);
    expect(tooLong.stderr).toContain('--duration-ms must be an integer from 1 to 604800000');
    // A release keeps an open breaker's hold (the breaker's close or reset ends it).
    const released = await run(['targets', 'release', targetKey, '--json'], env);
    expect(released.code).toBe(0);
    expect(JSON.parse(released.stdout)).toMatchObject({ targetKey, heldUntil: openUntil, breaker: { state: 'OPEN' } });
    const reset = await run(['targets', 'breaker', targetKey, 'reset'], env);
    expect(reset.stdout).toContain('CLOSED');
    expect((await run(['targets', 'release', targetKey], env)).stdout).toBe(`holds of ${targetKey} released; held until: -\n`);
    expect((await run(['targets', 'breaker', targetKey, 'shut'], env)).code).toBe(2);
    expect((await run(['targets', 'set', targetKey, '--max-in-flight', '0'], env)).code).toBe(2);
    expect((await run(['targets', 'set', targetKey], env)).code).toBe(2);
    expect((await run(['targets', 'get', 'http://127.0.0.1:9'], env)).code).toBe(3);
  });

  it('cancels a pending task, and answers 4 for a task that can no longer be cancelled', async () => {
    const task = await api('POST', '/retry-tasks', { targetUrl: `${targetKey}/later`, method: 'POST', delayMs: 3_600_000 });
    const cancelled = await run(['tasks', 'cancel', task.taskId as string], env);
    expect(cancelled.code).toBe(0);
    expect(cancelled.stdout).toContain(`cancelled ${task.taskId as string}`);
    const again = await run(['tasks', 'cancel', task.taskId as string], env);
    expect(again.code).toBe(4);
    expect(again.stderr).toContain('409');
  });

  // Fifteen CLI runs, each a Node process of its own: 20–30 s on a busy two-core machine, past the default 30 s limit.
  it('lists dead letters, replays one, then --all, and sums up what it did', { timeout: 90_000 }, async () => {
    const listed = await run(['dlq', 'list', '--json', '--reason', 'permanent_status'], env);
    expect(listed.code).toBe(0);
    expect(lines(listed.stdout).map((t) => t.taskId).sort()).toEqual([...failed].sort());
    expect(lines((await run(['dlq', 'list', '--json', '--reason', 'permanent_status:400'], env)).stdout)).toHaveLength(3);
    expect((await run(['dlq', 'list', '--json', '--reason', 'budget'], env)).stdout).toBe('');
    expect((await run(['dlq', 'list', '--reason', 'budget'], env)).stdout).toBe('no dead letters\n');
    // --status, --policy and --target are filtered by the service; any URL of the target names it.
    expect(lines((await run(['dlq', 'list', '--json', '--target', `${targetKey}/orders/2`], env)).stdout).map((t) => t.taskId).sort()).toEqual([...failed].sort());
    expect((await run(['dlq', 'list', '--json', '--status', 'EXHAUSTED'], env)).stdout).toBe('');
    expect((await run(['dlq', 'list', '--json', '--target', 'http://127.0.0.1:9'], env)).stdout).toBe('');
    expect((await run(['dlq', 'list', '--status', 'PENDING'], env)).code).toBe(2);
    const key = (await api('GET', `/retry-tasks/${failed[0] as string}`)).idempotencyKey as string;
    expect(lines((await run(['tasks', 'list', '--json', '--idempotency-key', key], env)).stdout).map((t) => t.taskId)).toEqual([failed[0]]);
    expect(lines((await run(['tasks', 'list', '--json', '--target', targetKey, '--status', 'FAILED'], env)).stdout)).toHaveLength(3);

    // Not a terminal and no --yes: --all refuses rather than replaying without asking.
    const unconfirmed = await run(['dlq', 'replay', '--all'], env);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain('--yes');

    failing = false;
    const one = await run(['tasks', 'replay', failed[0] as string], env);
    expect(one.code).toBe(0);
    expect(one.stdout).toContain(`replayed ${failed[0] as string}`);

    const all = await run(['dlq', 'replay', '--all', '--yes', '--target', `${targetKey}/orders/1`, '--json'], env);
    expect(all.code).toBe(0);
    const summary = JSON.parse(all.stdout) as { replayed: string[]; alreadyRunning: string[]; failed: unknown[] };
    expect(summary.replayed.sort()).toEqual([failed[1], failed[2]].sort());
    expect(summary.failed).toEqual([]);

    await waitFor('the replayed tasks to succeed', async () => (await api('GET', '/retry-tasks?status=SUCCEEDED')).items?.length === 3);
    const succeeded = await run(['dlq', 'replay', failed[0] as string, 'no-such-task', '--yes'], env);
    expect(succeeded.stdout).toContain('replayed 0, already running 0, failed 2');
    expect(succeeded.stdout).toContain('no-such-task');
    expect(succeeded.code).toBe(1);
    const oneSucceeded = await run(['dlq', 'replay', failed[0] as string], env);
    expect(oneSucceeded.code).toBe(4);
    expect(oneSucceeded.stdout).toContain('409 TASK_NOT_REPLAYABLE');
  });

  // Five CLI runs, each a Node process of its own: past the default limit on a busy two-core machine.
  it('runs a pending task now or reschedules it, and answers 2 for a time that is not one and 4 for a finished task', { timeout: 60_000 }, async () => {
    const task = await api('POST', '/retry-tasks', { targetUrl: `${targetKey}/run-now`, method: 'POST', delayMs: 3_600_000 });
    const taskId = task.taskId as string;
    const at = new Date(Math.floor(Date.now() / 1_000) * 1_000 + 1_800_000).toISOString();
    const rescheduled = await run(['tasks', 'reschedule', taskId, '--at', at], env);
    expect(rescheduled.code).toBe(0);
    expect(rescheduled.stdout.trim()).toBe(`task ${taskId} is due at ${at}`);
    expect((await api('GET', `/retry-tasks/${taskId}`)).nextAttemptAt).toBe(Date.parse(at));

    const notATime = await run(['tasks', 'reschedule', taskId, '--at', 'tomorrow'], env);
    expect(notATime.code).toBe(2);
    expect(notATime.stderr).toContain('nextAttemptAt must be epoch milliseconds (an integer >= 0) or an ISO 8601 date-time with a time zone');
    const noTime = await run(['tasks', 'reschedule', taskId], env);
    expect(noTime.code).toBe(2);
    expect(noTime.stderr).toContain('--at');

    const sent = serviceNow();
    const ran = await run(['tasks', 'run', taskId, '--json'], env);
    expect(ran.code).toBe(0);
    const due = JSON.parse(ran.stdout) as { taskId: string; nextAttemptAt: number };
    expect(due.taskId).toBe(taskId);
    expect(due.nextAttemptAt).toBeGreaterThanOrEqual(sent);
    // Due now, the service's engine tries it at once (not in an hour): the target answers 400 (FAILED), or 200 once
    // the dead-letter test before has turned it healthy (SUCCEEDED); either way the task has ended.
    const ended = ['FAILED', 'SUCCEEDED'];
    await waitFor('the task run now to end', async () => ended.includes((await api('GET', `/retry-tasks/${taskId}`)).status as string));
    const finished = await run(['tasks', 'run', taskId], env);
    expect(finished.code).toBe(4);
    expect(finished.stderr).toContain('409 TASK_NOT_PENDING');
  });

  it('cancels every live task matching a filter after asking, page after page, and sums up', { timeout: 60_000 }, async () => {
    const policy = { policyId: 'bulk-cancel', maxAttempts: 2, backoffType: 'FIXED', initialDelayMs: 1_000, multiplier: 1, maxDelayMs: 1_000, jitterType: 'NONE' };
    await api('POST', '/retry-policies', policy);
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      ids.push((await api('POST', '/retry-tasks', { targetUrl: `${targetKey}/bulk/${i}`, method: 'POST', delayMs: 3_600_000, policyId: 'bulk-cancel' })).taskId as string);
    }
    const mixed = await run(['tasks', 'cancel', ids[0] as string, '--policy', 'bulk-cancel'], env);
    expect(mixed.code).toBe(2);
    expect((await run(['tasks', 'cancel'], env)).code).toBe(2);
    // Not a terminal and no --yes: nothing is cancelled without asking.
    const unconfirmed = await run(['tasks', 'cancel', '--policy', 'bulk-cancel'], env);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain('--yes');
    expect((await api('GET', '/retry-tasks/' + (ids[0] as string))).status).toBe('PENDING');

    const all = await run(['tasks', 'cancel', '--policy', 'bulk-cancel', '--status', 'PENDING', '--page-size', '2', '--yes', '--json'], env);
    expect(all.code).toBe(0);
    expect(JSON.parse(all.stdout)).toEqual({ cancelled: 5, cancelRequested: 0, failed: [] });
    const cancelled = (await api('GET', '/retry-tasks?policyId=bulk-cancel&status=CANCELLED')).items ?? [];
    expect(cancelled.map((t) => t.taskId).sort()).toEqual([...ids].sort());
    const none = await run(['tasks', 'cancel', '--all', '--policy', 'bulk-cancel', '--yes'], env);
    expect(none.stdout).toBe('cancelled 0, cancel requested 0, failed 0\n');
  });

  it('purges finished tasks by hand after asking, with a total, and never a live one', { timeout: 60_000 }, async () => {
    const live = (await api('POST', '/retry-tasks', { targetUrl: `${targetKey}/purge/live`, method: 'POST', delayMs: 3_600_000 })).taskId as string;
    const cancelled = ((await api('GET', '/retry-tasks?status=CANCELLED&limit=1000')).items ?? []).map((t) => t.taskId as string);
    expect(cancelled.length).toBeGreaterThan(0);
    const before = new Date(Date.now() + 60_000).toISOString();

    const unconfirmed = await run(['tasks', 'purge', '--status', 'CANCELLED', '--finished-before', before], env);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain('--yes');
    expect((await run(['tasks', 'purge', '--status', 'PENDING', '--finished-before', before, '--yes'], env)).code).toBe(2);
    const badTime = await run(['tasks', 'purge', '--finished-before', 'last week', '--yes'], env);
    expect(badTime.code).toBe(2);
    expect(badTime.stderr).toContain('finishedBefore must be');
    // A read key may not delete: 5, and nothing deleted.
    expect((await run(['tasks', 'purge', '--status', 'CANCELLED', '--finished-before', before, '--yes'], { ...env, RETRYD_API_KEY: readToken })).code).toBe(5);

    const purged = await run(['tasks', 'purge', '--status', 'CANCELLED', '--finished-before', before, '--page-size', '2', '--yes'], env);
    expect(purged.code).toBe(0);
    expect(purged.stdout).toBe(`deleted ${cancelled.length} task${cancelled.length === 1 ? '' : 's'}\n`);
    expect((await api('GET', '/retry-tasks?status=CANCELLED')).items).toEqual([]);
    expect((await api('GET', `/retry-tasks/${live}`)).status).toBe('PENDING');
    const again = await run(['tasks', 'purge', '--status', 'CANCELLED', '--finished-before', before, '--yes', '--json'], env);
    expect(JSON.parse(again.stdout)).toEqual({ deleted: 0 });
    await api('DELETE', `/retry-tasks/${live}`);
  });

  // Eight CLI runs, each a Node process of its own.
  it('documents --url and --api-key with their environment variables in every API command', { timeout: 60_000 }, async () => {
    for (const command of [['tasks', 'list'], ['tasks', 'get'], ['tasks', 'run'], ['tasks', 'reschedule'], ['dlq', 'replay'], ['policies', 'put'], ['targets', 'set'], ['targets', 'breaker']]) {
      const help = await run([...command, '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain('RETRYD_URL');
      expect(help.stdout).toContain('RETRYD_API_KEY');
      expect(help.stdout).toContain('--json');
    }
  });
});
