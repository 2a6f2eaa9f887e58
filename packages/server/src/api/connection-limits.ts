import { readFileSync } from 'node:fs';
import type { ServerOptions } from 'node:http';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';

/**
 * How long the HTTP server waits for a client, and how many clients it holds at once. A client that sends its
 * request slowly (a byte every few seconds), or opens connections and sends nothing, is cut off at these deadlines
 * instead of holding a connection, a file descriptor and its buffers for as long as it likes.
 */
export interface ConnectionLimits {
  /**
   * Most time, in ms, from the first byte of a request to its last (the request line, the headers and the whole
   * body): past it the request answers `408 REQUEST_TIMEOUT` and its connection closes (Node's `requestTimeout`).
   * It does not bound the answer: a long poll (`waitMs`) waits with its request read. Default 30,000.
   */
  requestTimeoutMs: number;
  /** Most time, in ms, to receive a request's line and headers, at most `requestTimeoutMs` (Node's `headersTimeout`). Default 10,000. */
  headersTimeoutMs: number;
  /**
   * How long, in ms, a connection may stay open with no request between two (Node's `keepAliveTimeout`). Longer
   * than the idle timeout of the load balancers in front (60 s for most), so that they close first. Default 72,000.
   */
  keepAliveTimeoutMs: number;
  /**
   * Most time, in ms, a connection may go without a byte either way while a request is answered: a client that
   * stops reading a large answer is cut off after it (Node's socket timeout). Longer than the longest long poll.
   * Default 120,000.
   */
  idleTimeoutMs: number;
  /**
   * Most connections this process holds at once; a connection over it is closed at once, before a byte is read
   * (Node's `server.maxConnections`). Default {@link defaultMaxConnections}: half the process's open-file limit,
   * at most 10,000, leaving the rest to the workers' outbound connections and the store.
   */
  maxConnections: number;
}

/** Most connections by default whatever the open-file limit: each open connection costs memory too. */
const MAX_DEFAULT_CONNECTIONS = 10_000;

/**
 * Half the process's open-file limit (Node raises its soft limit to the hard one at start), at most 10,000; 10,000
 * where the limit cannot be read (outside Linux). Half: the workers' connections to targets (up to
 * `--concurrency`), the store's and the files the process keeps take descriptors too, and running out of them fails
 * every accept and every outbound call at once, `/healthz` included.
 */
export function defaultMaxConnections(limitsText: () => string = () => readFileSync('/proc/self/limits', 'utf8')): number {
  let text: string;
  try {
    text = limitsText();
  } catch {
    return MAX_DEFAULT_CONNECTIONS;
  }
  const soft = /^Max open files\s+(\d+|unlimited)/m.exec(text)?.[1];
  if (soft === undefined || soft === 'unlimited') return MAX_DEFAULT_CONNECTIONS;
  return Math.max(1, Math.min(MAX_DEFAULT_CONNECTIONS, Math.floor(Number(soft) / 2)));
}

/** The default deadlines of {@link ConnectionLimits}. */
export const DEFAULT_CONNECTION_TIMEOUTS = Object.freeze({ requestTimeoutMs: 30_000, headersTimeoutMs: 10_000, keepAliveTimeoutMs: 72_000, idleTimeoutMs: 120_000 });

/** The defaults of {@link ConnectionLimits} (`maxConnections` read from this process's open-file limit). */
export function defaultConnectionLimits(): ConnectionLimits {
  return { ...DEFAULT_CONNECTION_TIMEOUTS, maxConnections: defaultMaxConnections() };
}

/** Why `limits` cannot be used, or undefined when they can. */
export function connectionLimitsProblem(limits: ConnectionLimits): string | undefined {
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 1) return `${name} must be a positive integer, got ${String(value)}`;
  }
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    return `headersTimeoutMs must be at most requestTimeoutMs (${limits.requestTimeoutMs}), got ${limits.headersTimeoutMs}`;
  }
  return undefined;
}

/**
 * Fastify's options for `limits`. Node looks for requests past their deadlines on a timer (30 s by default, which
 * would let a request run up to twice its timeout); here it looks 4 times per shortest deadline, at least every
 * second: one walk of the connection list each time.
 */
export function serverOptionsOf(limits: ConnectionLimits): Pick<FastifyServerOptions, 'requestTimeout' | 'connectionTimeout' | 'keepAliveTimeout'> & { http: ServerOptions } {
  const checkEveryMs = Math.max(10, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 4)));
  return {
    requestTimeout: limits.requestTimeoutMs,
    connectionTimeout: limits.idleTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    http: { headersTimeout: limits.headersTimeoutMs, requestTimeout: limits.requestTimeoutMs, connectionsCheckingInterval: checkEveryMs },
  };
}

/** Whether a request announced a body (a length above 0, or chunks). */
function announcesBody(headers: Record<string, string | string[] | undefined>): boolean {
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = headers['content-length'];
  return typeof length === 'string' && length !== '0';
}

/**
 * Applies `limits` to the app's server, and closes the connection of any request answered before its body arrived
 * (a 401 or 403 before the body is read, a 404, a 413, a 415): Node would otherwise read and discard the rest of that
 * body, however slowly it comes, to keep the connection for the next request — a client without a key could hold
 * the connection by sending a declared megabyte a byte at a time.
 */
export function installConnectionLimits(app: FastifyInstance, limits: ConnectionLimits): void {
  app.server.maxConnections = limits.maxConnections;
  app.addHook('onSend', async (request, reply) => {
    if (!request.raw.complete && announcesBody(request.headers)) reply.header('connection', 'close');
  });
}
