import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiKeys } from '../src/access/api-keys.js';
import { Authenticator } from '../src/access/authenticator.js';
import { TenantLimiter } from '../src/access/tenant-limiter.js';
import type { AppAccess } from '../src/api/build-app.js';
import { connectionLimitsProblem, defaultMaxConnections, type ConnectionLimits } from '../src/api/connection-limits.js';
import type { Store } from '../src/store/store.js';
import { startApi, type ApiHarness } from './api-harness.js';
import { waitFor } from './wait-for.js';

// Clients that send their requests slowly, or hold connections open, are cut off at the server's deadlines and cap;
// meanwhile /healthz and every other client keep being answered. Deadlines are short here so that the test is quick.

const accessOf = (store: Store): AppAccess => ({
  authenticator: new Authenticator(store, { keyCheckMs: 0 }),
  limiter: new TenantLimiter(store, { defaults: { requestsPerSecond: null, maxPendingTasks: null } }),
  apiKeys: new ApiKeys(store),
});

/** A raw connection that records what it received and when it closed. */
interface RawClient {
  socket: Socket;
  openedAt: number;
  received: string;
  closedAt: number | undefined;
}

function openRaw(port: number, head: string): Promise<RawClient> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const client: RawClient = { socket, openedAt: Date.now(), received: '', closedAt: undefined };
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (client.received += chunk));
    // The server cutting the connection off is what the tests wait for; a reset is one way it happens.
    socket.on('error', () => {});
    socket.on('close', () => (client.closedAt = Date.now()));
    socket.once('connect', () => {
      socket.write(head);
      resolve(client);
    });
    socket.once('error', reject);
  });
}

/** Writes one byte of body to every client still open, every `everyMs`, until stopped. */
function trickle(clients: readonly RawClient[], everyMs: number): () => void {
  const timer = setInterval(() => {
    for (const client of clients) if (client.closedAt === undefined && client.socket.writable) client.socket.write('x');
  }, everyMs);
  return () => clearInterval(timer);
}

const postHead = (headers: string) =>
  `POST /retry-tasks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n${headers}\r\n`;

const portOf = (api: ApiHarness) => Number(new URL(api.url).port);

describe('slow clients', () => {
  let api: ApiHarness | undefined;
  let clients: RawClient[] = [];
  afterEach(async () => {
    for (const client of clients) client.socket.destroy();
    clients = [];
    await api?.close();
    api = undefined;
  });

  it('cuts 300 connections trickling a body off at the request deadline, with 408, and answers everyone else meanwhile', async () => {
    // A deadline a busy machine's health check and enqueue answer well within (at a load of 13, 1.5 s was not).
    const limits: Partial<ConnectionLimits> = { requestTimeoutMs: 4_000, headersTimeoutMs: 1_000 };
    api = await startApi({ access: accessOf, app: { connections: limits } });
    const { token } = await new ApiKeys(api.store).create({ tenantId: 'default', scope: 'admin', name: 'slow' });
    const port = portOf(api);
    clients = await Promise.all(Array.from({ length: 300 }, () => openRaw(port, postHead(`Authorization: Bearer ${token}\r\n`))));
    const stop = trickle(clients, 100);
    try {
      // While all 300 are open and sending: the probe answers, and so does a client that sends its request whole.
      const health = await api.call('GET', '/healthz');
      expect(health.status).toBe(200);
      const enqueued = await api.call(
        'POST',
        '/retry-tasks',
        { targetUrl: 'https://api.example.com/orders', method: 'POST', body: { order: 1 } },
        { authorization: `Bearer ${token}` },
      );
      expect(enqueued.status).toBe(201);
      expect(clients.every((c) => c.closedAt === undefined)).toBe(true);

      await waitFor('every slow connection cut off', () => clients.every((c) => c.closedAt !== undefined), 30_000);
    } finally {
      stop();
    }
    for (const client of clients) {
      // Not before the deadline (less the server's check interval), and with a problem that says why.
      expect(client.closedAt! - client.openedAt).toBeGreaterThanOrEqual(4_000 - 300);
      expect(client.received).toMatch(/^HTTP\/1\.1 408 /);
      expect(client.received).toContain('"code":"REQUEST_TIMEOUT"');
    }
    expect((await api.call('GET', '/healthz')).status).toBe(200);
  });

  it('closes the connection after a 401 sent before the body, instead of reading the body to its end', async () => {
    // The default deadlines (30 s for a request): the connections close because of the 401, not a deadline.
    api = await startApi({ access: accessOf });
    await new ApiKeys(api.store).create({ tenantId: 'default', scope: 'admin', name: 'exists' });
    const port = portOf(api);
    clients = await Promise.all(Array.from({ length: 300 }, () => openRaw(port, postHead(''))));
    const stop = trickle(clients, 100);
    try {
      await waitFor('every keyless connection answered and closed', () => clients.every((c) => c.closedAt !== undefined), 10_000);
    } finally {
      stop();
    }
    for (const client of clients) {
      expect(client.received).toMatch(/^HTTP\/1\.1 401 /);
      expect(client.received.toLowerCase()).toContain('connection: close');
    }
    expect((await api.call('GET', '/healthz')).status).toBe(200);
  });

  it('cuts off connections that never finish their headers at the headers deadline', async () => {
    api = await startApi({ app: { connections: { requestTimeoutMs: 1_500, headersTimeoutMs: 500 } } });
    const port = portOf(api);
    clients = await Promise.all(Array.from({ length: 50 }, () => openRaw(port, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n')));
    const stop = trickle(clients, 100);
    try {
      await waitFor('every connection without headers cut off', () => clients.every((c) => c.closedAt !== undefined), 10_000);
    } finally {
      stop();
    }
    for (const client of clients) expect(client.received).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('holds at most maxConnections at once: one over is closed unread, and a freed slot serves again', async () => {
    api = await startApi({ app: { connections: { maxConnections: 20 } } });
    const port = portOf(api);
    clients = await Promise.all(Array.from({ length: 20 }, () => openRaw(port, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n')));
    await waitFor('the server holds 20 connections', async () => (await connectionsOf(api!)) === 20, 5_000);

    const over = await openRaw(port, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    clients.push(over);
    await waitFor('the connection over the cap closed', () => over.closedAt !== undefined, 5_000);
    expect(over.received).toBe('');

    clients[0]!.socket.destroy();
    await waitFor('a slot is free', async () => (await connectionsOf(api!)) < 20, 5_000);
    expect((await api.call('GET', '/healthz')).status).toBe(200);
  });
});

function connectionsOf(api: ApiHarness): Promise<number> {
  return new Promise((resolve, reject) => api.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))));
}

describe('connection limits', () => {
  it('default the cap to half the open-file limit, at most 10,000', () => {
    expect(defaultMaxConnections(() => 'Max open files            20000                20000                files     \n')).toBe(10_000);
    expect(defaultMaxConnections(() => 'Max open files            1024                 4096                 files     \n')).toBe(512);
    expect(defaultMaxConnections(() => 'Max open files            unlimited            unlimited            files     \n')).toBe(10_000);
    expect(
      defaultMaxConnections(() => {
        throw new Error('ENOENT');
      }),
    ).toBe(10_000);
  });

  it('refuses a headers deadline past the request deadline, naming both', () => {
    const limits = { requestTimeoutMs: 1_000, headersTimeoutMs: 2_000, keepAliveTimeoutMs: 1, idleTimeoutMs: 1, maxConnections: 1 };
    expect(connectionLimitsProblem(limits)).toBe('headersTimeoutMs must be at most requestTimeoutMs (1000), got 2000');
  });
});
