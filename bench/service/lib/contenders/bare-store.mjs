// A ceiling of W1 with durable state: the bare loop's requests, with W1's store work as the engine does it, and
// nothing else (no HTTP API, no policy, no engine, no metrics), on any of retryd's stores. Two forms: the store's
// calls on the event loop that sends the requests (as retryd runs them), and (SQLite only) the store on a thread of
// its own (worker_threads, its calls sent as messages: the cost of copying tasks and completions between threads
// counts).

import { Worker } from 'node:worker_threads';
import { Agent, request } from 'undici';
import { openBuiltStore } from '../built-store.mjs';
import { messageCalls } from '../message-calls.mjs';
import { builtTaskMaker } from '../new-task.mjs';
import { CURRENT_DIST, STORE_NAMES, bareStoreId } from '../report.mjs';
import { ownCpuMs, storeServerCpuMs } from './call-downstream.mjs';
import { W1_POLICY, retrydStore } from './retryd.mjs';

/** The service's default retention of a succeeded task (`DEFAULT_RETENTION.succeededMs`): a final outcome's expiresAt. */
const RETENTION_MS = 7 * 86_400_000;

/** W1's policy inline, as the retryd contender enqueues its tasks (no policy named). */
const INLINE_POLICY = Object.freeze({ policyId: null, policy: W1_POLICY });

const CONCURRENCY = 200;
const CLAIM_SIZE = 128;
const LEASE = { leaseMs: 600_000, workerId: 'bare-store' };

/**
 * The store's port as the loop calls it (`insertTasks`, `claimDue`, `completeAndClaim`, `close`), of a fresh store
 * at `place`, migrated: the store itself, or calls to a worker thread holding it (`threaded`).
 */
async function storeCalls(place, threaded) {
  if (!threaded) return openBuiltStore(CURRENT_DIST, place);
  const worker = new Worker(new URL('./bare-store-worker.mjs', import.meta.url), { workerData: { dist: CURRENT_DIST, place: { kind: place.kind, url: place.url } } });
  const { call, receive, failAll } = messageCalls((message) => worker.postMessage(message));
  worker.on('message', receive);
  worker.on('error', failAll);
  await call('open');
  return {
    insertTasks: (tasks) => call('insertTasks', tasks),
    claimDue: (now, options) => call('claimDue', now, options),
    completeAndClaim: (completions, now, options) => call('completeAndClaim', completions, now, options),
    close: async () => {
      await call('close');
      await worker.terminate();
    },
  };
}

/** The end of a claimed task's attempt as the engine writes it: 2xx succeeds, anything else is retried at once. */
function completionOf(task, statusCode, startedAt, now) {
  const number = task.attemptNumber + 1;
  const ok = statusCode >= 200 && statusCode < 300;
  const attempt = {
    tenantId: task.tenantId, taskId: task.taskId, attemptNumber: number, startedAt, durationMs: now - startedAt,
    responseStatus: statusCode, errorMessage: ok ? null : `HTTP ${statusCode}`, outcome: ok ? 'succeeded' : 'retry_scheduled',
    responseBodySnippet: null, nextAttemptAt: ok ? null : now, workerId: LEASE.workerId,
    delayedBy: null, backoffAt: null,
  };
  const next = {
    status: ok ? 'SUCCEEDED' : 'PENDING', attemptNumber: number, nextAttemptAt: ok ? null : now, runStartedAt: task.runStartedAt,
    lastDelayMs: 0, lastError: ok ? null : `HTTP ${statusCode}`, lastResponseStatus: statusCode, deadLetterReason: null,
    // As the engine dates a final outcome (the default retention of a success): the ceiling does the same writes.
    expiresAt: ok ? now + RETENTION_MS : null,
  };
  return {
    tenantId: task.tenantId, taskId: task.taskId, fencingToken: task.fencingToken, attempt, next,
    ifCancelRequested: { ...next, status: 'CANCELLED', nextAttemptAt: null, expiresAt: now + RETENTION_MS },
    attemptIfCancelRequested: { ...attempt, outcome: 'cancelled', nextAttemptAt: null },
  };
}

/**
 * A reference, not a peer: W1 on the current build's store of `storeKind` (SQLite: synchronous=FULL; PostgreSQL and
 * Redis: the servers as they run, their durability read back), in the process it runs in (a process of its own in
 * w1.mjs: see in-child.mjs). The tasks are inserted as the service inserts W1's (1,000 a call, each with W1's policy
 * inline, as the retryd contender enqueues them: the policy's bytes are in every row a claim reads and an update
 * rewrites); then one loop claims (up to 128 at a time, 200 in flight, as the bare loop keeps), POSTs each task
 * (undici, keep-alive, its idempotency key), and writes each turn's results with the next claim in one
 * `completeAndClaim` (group commit) as soon as the previous write has ended. What a durable dispatcher costs the
 * machine before the rest of a service; with `threaded`, what it would cost with the store's work on a second thread.
 *
 * `url` and `aof` (its `appendfsync`): on W1's own Redis with AOF (`--redis-aof`), id `bare-store-redis-aof`;
 * `serverCpuMs` reads its server's CPU (default: every process of the store's kind, see {@link storeServerCpuMs}).
 *
 * @param {{ threaded?: boolean | undefined, storeKind?: string | undefined, url?: string | undefined,
 *   aof?: string | undefined, serverCpuMs?: (() => Promise<number | undefined>) | undefined }} [options]
 */
