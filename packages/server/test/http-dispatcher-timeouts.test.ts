import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpDispatcher, MAX_CONNECT_POOLS } from '../src/engine/http-dispatcher.js';
import { loopbackGuard, taskFor } from './engine-helpers.js';
import { unansweredPort, type UnansweredPort } from './unanswered-port.js';

// An attempt's own timeouts in the HTTP dispatcher, on real sockets: the attempt timeout per dispatch, and the connect
// timeout through a pool per timeout (undici's connector is the pool's), bounded, with the default pool for the rest;
// each connect timeout to the millisecond (undici's own timer ticks about every half second).

let dispatcher: HttpDispatcher | undefined;
let silent: UnansweredPort | undefined;
let server: Server | undefined;
afterEach(async () => {
  await dispatcher?.destroy();
  silent?.close();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  dispatcher = undefined;
  silent = undefined;
  server = undefined;
});

/** A loopback server that takes every request and never answers it. */
async function silentServer(): Promise<string> {
  server = createServer(() => undefined);
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('HttpDispatcher timeouts per attempt', () => {
  it("ends a connect at the attempt's own connect timeout, and at the dispatcher's without one", async () => {
    silent = await unansweredPort();
    dispatcher = new HttpDispatcher({ targetGuard: loopbackGuard(), attemptTimeoutMs: 30_000, connectTimeoutMs: 400 });
    const task = taskFor(`http://127.0.0.1:${silent.port}/x`);

    const ownStart = performance.now();
    const own = await dispatcher.dispatch(task, 1, undefined, { attemptTimeoutMs: 30_000, connectTimeoutMs: 120 });
    const ownMs = performance.now() - ownStart;
    expect(own).toMatchObject({ kind: 'error', message: expect.stringContaining('could not connect within 120 ms (UND_ERR_CONNECT_TIMEOUT)') });
    expect(ownMs).toBeGreaterThanOrEqual(115);
    expect(ownMs).toBeLessThan(395);

    const serviceStart = performance.now();
    const service = await dispatcher.dispatch(task, 1);
    expect(service).toMatchObject({ kind: 'error', message: expect.stringContaining('could not connect within 400 ms') });
    expect(performance.now() - serviceStart).toBeGreaterThanOrEqual(395);
  });

  it("ends an attempt at its own attempt timeout and quotes it", async () => {
    const url = await silentServer();
    dispatcher = new HttpDispatcher({ targetGuard: loopbackGuard(), attemptTimeoutMs: 30_000 });
    const result = await dispatcher.dispatch(taskFor(`${url}/slow`), 1, undefined, { attemptTimeoutMs: 150, connectTimeoutMs: 150 });
    expect(result).toMatchObject({ kind: 'error', message: 'no response within 150 ms (ATTEMPT_TIMEOUT)' });
  });

  it(`gives each connect timeout a pool of its own, at most ${MAX_CONNECT_POOLS}, and lets one it lets go of finish its calls`, async () => {
    silent = await unansweredPort();
    dispatcher = new HttpDispatcher({ targetGuard: loopbackGuard(), attemptTimeoutMs: 30_000, connectTimeoutMs: 5_000 });
    const task = taskFor(`http://127.0.0.1:${silent.port}/x`);
    // One more timeout than there are pools, all at once: the first pool is let go of while its connect is pending.
    const timeouts = Array.from({ length: MAX_CONNECT_POOLS + 1 }, (_, i) => 100 * (i + 1));
    const started = performance.now();
    const ended = await Promise.all(
      timeouts.map(async (connectTimeoutMs) => {
        const result = await dispatcher?.dispatch(task, 1, undefined, { attemptTimeoutMs: 30_000, connectTimeoutMs });
        return { result, ms: performance.now() - started };
      }),
    );
    ended.forEach(({ result, ms }, i) => {
      const connectTimeoutMs = timeouts[i] as number;
      expect(result).toMatchObject({ kind: 'error', message: expect.stringContaining(`could not connect within ${connectTimeoutMs} ms`) });
      expect(ms).toBeGreaterThanOrEqual(connectTimeoutMs - 5);
    });
  });
});
