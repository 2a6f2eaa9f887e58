// The W4 ceiling: the least a durable relay must do, with none of retryd's scheduling. Run in its own process by
// ../w4-ceiling.mjs, as retryd runs in its own.
//
//   node bench/service/lib/bare-relay.mjs LOG_FILE [nosync]
//   node bench/service/lib/bare-relay.mjs --store KIND URL
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
//
// `--store KIND URL` (sqlite, postgres or redis, at URL, as `retrydStore` gives it): W4's store work as retryd's hand-off
// does it, on the current build's store (lib/built-store.mjs), in place of the log: each batch becomes tasks already
// leased to the relay and goes in through `insertTasksVisible` (`insertTasks` on a store without it), the batches of
// one turn of the event loop in one write, as retryd's enqueue batcher merges them; every task is sent once its insert
// is visible, and the answer waits for the insert to be durable; each answer is written as the engine writes a success
// (`completeAttempts`, one write at a time, every result of a turn in the next, as retryd's completion batcher does).
// The ceiling of a durable relay on that store: its commits, round trips and server, and none of retryd's API,
// validation, scheduling, protections or metrics.

import { fdatasyncSync, openSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Agent, request } from 'undici';
import { openBuiltStore } from './built-store.mjs';
import { builtTaskMaker } from './new-task.mjs';
import { CURRENT_DIST } from './report.mjs';

const LEASE_MS = 60_000;
const WORKER_ID = 'bare-relay';

const agent = new Agent({ connections: 64, keepAliveTimeout: 60_000 });
const storeMode = process.argv[2] === '--store';

/**
 * The relay's durable state: `accept(tasks, now, dispatch)` makes a batch durable and calls `dispatch` for each task
 * once it may be sent, before it resolves or right after the answer (the function it resolves to);
 * `done(task, statusCode, startedAt)` records an answer. The log file, or the store of `--store`.
 */
const state = storeMode ? await storeState(process.argv[3], process.argv[4]) : logState(process.argv[2], process.argv[3] !== 'nosync');

/** Group commit to a log file: what is appended during one turn of the event loop is written (and fdatasync'd) once. */
function logState(file, sync) {
  const log = openSync(file, 'a');
  // In the check phase (`setImmediate`), on the event loop (one hop fewer than libuv's pool), as retryd's SQLite
  // store commits.
  let pending = [];
  const commit = (line) =>
    new Promise((resolve) => {
      if (pending.length === 0) setImmediate(flush);
      pending.push({ line, resolve });
    });
  const flush = () => {
    const batch = pending;
    pending = [];
    writeSync(log, batch.map((p) => p.line).join(''));
    if (sync) fdatasyncSync(log);
    for (const p of batch) p.resolve();
  };
  return {
    async accept(tasks, _now, dispatch) {
      await commit(`${JSON.stringify(tasks)}\n`);
      return () => {
        for (const task of tasks) void dispatch(task);
      };
    },
    done: (task, statusCode) => commit(`${JSON.stringify({ done: task.idempotencyKey, status: statusCode })}\n`),
  };
}

/**
 * Group commit as retryd's batchers do it: what is submitted during one turn of the event loop goes out in one write,
 * in the check phase (`setImmediate`); at most `maxWrites` writes are in flight, and what comes meanwhile waits for
 * the next. `write(items)` answers one result per item, in order.
 */
function groupCommit(write, maxWrites) {
  let queued = [];
  let writing = 0;
  let scheduled = false;
  const schedule = () => {
    if (scheduled || writing >= maxWrites || queued.length === 0) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      const batch = queued;
      queued = [];
      writing++;
      write(batch.map((q) => q.item)).then(
        (results) => batch.forEach((q, i) => q.resolve(results[i])),
        (error) => batch.forEach((q) => q.reject(error)),
      ).finally(() => {
        writing--;
        schedule();
      });
    });
  };
  return (item) =>
    new Promise((resolve, reject) => {
      queued.push({ item, resolve, reject });
      schedule();
    });
}

/**
 * W4's store work on the current build's store of `kind` at `url`, as retryd does it: the hand-off's inserts merged
 * per turn (`EnqueueBatcher`, the store's `concurrentInserts` writes at once) and the completions one write at a time
 * (`CompletionBatcher`).
 */
