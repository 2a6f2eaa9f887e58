import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { classifyError } from '@retryd/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_TENANT, type RetryTask } from '../src/domain/task.js';
import type { Engine } from '../src/engine/engine.js';
import { HttpDispatcher } from '../src/engine/http-dispatcher.js';
import { isTargetBlocked } from '../src/security/guarded-connector.js';
import { TargetGuard, parseAllowList, type HostLookup } from '../src/security/target-guard.js';
import { createLogger } from '../src/service/logger.js';
import { openStore } from '../src/service/open-store.js';
import { DEFAULT_CONFIG, type RetrydConfig } from '../src/service/retryd-config.js';
import { startRetryd } from '../src/service/start-retryd.js';
import type { Store } from '../src/store/store.js';
import { TaskService } from '../src/tasks/task-service.js';
import { taskFor, testEngine } from './engine-helpers.js';
import { waitFor } from './wait-for.js';

// The check at dispatch: every connection the dispatcher opens is judged by the same guard as task creation, and goes
// to the address it judged. Downstreams are real servers on 127.0.0.1 that count connections as well as requests.

interface CountingServer {
  url: string;
  port: number;
  connections: number;
  requests: { url: string; host: string | undefined }[];
  close(): Promise<void>;
}

async function startCountingServer(status = 200, headers: Record<string, string> = {}): Promise<CountingServer> {
  const server: Server = createServer((req, res) => {
    counting.requests.push({ url: req.url ?? '', host: req.headers.host });
    req.resume();
    req.on('end', () => res.writeHead(status, headers).end('ok'));
  });
  server.on('connection', () => counting.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const counting: CountingServer = {
    url: `http://127.0.0.1:${port}`,
    port,
    connections: 0,
    requests: [],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return counting;
}

/** A resolver answering from a table the test changes as it goes (what a rebinding DNS server does). */
function tableLookup(table: Record<string, string[]>): HostLookup {
  return async (host) => {
    const found = table[host];
    if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found;
  };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function server(status?: number, headers?: Record<string, string>): Promise<CountingServer> {
  const started = await startCountingServer(status, headers);
  cleanups.push(() => started.close());
  return started;
}

function dispatcher(guard: TargetGuard): HttpDispatcher {
  const made = new HttpDispatcher({ targetGuard: guard, attemptTimeoutMs: 5_000 });
  cleanups.push(() => made.destroy());
  return made;
}

describe('HttpDispatcher: the check on every connection', () => {
  it('refuses 127.0.0.1 without an allowance, without connecting, naming the address and the rule', async () => {
    const downstream = await server();
    const result = await dispatcher(new TargetGuard()).dispatch(taskFor(`${downstream.url}/hook`), 1);
    expect(result).toMatchObject({ kind: 'error', message: '127.0.0.1 is loopback: blocked unless --allow-targets covers it (TARGET_BLOCKED)' });
    expect(result.kind === 'error' && isTargetBlocked(result.error)).toBe(true);
    expect(downstream.connections).toBe(0);
    expect(downstream.requests).toEqual([]);
  });

  it('refuses an IPv6 form that carries a blocked IPv4 address, without DNS', async () => {
    const lookup = vi.fn(tableLookup({}));
    const result = await dispatcher(new TargetGuard({ lookup })).dispatch(taskFor('http://[64:ff9b::a9fe:a9fe]/latest/meta-data/'), 1);
    expect(result).toMatchObject({
      kind: 'error',
      message: '64:ff9b::a9fe:a9fe is the NAT64 form of 169.254.169.254, link-local (the cloud metadata service): blocked unless --allow-targets covers it (TARGET_BLOCKED)',
    });
    expect(lookup).not.toHaveBeenCalled();
  });

  it('refuses a name that resolves to a blocked address, without connecting', async () => {
    const downstream = await server();
    const guard = new TargetGuard({ lookup: tableLookup({ 'inside.example': ['127.0.0.1'] }) });
    const result = await dispatcher(guard).dispatch(taskFor(`http://inside.example:${downstream.port}/hook`), 1);
    expect(result).toMatchObject({
      kind: 'error',
      message: '127.0.0.1 (inside.example resolves to it) is loopback: blocked unless --allow-targets covers it (TARGET_BLOCKED)',
    });
    expect(downstream.connections).toBe(0);
  });

  it('connects a name to the address the guard checked, never asking the system resolver', async () => {
    // `.example` never resolves in real DNS: the request can only arrive if the socket used the guard's answer.
    const downstream = await server();
    const guard = new TargetGuard({ allow: parseAllowList('127.0.0.1/32'), lookup: tableLookup({ 'pinned.example': ['127.0.0.1'] }) });
    const result = await dispatcher(guard).dispatch(taskFor(`http://pinned.example:${downstream.port}/hook?x=1`), 1);
    expect(result).toMatchObject({ kind: 'response', status: 200 });
    expect(downstream.requests).toEqual([{ url: '/hook?x=1', host: `pinned.example:${downstream.port}` }]);
  });

  it('checks once per connection, not per request: keep-alive requests reuse the checked connection', async () => {
    const downstream = await server();
    const lookup = vi.fn(tableLookup({ 'pinned.example': ['127.0.0.1'] }));
    const made = dispatcher(new TargetGuard({ allow: parseAllowList('127.0.0.1/32'), lookup }));
    for (let i = 0; i < 20; i++) {
      expect(await made.dispatch(taskFor(`http://pinned.example:${downstream.port}/${i}`), 1)).toMatchObject({ status: 200 });
    }
    expect(downstream.requests).toHaveLength(20);
    // Usually one connection; the pool may open a second before the first is handed back. One lookup each, either way.
    expect(downstream.connections).toBeLessThanOrEqual(2);
    expect(lookup).toHaveBeenCalledTimes(downstream.connections);
  });

  it('keeps resolver failures as they were: a name that does not exist is permanent, a resolver failing for now retryable', async () => {
    const flaky: HostLookup = async (host) => {
      throw Object.assign(new Error(`getaddrinfo EAI_AGAIN ${host}`), { code: 'EAI_AGAIN' });
    };
    const missing = await dispatcher(new TargetGuard({ lookup: tableLookup({}) })).dispatch(taskFor('http://nowhere.example/'), 1);
    expect(missing).toMatchObject({ kind: 'error', message: 'the host nowhere.example does not resolve (ENOTFOUND)' });
    expect(missing.kind === 'error' && [isTargetBlocked(missing.error), classifyError(missing.error)]).toEqual([false, 'permanent']);
    const later = await dispatcher(new TargetGuard({ lookup: flaky })).dispatch(taskFor('http://flaky.example/'), 1);
    expect(later).toMatchObject({ kind: 'error', message: 'the host flaky.example could not be resolved: EAI_AGAIN' });
    expect(later.kind === 'error' && classifyError(later.error)).toBe('retryable');
  });

  it('refuses a scheme other than http: and https: (a task stored before the check at creation)', async () => {
    const result = await dispatcher(new TargetGuard()).dispatch(taskFor('ftp://files.example/x'), 1);
    expect(result).toMatchObject({ kind: 'error', message: 'the scheme ftp: is not http: or https: (TARGET_BLOCKED)' });
  });
});

/** A task service and an engine on one in-memory SQLite store, each with its own guard (or the same one). */
async function service(creation: TargetGuard, dispatch: TargetGuard): Promise<{ tasks: TaskService; store: Store; engine: Engine }> {
  const opened = await openStore('sqlite::memory:');
  const { engine } = testEngine(opened.store, { targetGuard: dispatch, maxIdleMs: 50 });
  const tasks = new TaskService({ store: opened.store, blobs: opened.blobs, targetGuard: creation, wake: () => engine.wake() });
  await tasks.ensureDefaultPolicy();
  await engine.start();
  cleanups.push(async () => {
    await engine.stop({ graceMs: 0 });
    await tasks.close();
    await opened.store.close();
  });
  return { tasks, store: opened.store, engine };
}

const POLICY = { maxAttempts: 5, backoffType: 'FIXED', initialDelayMs: 5, multiplier: 1, maxDelayMs: 5, jitterType: 'NONE' };

async function settled(tasks: TaskService, taskId: string, status: RetryTask['status']): Promise<RetryTask> {
  return waitFor(
    `task ${taskId} to become ${status}`,
    async () => {
      const task = await tasks.getTask(DEFAULT_TENANT, taskId);
      return task.status === status ? task : undefined;
    },
  );
}

describe('the engine: targets checked again at dispatch', () => {
  it('does not follow DNS rebinding: a name public at creation and 127.0.0.1 at dispatch is never called, and ends TARGET_BLOCKED', async () => {
    const downstream = await server();
    const answers = [['93.184.215.14'], ['127.0.0.1']];
    const lookup = vi.fn<HostLookup>(async () => answers.shift() ?? ['127.0.0.1']);
    // One guard for both checks, as the service runs them.
    const guard = new TargetGuard({ lookup });
    const { tasks } = await service(guard, guard);
    const created = await tasks.enqueue(DEFAULT_TENANT, { targetUrl: `http://rebind.example:${downstream.port}/hook`, method: 'POST', policy: POLICY });
    const failed = await settled(tasks, created.task.taskId, 'FAILED');
    expect(failed).toMatchObject({
      deadLetterReason: 'target_blocked',
      attemptNumber: 1,
      lastResponseStatus: null,
      lastError: '127.0.0.1 (rebind.example resolves to it) is loopback: blocked unless --allow-targets covers it (TARGET_BLOCKED)',
    });
    expect(lookup).toHaveBeenCalledTimes(2);
    expect(downstream.connections).toBe(0);
    expect(downstream.requests).toEqual([]);
    const attempts = await tasks.listAttempts(DEFAULT_TENANT, created.task.taskId, { limit: 10 });
    expect(attempts.items).toMatchObject([{ attemptNumber: 1, outcome: 'failed', responseStatus: null }]);
  });

  it('ends TARGET_BLOCKED a task created under an allowance that the dispatching engine no longer has', async () => {
    const downstream = await server();
    const { tasks } = await service(new TargetGuard({ allow: parseAllowList('127.0.0.1/32') }), new TargetGuard());
    const created = await tasks.enqueue(DEFAULT_TENANT, { targetUrl: `${downstream.url}/hook`, method: 'POST', policy: POLICY });
    expect(await settled(tasks, created.task.taskId, 'FAILED')).toMatchObject({
      deadLetterReason: 'target_blocked',
      lastError: '127.0.0.1 is loopback: blocked unless --allow-targets covers it (TARGET_BLOCKED)',
    });
    expect(downstream.connections).toBe(0);
  });

  it('checks a replay again: the host now resolves to the metadata address and is not called', async () => {
    // The downstream closes each connection, so the replay needs a new one (and a new check).
    const downstream = await server(400, { connection: 'close' });
    const table: Record<string, string[]> = { 'svc.example': ['127.0.0.1'] };
    const guard = new TargetGuard({ allow: parseAllowList('127.0.0.1/32'), lookup: tableLookup(table) });
    const { tasks } = await service(guard, guard);
    const created = await tasks.enqueue(DEFAULT_TENANT, { targetUrl: `http://svc.example:${downstream.port}/hook`, method: 'POST', policy: POLICY });
    expect(await settled(tasks, created.task.taskId, 'FAILED')).toMatchObject({ deadLetterReason: 'permanent_status:400' });
    expect(downstream.requests).toHaveLength(1);

    table['svc.example'] = ['169.254.169.254'];
    await tasks.replay(DEFAULT_TENANT, created.task.taskId);
    const replayed = await waitFor(
      'the replay to fail',
      async () => {
        const task = await tasks.getTask(DEFAULT_TENANT, created.task.taskId);
        return task.status === 'FAILED' && task.attemptNumber === 2 ? task : undefined;
      },
    );
    expect(replayed).toMatchObject({
      deadLetterReason: 'target_blocked',
      lastError:
        '169.254.169.254 (svc.example resolves to it) is link-local (the cloud metadata service): blocked unless --allow-targets covers it (TARGET_BLOCKED)',
    });
    expect(downstream.requests).toHaveLength(1);
    expect(downstream.connections).toBe(1);
  });
});

describe('the service: the allowance in force at dispatch', () => {
  it('ends TARGET_BLOCKED, with one log line saying why, a task created under --allow-targets and dispatched after a restart without it', async () => {
    const downstream = await server();
    const dir = await mkdtemp(join(tmpdir(), 'retryd-ssrf-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const lines: Record<string, unknown>[] = [];
    const raw: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        raw.push(chunk.toString());
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const config: RetrydConfig = { ...DEFAULT_CONFIG, port: 0, store: `sqlite:${join(dir, 'retryd.db')}`, sqliteSync: 'normal', graceMs: 0 };

    // Created by an API-only instance that allows 127.0.0.1, so nothing dispatches it yet.
    const before = await startRetryd({ ...config, role: 'api', allowTargets: ['127.0.0.1/32'] }, createLogger('info', sink));
    const response = await fetch(`${before.url}/retry-tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        targetUrl: `${downstream.url}/hooks/orders?token=s3cr3t-query`,
        method: 'POST',
        headers: { 'x-note': 's3cr3t-header' },
        body: { card: 's3cr3t-body' },
        policy: POLICY,
      }),
    });
    expect(response.status).toBe(201);
    const { taskId } = (await response.json()) as { taskId: string };
    await before.close();

    const after = await startRetryd(config, createLogger('info', sink));
    cleanups.push(() => after.close());
    const task = await waitFor(
      'the task to fail',
      async () => {
        const read = (await (await fetch(`${after.url}/retry-tasks/${taskId}`)).json()) as { status: string };
        return read.status === 'FAILED' ? read : undefined;
      },
    );
    const why = '127.0.0.1 is loopback: blocked unless --allow-targets covers it (TARGET_BLOCKED)';
    expect(task).toMatchObject({ status: 'FAILED', deadLetterReason: 'target_blocked', attemptNumber: 1, lastError: why });
    expect(downstream.connections).toBe(0);

    const deadLetters = () => lines.filter((l) => l.event === 'dead_letter');
    const logged = await waitFor('the dead_letter line', () => deadLetters().length > 0 && deadLetters());
    expect(logged).toEqual([
      expect.objectContaining({
        level: 40,
        taskId,
        status: 'FAILED',
        reason: 'target_blocked',
        error: why,
        // The origin alone: neither the path nor the query is logged.
        target: downstream.url,
        msg: `task dead-lettered, target blocked: ${why}`,
      }),
    ]);
    expect(raw.join('')).not.toMatch(/s3cr3t/);
  }, 20_000);
});