export function bareStoreContender({ threaded = false, storeKind = 'sqlite', url, aof, serverCpuMs = () => storeServerCpuMs(storeKind) } = {}) {
  if (threaded && storeKind !== 'sqlite') throw new Error('bare-store-thread runs on SQLite only');
  if (aof !== undefined && (storeKind !== 'redis' || url === undefined)) throw new Error('bare-store: aof runs on a Redis at a url');
  const storeName = STORE_NAMES[storeKind];
  if (storeName === undefined) throw new Error(`bare-store: no store ${storeKind}`);
  let place;
  let store;
  let agent;
  let tasks = [];
  let done;
  let finishedAt = 0;
  return {
    id: `${bareStoreId(storeKind, threaded)}${aof === undefined ? '' : '-aof'}`,
    name: threaded
      ? 'reference: bare undici loop, SQLite store on its own thread'
      : `reference: bare undici loop, ${storeName} store${aof === undefined ? '' : ` (AOF ${aof})`} on the same thread`,
    // SQLite's is known before the store opens; a server's is read back from it at setup (see retrydStore).
    durability: storeKind === 'sqlite' ? 'durable: WAL fsynced at every commit (synchronous=FULL)' : undefined,
    cpuMs: async () => ownCpuMs(),
    storeCpuMs: storeKind === 'sqlite' ? undefined : serverCpuMs,
    async setup() {
      agent = new Agent({ connections: CONCURRENCY });
      place = await retrydStore(url ?? storeKind, { name: bareStoreId(storeKind, threaded) });
      this.durability = place.durability;
      store = await storeCalls(place, threaded);
    },
    async enqueue(list, downstreamUrl) {
      const newTask = await builtTaskMaker(CURRENT_DIST);
      const targetUrl = `${downstreamUrl}/w1`;
      const t0 = performance.now();
      // Due a moment after the enqueue, as W1 enqueues retryd's tasks: none is claimed before the dispatch starts.
      const dueAt = Date.now();
      for (let from = 0; from < list.length; from += 1_000) {
        const batch = list.slice(from, from + 1_000).map((t) => newTask({ idempotencyKey: t.key, body: t.body, targetUrl, dueAt, ...INLINE_POLICY }));
        const results = await store.insertTasks(batch);
        if (results.some((r) => r.kind !== 'inserted')) throw new Error('insertTasks: a task was not inserted');
      }
      tasks = list;
      return { ms: performance.now() - t0 };
    },
    async startWorkers() {
      let inFlight = 0;
      let pending = [];
      let writing = false;
      let scheduled = false;
      let succeeded = 0;
      let failed;
      let finish;
      done = new Promise((resolve, reject) => {
        finish = resolve;
        failed = reject;
      });
      const launch = (claimed) => {
        for (const task of claimed) {
          inFlight++;
          void attempt(task).catch(failed);
        }
      };
      const attempt = async (task) => {
        const startedAt = Date.now();
        const headers = { 'content-type': 'application/json', 'idempotency-key': task.idempotencyKey };
        const res = await request(task.targetUrl, { method: 'POST', dispatcher: agent, headers, body: task.body });
        await res.body.text();
        inFlight--;
        pending.push(completionOf(task, res.statusCode, startedAt, Date.now()));
        schedule();
      };
      const schedule = () => {
        if (writing || scheduled) return;
        scheduled = true;
        setImmediate(() => {
          scheduled = false;
          void write().catch(failed);
        });
      };
      const write = async () => {
        writing = true;
        const batch = pending;
        pending = [];
        const limit = Math.max(1, Math.min(CLAIM_SIZE, CONCURRENCY - inFlight));
        const { results, claimed } = await store.completeAndClaim(batch, Date.now(), { ...LEASE, limit });
        for (const r of results) {
          if (r.kind !== 'applied') throw new Error(`a completion was ${r.kind}`);
          if (r.status === 'SUCCEEDED') succeeded++;
        }
        writing = false;
        launch(claimed);
        if (succeeded === tasks.length) {
          finishedAt = Date.now();
          finish();
        } else if (pending.length > 0) schedule();
        else if (inFlight === 0) throw new Error(`nothing in flight and nothing claimed with ${succeeded} of ${tasks.length} done`);
      };
      // The first claims fill the loop; from then on every claim rides with a write.
      while (inFlight < CONCURRENCY) {
        const claimed = await store.claimDue(Date.now(), { ...LEASE, limit: Math.min(CLAIM_SIZE, CONCURRENCY - inFlight) });
        if (claimed.length === 0) break;
        launch(claimed);
      }
    },
    async waitRecorded(n) {
      await done;
      return { at: finishedAt, recorded: n, ok: true, detail: `${n} SUCCEEDED in the store` };
    },
    async teardown() {
      await agent?.close();
      await store?.close();
      await place?.cleanup();
      return {};
    },
  };
}
