import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the server saw it. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A real HTTP server on 127.0.0.1 (a port the OS chose) that answers each request by `answer`. */
export interface LoopbackServer {
  url: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

/**
 * Starts a loopback server. `answer` gets the request and its number (1 for the first) and writes the response; it
 * may also leave it unanswered, or destroy the socket, to fail the attempt.
 */
export async function startLoopbackServer(answer: (request: SeenRequest, n: number, res: ServerResponse) => void): Promise<LoopbackServer> {
  const requests: SeenRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(seen);
      answer(seen, requests.length, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
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
