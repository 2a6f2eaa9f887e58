import type { ServerResponse } from 'node:http';
import { startServer, type SeenRequest, type TestServer } from '../../server/test/test-server.js';

export type { SeenRequest };
export type LoopbackServer = TestServer;

/** A policy with tiny, exact delays, for tests that retry at once. */
export const FAST = { initialDelayMs: 1, maxDelayMs: 5, jitterType: 'NONE' } as const;

/**
 * A real HTTP server on 127.0.0.1 (a port the OS chose) that answers each request by `answer`, given the request and
 * its number (1 for the first); it may also leave it unanswered, to make the attempt wait.
 */
export function startLoopbackServer(answer: (request: SeenRequest, n: number, res: ServerResponse) => void): Promise<LoopbackServer> {
  return startServer((seen, res, index) => answer(seen, index + 1, res));
}

/** An answer script: the statuses (and headers) of successive requests; the last one repeats. */
export function statuses(...script: (number | [number, Record<string, string>])[]) {
  return (_request: SeenRequest, n: number, res: ServerResponse): void => {
    const step = script[Math.min(n, script.length) - 1] ?? 200;
    const [status, headers] = typeof step === 'number' ? [step, {}] : step;
    res.writeHead(status, headers).end(status < 300 ? `ok ${n}` : `failed ${n}`);
  };
}

/** A port on which nothing listens: a server is opened on it, then closed. */
export async function closedPortUrl(): Promise<string> {
  const server = await startLoopbackServer(statuses(200));
  await server.close();
  return server.url;
}
