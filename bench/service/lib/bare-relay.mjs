// The W4 ceiling: the least a durable relay must do, with none of retryd's scheduling. Run in its own process by
// ../w4-ceiling.mjs, as retryd runs in its own.
//
//   node bench/service/lib/bare-relay.mjs LOG_FILE [nosync]
//
// `nosync`: append to the log but never fdatasync it (the ceiling for a store that commits nothing to disk, such as
// Redis without AOF); the grouping per turn of the event loop stays.
//
// POST /retry-tasks/batch { tasks: [{ targetUrl, method, headers, body, idempotencyKey }] }:
//   1. parse the JSON, stamp each task's due time (now, whole ms, as retryd does);
//   2. append the batch to a log file and fdatasync it (the durable commit, grouped per turn of the event loop);
//   3. answer { results: [{ status: 201, task: { idempotencyKey, nextAttemptAt } }] } and send every task to its
//      target at once (undici, keep-alive), with its Idempotency-Key;
//   4. append each answer to the log, fdatasync'd by batch (the completion's commit).
// No validation, no idempotency check, no leases, no retries: a floor, not a product.

import { fdatasyncSync, openSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import { Agent, request } from 'undici';

const log = openSync(process.argv[2], 'a');
const sync = process.argv[3] !== 'nosync';
const agent = new Agent({ connections: 64, keepAliveTimeout: 60_000 });

/**
 * Group commit, as retryd's SQLite store does it: what is appended during one turn of the event loop is written and
 * fdatasync'd once, in the check phase (`setImmediate`), on the event loop (one hop fewer than libuv's pool).
 */
let pending = [];
function commit(line) {
  return new Promise((resolve) => {
    if (pending.length === 0) setImmediate(flush);
    pending.push({ line, resolve });
  });
}
function flush() {
  const batch = pending;
  pending = [];
  writeSync(log, batch.map((p) => p.line).join(''));
  if (sync) fdatasyncSync(log);
  for (const p of batch) p.resolve();
}

async function dispatch(task) {
  const headers = { ...task.headers, 'idempotency-key': task.idempotencyKey };
  try {
    const res = await request(task.targetUrl, { method: task.method, headers, body: task.body ?? undefined, dispatcher: agent });
    await res.body.dump();
    await commit(`${JSON.stringify({ done: task.idempotencyKey, status: res.statusCode })}\n`);
  } catch (error) {
    console.error(`bare relay: ${task.idempotencyKey}: ${error}`);
  }
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    const { tasks } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const now = Math.floor(performance.timeOrigin + performance.now());
    for (const task of tasks) task.nextAttemptAt = now;
    await commit(`${JSON.stringify(tasks)}\n`);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ results: tasks.map((t) => ({ status: 201, task: { idempotencyKey: t.idempotencyKey, nextAttemptAt: t.nextAttemptAt } })) }));
    for (const task of tasks) void dispatch(task);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send?.({ event: 'listening', port: /** @type {import('node:net').AddressInfo} */ (server.address()).port }));
process.on('disconnect', () => process.exit(0));
