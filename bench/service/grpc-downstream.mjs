// The gRPC downstream of W1 over gRPC (`w1.mjs --downstream grpc`), the counterpart of ./downstream.mjs's flaky and ok
// modes, in its own process for the same reason: a grpc-js server on 127.0.0.1 with one unary method,
// `/bench.W1/Charge`, raw bytes in and out (no .proto).
//
//   flaky: answers UNAVAILABLE to the first `failFirst` calls (default 2) carrying a given `idempotency-key` metadata
//          and OK to the next; counts every call, every first success and every call after a success (a duplicate).
//   ok:    answers OK to every call.
//
// Times are epoch milliseconds with a fractional part, as ./downstream.mjs's. The parent drives it over IPC with the
// same commands (reset, stats, exit; see ./lib/downstream-client.mjs) and gets { event: 'reached', stats } once the
// configured number of first successes has been reached.

import { Metadata, Server, ServerCredentials, status } from '@grpc/grpc-js';
import { parentSend } from './lib/message-calls.mjs';

const epochNow = () => performance.timeOrigin + performance.now();
const identity = (b) => b;
const REPLY = Buffer.from('{"ok":true}');

let mode = 'flaky';
let failFirst = 2;
let expect = 0;
let requests = new Map();
let firstSuccesses = new Set();
let totalRequests = 0;
let duplicates = 0;
let noKey = 0;
let firstRequestAt = null;
let lastFirstSuccessAt = null;
let lastRequestAt = null;
let requestsAtLastFirstSuccess = 0;
let reached = false;

function reset(options = {}) {
  if (!['flaky', 'ok'].includes(options.mode ?? 'flaky')) throw new Error(`the gRPC downstream has modes flaky and ok, got ${options.mode}`);
  mode = options.mode ?? 'flaky';
  failFirst = options.failFirst ?? 2;
  expect = options.expect ?? 0;
  requests = new Map();
  firstSuccesses = new Set();
  totalRequests = 0;
  duplicates = 0;
  noKey = 0;
  firstRequestAt = null;
  lastFirstSuccessAt = null;
  lastRequestAt = null;
  requestsAtLastFirstSuccess = 0;
  reached = false;
}

function stats() {
  return {
    mode,
    requests: totalRequests,
    keys: requests.size,
    firstSuccesses: firstSuccesses.size,
    duplicates,
    noKey,
    firstRequestAt,
    lastFirstSuccessAt,
    lastRequestAt,
    requestsAtLastFirstSuccess,
  };
}

function charge(call, callback) {
  // Stamped on arrival: that is when the attempt reached the target.
  const at = epochNow();
  totalRequests += 1;
  firstRequestAt ??= at;
  lastRequestAt = at;
  const key = call.metadata.get('idempotency-key')[0];
  if (typeof key !== 'string' || key === '') {
    noKey += 1;
    callback({ code: status.INVALID_ARGUMENT, details: 'missing idempotency-key', metadata: new Metadata() });
    return;
  }
  const n = (requests.get(key) ?? 0) + 1;
  requests.set(key, n);
  const duplicate = firstSuccesses.has(key);
  if (duplicate) {
    duplicates += 1;
    callback(null, REPLY);
    return;
  }
  if (mode === 'flaky' && n <= failFirst) {
    callback({ code: status.UNAVAILABLE, details: 'busy', metadata: new Metadata() });
    return;
  }
  firstSuccesses.add(key);
  lastFirstSuccessAt = at;
  requestsAtLastFirstSuccess = totalRequests;
  callback(null, REPLY);
  if (!reached && expect > 0 && firstSuccesses.size >= expect) {
    reached = true;
    process.send?.({ event: 'reached', stats: stats() });
  }
}

const server = new Server();
server.addService(
  {
    Charge: {
      path: '/bench.W1/Charge',
      requestStream: false,
      responseStream: false,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
      originalName: 'Charge',
    },
  },
  { Charge: charge },
);

const commands = {
  reset: (args) => (reset(args), stats()),
  stats: () => stats(),
  exit: () => {
    setImmediate(() => {
      server.forceShutdown();
      process.exit(0);
    });
    return true;
  },
};

const send = parentSend();
process.on('message', (/** @type {any} */ message) => {
  const { id, cmd, ...args } = message;
  const handler = commands[cmd];
  if (handler === undefined) send({ id, error: `unknown command ${cmd} (the gRPC downstream has ${Object.keys(commands).join(', ')})` });
  else
    void Promise.resolve()
      .then(() => handler(args))
      .then(
        (result) => send({ id, result }),
        (error) => send({ id, error: error.message }),
      );
});
process.on('disconnect', () => process.exit(0));

server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, port) => {
  if (error !== null) throw error;
  send({ event: 'listening', port });
});
