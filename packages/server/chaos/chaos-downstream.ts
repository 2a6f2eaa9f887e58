import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * How the downstream treats the first `times` requests of each idempotency key (later ones are answered normally):
 *
 * - `ok`: no misbehaviour; `fail`: 503;
 * - `hang`: reads the request and never answers (the connection stays open until the downstream closes);
 * - `trickle`: processes the key, answers 200 and sends its body one byte every 100 ms, for longer than any timeout;
 * - `late`: processes the key and answers 200 only after `lateMs` (after the caller's timeout);
 * - `huge`: 503 with a body of `hugeBytes`;
 * - `reset`: resets the TCP connection (RST) without an answer.
 */
export type Misbehaviour = 'ok' | 'fail' | 'hang' | 'trickle' | 'late' | 'huge' | 'reset';

/** Options of {@link ChaosDownstream}. */
export interface ChaosDownstreamOptions {
  /** Default `ok`. */
  misbehave?: Misbehaviour;
  /** Requests of each key that misbehave. Default 1. */
  times?: number;
  /** Delay before a normal answer, in ms (keeps attempts in flight). Default 0. */
  delayMs?: number;
  /** Delay of a `late` answer, in ms. Default 2 000. */
  lateMs?: number;
  /** Body size of a `huge` answer. Default 8 MiB. */
  hugeBytes?: number;
}

/**
 * A downstream on loopback that does what a payment API does with an `Idempotency-Key` — the first request of a key
 * that it answers with success is processed, any later one is a replay answered from memory — counts everything per
 * key, and misbehaves on command. Emits `request` (key, request number of that key) as each request arrives, so a
 * test can act at the exact moment a call is under way.
 */
export class ChaosDownstream extends EventEmitter<{ request: [key: string, n: number] }> {
  /** Requests received, per key. */
  readonly requests = new Map<string, number>();
  /** Times a key was processed (a success other than a replay): the audit wants 1 for each succeeded task. */
  readonly processed = new Map<string, number>();
  /** Requests for a key already processed, answered as replays. */
  replays = 0;
  /** `huge` answers the caller stopped reading before their end. */
  hugeCutShort = 0;
  misbehave: Misbehaviour;
  private readonly times: number;
  private readonly delayMs: number;
  private readonly lateMs: number;
  private readonly hugeBytes: number;
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private server: Server | undefined;

  constructor(options: ChaosDownstreamOptions = {}) {
    super();
    this.misbehave = options.misbehave ?? 'ok';
    this.times = options.times ?? 1;
    this.delayMs = options.delayMs ?? 0;
    this.lateMs = options.lateMs ?? 2_000;
    this.hugeBytes = options.hugeBytes ?? 8 * 1024 * 1024;
  }

  /** Listens on a free loopback port; resolves with the base URL. */
  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      req.resume();
      req.on('end', () => this.answer(req, res));
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('no address');
    return `http://127.0.0.1:${address.port}`;
  }

  /** Requests received in all. */
  get totalRequests(): number {
    let n = 0;
    for (const count of this.requests.values()) n += count;
    return n;
  }

  /** Resolves with the key of the next request to arrive. */
  nextRequest(): Promise<string> {
    return new Promise((resolve) => this.once('request', (key) => resolve(key)));
  }

  close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => (this.server === undefined ? resolve() : this.server.close(() => resolve())));
  }

  private answer(req: IncomingMessage, res: ServerResponse): void {
    const key = String(req.headers['idempotency-key'] ?? '');
    const n = (this.requests.get(key) ?? 0) + 1;
    this.requests.set(key, n);
    this.emit('request', key, n);
    const mode = n <= this.times ? this.misbehave : 'ok';
    switch (mode) {
      case 'hang':
        return;
      case 'reset':
        req.socket.resetAndDestroy();
        return;
      case 'fail':
        res.writeHead(503).end('busy');
        return;
      case 'huge': {
        res.on('close', () => {
          if (!res.writableFinished) this.hugeCutShort++;
        });
        res.writeHead(503, { 'content-length': String(this.hugeBytes) });
        const chunk = Buffer.alloc(64 * 1024, 'x');
        let sent = 0;
        const pump = () => {
          while (sent < this.hugeBytes && !res.destroyed) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        pump();
        return;
      }
      case 'trickle': {
        this.process(key);
        res.writeHead(200, { 'content-type': 'text/plain' });
        const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write('.')), 100);
        this.timers.add(timer);
        return;
      }
      case 'late':
        this.process(key);
        return this.later(this.lateMs, () => res.writeHead(200).end('ok, late'));
      case 'ok':
        return this.later(this.delayMs, () => this.succeed(key, res));
    }
  }

  private succeed(key: string, res: ServerResponse): void {
    if (this.processed.has(key)) {
      this.replays++;
      res.writeHead(200, { 'idempotent-replayed': 'true' }).end('ok');
    } else {
      this.process(key);
      res.writeHead(200).end('ok');
    }
  }

  private process(key: string): void {
    this.processed.set(key, (this.processed.get(key) ?? 0) + 1);
  }

  private later(ms: number, fn: () => void): void {
    if (ms <= 0) return fn();
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
  }
}
