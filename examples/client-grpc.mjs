import { credentials, makeGenericClientConstructor, Metadata, Server, ServerCredentials, status } from '@grpc/grpc-js';
import { retryInterceptor, retrydTaskIdOf } from '@retryd/client/grpc';

// One unary method, JSON in and out (a generated client from a .proto works the same way).
const json = { serialize: (value) => Buffer.from(JSON.stringify(value)), deserialize: (bytes) => JSON.parse(bytes.toString()) };
const Orders = {
  place: {
    path: '/shop.Orders/Place', requestStream: false, responseStream: false,
    requestSerialize: json.serialize, requestDeserialize: json.deserialize,
    responseSerialize: json.serialize, responseDeserialize: json.deserialize,
  },
};

// A server that is UNAVAILABLE twice, then answers with the idempotency-key it received.
let attempts = 0;
const server = new Server();
server.addService(Orders, {
  place: (call, callback) => {
    attempts += 1;
    if (attempts < 3) callback({ code: status.UNAVAILABLE, details: 'restarting' });
    else callback(null, { placed: true, key: call.metadata.get('idempotency-key')[0] });
  },
});
const port = await new Promise((resolve, reject) =>
  server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
);

const target = `127.0.0.1:${port}`;
const OrdersClient = makeGenericClientConstructor(Orders, 'Orders');
const orders = new OrdersClient(target, credentials.createInsecure(), {
  interceptors: [retryInterceptor({ target, policy: { maxAttempts: 4, initialDelayMs: 50 } })],
});
orders.place({ sku: 'A-1', qty: 2 }, new Metadata(), { deadline: Date.now() + 5_000 }, (error, reply) => {
  if (error) console.log(`failed ${status[error.code]}, task ${retrydTaskIdOf(error) ?? 'none'}`);
  else console.log(`placed after ${attempts} attempts, key ${reply.key}`);
  orders.close();
  server.forceShutdown();
});
