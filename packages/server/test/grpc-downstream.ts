import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Metadata,
  Server,
  ServerCredentials,
  type sendUnaryData,
  type ServerUnaryCall,
  type ServiceDefinition,
  type StatusObject,
} from '@grpc/grpc-js';

/** One call a {@link GrpcDownstream} received: its message, its metadata and its deadline. */
export interface ReceivedCall {
  method: string;
  message: Buffer;
  metadata: Metadata;
  /** The call's `:authority`. */
  host: string;
  /** The deadline the client sent (`grpc-timeout`), as grpc-js gives it; Infinity when none. */
  deadline: number;
  at: number;
}

/** How a method answers its `n`-th call with an idempotency key (1-based): OK with a message, a status, or never. */
export type GrpcAnswer =
  | { ok: Buffer; trailers?: Record<string, string> }
  | { code: number; details?: string; trailers?: Record<string, string> }
  | 'never';

/** A method of the downstream: what to answer the `n`-th call with a given key. */
export type GrpcMethod = (call: ReceivedCall, n: number) => GrpcAnswer;

const identity = (b: Buffer) => b;

/** A unary method at `path` that takes and gives raw bytes (no .proto), as a grpc-js service definition entry. */
export function rawUnaryMethod(path: string, name: string): ServiceDefinition[string] {
  return {
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
    originalName: name,
  };
}

/**
 * A real grpc-js server on loopback with unary methods that take and give raw bytes (no .proto): `/test.Svc/<name>`
 * for each method given. It records every call, and counts calls by their `idempotency-key` metadata.
 */
export class GrpcDownstream {
  readonly calls: ReceivedCall[] = [];
  readonly byKey = new Map<string, number>();
  private readonly server = new Server();
  private readonly pending = new Set<sendUnaryData<Buffer>>();
  port = 0;

  constructor(methods: Record<string, GrpcMethod>) {
    const definition: Record<string, ServiceDefinition[string]> = {};
    const implementation: Record<string, (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => void> = {};
    for (const [name, answer] of Object.entries(methods)) {
      definition[name] = rawUnaryMethod(`/test.Svc/${name}`, name);
      implementation[name] = (call, callback) => {
        const deadline = call.getDeadline();
        const received: ReceivedCall = {
          method: name,
          message: call.request,
          metadata: call.metadata,
          host: call.getHost(),
          deadline: deadline instanceof Date ? deadline.getTime() : deadline,
          at: Date.now(),
        };
        this.calls.push(received);
        const key = String(call.metadata.get('idempotency-key')[0] ?? '');
        const n = (this.byKey.get(key) ?? 0) + 1;
        this.byKey.set(key, n);
        const reply = answer(received, n);
        if (reply === 'never') {
          this.pending.add(callback);
          return;
        }
        const trailers = new Metadata();
        for (const [k, v] of Object.entries(reply.trailers ?? {})) trailers.set(k, v);
        if ('ok' in reply) callback(null, reply.ok, trailers);
        else callback({ code: reply.code, details: reply.details ?? '', metadata: trailers } as Partial<StatusObject>, null);
      };
    }
    this.server.addService(definition as ServiceDefinition, implementation);
  }

  /** Listens on 127.0.0.1 (TLS with `tls`'s key and certificate), and gives the port. */
  async start(tls?: { key: Buffer; cert: Buffer }): Promise<number> {
    const credentials = tls === undefined ? ServerCredentials.createInsecure() : ServerCredentials.createSsl(null, [{ private_key: tls.key, cert_chain: tls.cert }]);
    this.port = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync('127.0.0.1:0', credentials, (error, port) => (error === null ? resolve(port) : reject(error))),
    );
    return this.port;
  }

  /** The calls made with an idempotency key. */
  callsWith(key: string): ReceivedCall[] {
    return this.calls.filter((c) => c.metadata.get('idempotency-key')[0] === key);
  }

  async close(): Promise<void> {
    this.server.forceShutdown();
  }
}

/** A CA and a certificate it signed for `localhost` and 127.0.0.1, made with `openssl` in a temporary directory. */
export interface TestCertificates {
  caFile: string;
  key: Buffer;
  cert: Buffer;
  remove(): void;
}

/** Makes a throwaway CA and a server certificate for `localhost` (and IP 127.0.0.1) with the `openssl` command. */
export function makeTestCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'retryd-grpc-tls-'));
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=retryd test CA', '-keyout', file('ca.key'), '-out', file('ca.pem'));
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-keyout', file('server.key'), '-out', file('server.csr'));
  writeFileSync(file('ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  openssl('x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-days', '1', '-extfile', file('ext.cnf'), '-out', file('server.pem'));
  return {
    caFile: file('ca.pem'),
    key: readFileSync(file('server.key')),
    cert: readFileSync(file('server.pem')),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