async function storeState(kind, url) {
  const store = await openBuiltStore(CURRENT_DIST, { kind, url });
  const newTask = await builtTaskMaker(CURRENT_DIST);
  // The build's own default retention of a success: a final outcome's expiresAt, as the engine dates it.
  const { DEFAULT_RETENTION } = await import(pathToFileURL(join(CURRENT_DIST, 'retention', 'retention-periods.js')).href);
  const insert = groupCommit(async (batches) => {
    const tasks = batches.flat();
    const { results, durable } =
      store.insertTasksVisible === undefined ? { results: await store.insertTasks(tasks), durable: Promise.resolve() } : await store.insertTasksVisible(tasks);
    if (results.some((r) => r.kind !== 'inserted')) throw new Error('insert: a task was not inserted');
    // In an object: a promise given as a result would be waited for, and the tasks would go out only once durable.
    return batches.map(() => ({ durable }));
  }, store.concurrentInserts ?? 1);
  const complete = groupCommit(async (completions) => {
    const results = await store.completeAttempts(completions, Date.now());
    const fenced = results.filter((r) => r.kind !== 'applied').length;
    if (fenced > 0) throw new Error(`${fenced} completions were fenced out`);
    return results;
  }, 1);
  return {
    async accept(batch, now, dispatch) {
      const tasks = batch.map((t) =>
        newTask({
          targetUrl: t.targetUrl, method: t.method, headers: t.headers, body: t.body ?? null, idempotencyKey: t.idempotencyKey, dueAt: now,
          // As the hand-off inserts them: already leased to the engine that will send them (`leasedTo`).
          status: 'IN_FLIGHT', leaseOwner: WORKER_ID, leaseExpiresAt: now + LEASE_MS, fencingToken: 1,
        }),
      );
      // Sent once visible; answered once durable.
      const { durable } = await insert(tasks);
      for (const task of tasks) void dispatch(task);
      await durable;
      return () => {};
    },
    async done(task, statusCode, startedAt) {
      // W4's downstream answers 200: anything else is a broken run, not a figure.
      if (statusCode !== 200) throw new Error(`the downstream answered ${statusCode}`);
      const now = Date.now();
      // A success as the engine writes it: SUCCEEDED, kept for the default retention, no cancel alternative.
      await complete({
        tenantId: task.tenantId, taskId: task.taskId, fencingToken: task.fencingToken,
        attempt: {
          tenantId: task.tenantId, taskId: task.taskId, attemptNumber: 1, startedAt, durationMs: now - startedAt,
          responseStatus: statusCode, errorMessage: null, outcome: 'succeeded',
          responseBodySnippet: null, nextAttemptAt: null, workerId: WORKER_ID, delayedBy: null, backoffAt: null,
        },
        next: {
          status: 'SUCCEEDED', attemptNumber: 1, nextAttemptAt: null, runStartedAt: task.runStartedAt, lastDelayMs: 0,
          lastError: null, lastResponseStatus: statusCode, deadLetterReason: null,
          expiresAt: now + DEFAULT_RETENTION.succeededMs,
        },
      });
    },
  };
}

async function dispatch(task) {
  const headers = { ...task.headers, 'idempotency-key': task.idempotencyKey };
  try {
    const startedAt = Date.now();
    const res = await request(task.targetUrl, { method: task.method, headers, body: task.body ?? undefined, dispatcher: agent });
    await res.body.dump();
    await state.done(task, res.statusCode, startedAt);
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
    let sendAfterAnswer;
    try {
      sendAfterAnswer = await state.accept(tasks, now, dispatch);
    } catch (error) {
      console.error(`bare relay: a batch was not accepted: ${error}`);
      res.writeHead(500).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ results: tasks.map((t) => ({ status: 201, task: { idempotencyKey: t.idempotencyKey, nextAttemptAt: t.nextAttemptAt } })) }));
    sendAfterAnswer();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send?.({ event: 'listening', port: /** @type {import('node:net').AddressInfo} */ (server.address()).port }));
process.on('disconnect', () => process.exit(0));
// An exit of its own on SIGTERM (../w4-ceiling.mjs stops it so), so that `node --cpu-prof … w4-ceiling.mjs`, whose flags
// the relay inherits, gets its profile written.
process.on('SIGTERM', () => process.exit(0));
