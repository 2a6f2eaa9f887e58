import { Metadata, Server, ServerCredentials, status, type sendUnaryData, type ServerUnaryCall, type StatusObject } from '@grpc/grpc-js';
import { rawUnaryMethod } from '../test/grpc-downstream.js';


/**
 * The gRPC counterpart of `ChaosDownstream`: a grpc-js server on loopback with one unary method,
 * `/chaos.Payments/Charge` (raw bytes, no .proto), that answers UNAVAILABLE to the first call of each
 * `idempotency-key` and processes the key on a later one; a call for a key already processed is a replay. Counts
 * requests, keys processed and replays as the audit reads them. Each answer comes `delayMs` after the call, so calls are
 * in flight when a scenario kills the service.
 */
export class GrpcChaosDownstream {
  readonly requests = new Map<string, number>();
  readonly processed = new Map<string, number>();
  replays = 0;
  private readonly server = new Server();
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(private readonly delayMs = 20) {
    this.server.addService(
      { Charge: rawUnaryMethod('/chaos.Payments/Charge', 'Charge') },
      { Charge: (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => this.answer(call, callback) },
    );
  }

  /** Listens on a free loopback port; resolves with the target's origin, `grpc://127.0.0.1:<port>`. */
  async start(): Promise<string> {
    const port = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error === null ? resolve(bound) : reject(error))),
    );
    return `grpc://127.0.0.1:${port}`;
  }

  /** Requests received in all. */
  get totalRequests(): number {
    let n = 0;
    for (const count of this.requests.values()) n += count;
    return n;
  }

  close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.server.forceShutdown();
    return Promise.resolve();
  }

  private answer(call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>): void {
    const key = String(call.metadata.get('idempotency-key')[0] ?? '');
    const n = (this.requests.get(key) ?? 0) + 1;
    this.requests.set(key, n);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (n === 1) {
        callback({ code: status.UNAVAILABLE, details: 'not ready yet', metadata: new Metadata() } as Partial<StatusObject>, null);
        return;
      }
      if (this.processed.has(key)) this.replays++;
      else this.processed.set(key, 1);
      callback(null, Buffer.from(key));
    }, this.delayMs);
    this.timers.add(timer);
  }
}
