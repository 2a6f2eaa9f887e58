import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One call the demo downstream answered. */
export interface DownstreamCall {
  idempotencyKey: string | undefined;
  status: number;
}

/** A running demo downstream: where it listens, what it answered so far, and how to stop it. */
export interface FlakyDownstream extends AsyncDisposable {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** Every call, in the order answered. */
  calls: readonly DownstreamCall[];
  close(): Promise<void>;
}

/**
 * A downstream on loopback that fails the first `failures` calls of each `Idempotency-Key` with `503`, then answers
 * `200`: what a receiver recovering from an outage looks like to a retrying caller, and how it tells a retry (same
 * key) from a new call. Used by `retryd demo`; it needs no network beyond 127.0.0.1.
 *
 * @param failures - `503`s per key before the first `200`. Default 2.
 */
export async function startFlakyDownstream(failures = 2): Promise<FlakyDownstream> {
  const seen = new Map<string, number>();
  const calls: DownstreamCall[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    // The body is read to its end before answering, as a real receiver would; its content does not matter here.
    request.resume();
    request.once('end', () => {
      const header = request.headers['idempotency-key'];
      const key = Array.isArray(header) ? header[0] : header;
      const count = (seen.get(key ?? '') ?? 0) + 1;
      seen.set(key ?? '', count);
      const status = count <= failures ? 503 : 200;
      calls.push({ idempotencyKey: key, status });
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(status === 200 ? { ok: true, call: count } : { error: 'temporarily unavailable', call: count }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }));
  return { url: `http://127.0.0.1:${port}`, calls, close, [Symbol.asyncDispose]: close };
}
