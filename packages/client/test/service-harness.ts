import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// The real service, in this process: the server package's own start-up, on a SQLite file.
import { ApiKeys } from '../../server/src/access/api-keys.js';
import { createLogger } from '../../server/src/service/logger.js';
import { openStore } from '../../server/src/service/open-store.js';
import { DEFAULT_CONFIG, type RetrydConfig } from '../../server/src/service/retryd-config.js';
import { startRetryd } from '../../server/src/service/start-retryd.js';

/** A running retryd service that may call loopback targets, with an admin API key. */
export interface TestService {
  url: string;
  apiKey: string;
  /** The directory of its SQLite store. */
  dir: string;
  /** Stops the service and keeps its store, for `startService(config, stopped)` to start it again. */
  stop(): Promise<void>;
  /** Stops the service and deletes its store. */
  close(): Promise<void>;
}

/**
 * Starts retryd on a fresh SQLite file, loopback allowed as a target, protections off (targets here fail on purpose);
 * or, given a service stopped before, again on its store, its port and its API key.
 */
export async function startService(config: Partial<RetrydConfig> = {}, stopped?: TestService): Promise<TestService> {
  const dir = stopped?.dir ?? (await mkdtemp(join(tmpdir(), 'retryd-client-')));
  const storeUrl = `sqlite:${join(dir, 'retryd.db')}`;
  let apiKey = stopped?.apiKey;
  if (apiKey === undefined) {
    const { store, blobs } = await openStore(storeUrl);
    apiKey = (await new ApiKeys(store).create({ tenantId: 'default', scope: 'admin', name: 'client tests' })).token;
    await store.close();
    await blobs.close?.();
  }
  const port = stopped === undefined ? 0 : Number(new URL(stopped.url).port);
  const service = await startRetryd(
    { ...DEFAULT_CONFIG, port, store: storeUrl, sqliteSync: 'normal', graceMs: 0, allowTargets: ['127.0.0.1/32'], protection: 'off', ...config },
    createLogger('silent'),
  );
  return {
    url: service.url,
    apiKey,
    dir,
    stop: () => service.close(),
    close: async () => {
      await service.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** One request a {@link Downstream} received. */
export interface Received {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  status: number;
}

/** A loopback HTTP server that answers each request with what `answer` says and records every request. */
export class Downstream {
  readonly received: Received[] = [];
  #server: Server | undefined;

  constructor(private readonly answer: (request: Omit<Received, 'status'>, index: number) => { status: number; body?: string }) {}

  async start(): Promise<string> {
    this.#server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        const seen = { method: request.method ?? '', path: request.url ?? '', headers: request.headers, body };
        const answer = this.answer(seen, this.received.length);
        this.received.push({ ...seen, status: answer.status });
        response.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body ?? '{}');
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    await new Promise((resolve) => this.#server?.close(resolve));
  }
}
