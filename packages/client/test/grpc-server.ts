import {
  credentials,
  makeGenericClientConstructor,
  Metadata,
  Server,
  ServerCredentials,
  status,
  type Client,
  type ClientOptions,
  type Interceptor,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceDefinition,
  type ServiceError,
} from '@grpc/grpc-js';

/** Messages are JSON objects, serialized by hand: no .proto needed. */
export type Message = Record<string, unknown>;
export const serialize = (value: Message): Buffer => Buffer.from(JSON.stringify(value));
const deserialize = (bytes: Buffer): Message => JSON.parse(bytes.toString()) as Message;

/** `test.Orders`: a unary `Place` and a server-streaming `Watch`. */
export const ORDERS: ServiceDefinition = {
  place: {
    path: '/test.Orders/Place',
    requestStream: false,
    responseStream: false,
    requestSerialize: serialize,
    requestDeserialize: deserialize,
    responseSerialize: serialize,
    responseDeserialize: deserialize,
  },
  watch: {
    path: '/test.Orders/Watch',
    requestStream: false,
    responseStream: true,
    requestSerialize: serialize,
    requestDeserialize: deserialize,
    responseSerialize: serialize,
    responseDeserialize: deserialize,
  },
};

/** A client of `test.Orders`, with the methods typed as the tests call them. */
export interface OrdersClient extends Client {
  place(request: Message, metadata: Metadata, options: { deadline?: Date | number }, callback: (error: ServiceError | null, reply?: Message) => void): { cancel(): void };
  watch(request: Message, metadata?: Metadata): NodeJS.EventEmitter;
}

const OrdersClientConstructor = makeGenericClientConstructor(ORDERS, 'Orders');

/** One request the server received. */
export interface Seen {
  request: Message;
  metadata: Metadata;
  /** The deadline the attempt was sent with (the server's reading of its `grpc-timeout`), in ms; Infinity for none. */
  deadlineMs: number;
  receivedAtMs: number;
  /** Resolves when the caller cancels the call (or its deadline passes) before it is answered. */
  cancelled: Promise<void>;
}

/** How the server answers a request: a reply, a status with trailers, or never. */
export type Answer = { reply: Message } | { code: status; details?: string; trailers?: Record<string, string> } | 'hang';

/** A grpc-js server on 127.0.0.1 that answers request `n` (1 for the first) of either method by `answer`. */
export interface OrdersServer {
  target: string;
  port: number;
  seen: Seen[];
  close(): Promise<void>;
}

export async function startOrdersServer(answer: (seen: Seen, n: number) => Answer): Promise<OrdersServer> {
  const seen: Seen[] = [];
  const receive = (call: ServerUnaryCall<Message, Message> | ServerWritableStream<Message, Message>): { entry: Seen; answer: Answer } => {
    const deadline = call.getDeadline();
    const entry: Seen = {
      request: call.request,
      metadata: call.metadata,
      deadlineMs: deadline instanceof Date ? deadline.getTime() : deadline,
      receivedAtMs: Date.now(),
      cancelled: new Promise((resolve) => call.once('cancelled', () => resolve())),
    };
    seen.push(entry);
    return { entry, answer: answer(entry, seen.length) };
  };
  const server = new Server();
  server.addService(ORDERS, {
    place: (call: ServerUnaryCall<Message, Message>, callback: (error: Partial<ServiceError> | null, reply?: Message) => void) => {
      const { answer: a } = receive(call);
      if (a === 'hang') return;
      if ('reply' in a) return callback(null, a.reply);
      callback({ code: a.code, details: a.details ?? status[a.code], metadata: trailers(a.trailers) });
    },
    watch: (call: ServerWritableStream<Message, Message>) => {
      const { answer: a } = receive(call);
      if (a === 'hang') return;
      if ('reply' in a) {
        call.write(a.reply);
        return call.end();
      }
      call.emit('error', { code: a.code, details: a.details ?? status[a.code], metadata: trailers(a.trailers) });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  return {
    target: `127.0.0.1:${port}`,
    port,
    seen,
    // Forced: a test may leave a call unanswered on purpose.
    close: async () => server.forceShutdown(),
  };
}

function trailers(entries: Record<string, string> = {}): Metadata {
  const metadata = new Metadata();
  for (const [key, value] of Object.entries(entries)) metadata.set(key, value);
  return metadata;
}

/** A plain-text client of `target` with these interceptors. */
export function ordersClient(target: string, interceptors: Interceptor[], options: ClientOptions = {}): OrdersClient {
  return new OrdersClientConstructor(target, credentials.createInsecure(), { ...options, interceptors }) as unknown as OrdersClient;
}

/** A unary `Place` call, as a promise of its reply or its error (a grpc-js `ServiceError`). */
export function place(client: OrdersClient, request: Message, metadata = new Metadata(), options: { deadline?: Date | number } = {}): Promise<Message> {
  return new Promise((resolve, reject) => client.place(request, metadata, options, (error, reply) => (error ? reject(error) : resolve(reply!))));
}
