// BullMQ as a W1 contender: the machine's Redis (REDIS_URL) or another one (W1's own AOF server), its own key prefix,
// workers in the bench process.

import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { inParallel, sleep, waitFor } from '../report.mjs';
import { REDIS_URL, deleteKeys, redisDurability } from '../servers.mjs';
import { callDownstream, cpuMsOfCommand, ownCpuMs } from './call-downstream.mjs';

const PREFIX = 'retryd-bench-w1-bullmq';
const QUEUE = 'w1';
const redisOptions = { maxRetriesPerRequest: null };

const deletePrefix = (redis) => deleteKeys(redis, `${PREFIX}:*`);

/**
 * W1 for BullMQ: `attempts: 5`, `backoff: {type:'exponential', delay: 1}`, worker concurrency 200, `addBulk`, on the
 * Redis at `url` (default REDIS_URL). `aof` (its `appendfsync`): the run on W1's own AOF server (`--redis-aof`), whose
 * id is `bullmq-aof`.
 * The name says the server's persistence as read back from it. CPU: this process and the Redis server's, read with
 * `serverCpuMs` (default: every redis-server process of the machine).
 *
 * @param {{ url?: string | undefined, aof?: string | undefined,
 *   serverCpuMs?: (() => Promise<number>) | undefined }} [options]
 */
export function bullmqContender({ url = REDIS_URL, aof, serverCpuMs = () => cpuMsOfCommand('redis-server') } = {}) {
  // Typed as BullMQ's own connection: its types name the copy of ioredis it bundles, the same client as this one.
  const connect = () => /** @type {import('bullmq').ConnectionOptions} */ (/** @type {unknown} */ (new Redis(url, redisOptions)));
  let redis;
  let queue;
  let worker;
  let durability;
  let running;
  return {
    id: aof === undefined ? 'bullmq' : 'bullmq-aof',
    get name() {
      return `BullMQ 5.81.5 (Redis${durability === undefined ? '' : `, ${durability.persistence}`})`;
    },
    get durability() {
      return durability?.label ?? '';
    },
    /** Dispatch runs in this process; Redis does the queue work. */
    cpuMs: async () => ownCpuMs() + (await serverCpuMs()),
    async setup() {
      redis = connect();
      durability = await redisDurability(redis);
      await deletePrefix(redis);
      queue = new Queue(QUEUE, { connection: connect(), prefix: PREFIX });
      await queue.waitUntilReady();
    },
    async enqueue(tasks, downstreamUrl) {
      const target = `${downstreamUrl}/w1`;
      worker = new Worker(
        QUEUE,
        (job) => callDownstream(target, job.data.key, job.data.body, job.attemptsMade + 1),
        { connection: connect(), prefix: PREFIX, concurrency: 200, autorun: false },
      );
      worker.on('error', (e) => console.error('bullmq worker error:', e.message));
      const opts = { attempts: 5, backoff: { type: 'exponential', delay: 1 } };
      const batches = Math.ceil(tasks.length / 1000);
      const started = performance.now();
      await inParallel(batches, 4, (b) =>
        queue.addBulk(tasks.slice(b * 1000, (b + 1) * 1000).map((t) => ({ name: 'call', data: { key: t.key, body: t.body }, opts }))),
      );
      return { ms: performance.now() - started, note: '' };
    },
    async startWorkers() {
      running = worker.run().catch((e) => console.error('bullmq worker stopped:', e));
      await sleep(0);
    },
    async diagnose() {
      return JSON.stringify(await queue.getJobCounts());
    },
    async waitRecorded(n) {
      /** @type {Record<string, number>} */
      let counts = {};
      await waitFor(
        'BullMQ to complete every job',
        async () => {
          counts = await queue.getJobCounts('completed', 'failed', 'active', 'wait', 'delayed');
          return counts.completed + counts.failed >= n;
        },
        { timeoutMs: 600_000, everyMs: 20 },
      );
      return { at: Date.now(), recorded: counts.completed, ok: counts.completed === n, detail: `${counts.completed} completed, ${counts.failed} failed` };
    },
    async teardown() {
      await worker?.close();
      await running;
      await queue?.obliterate({ force: true }).catch(() => undefined);
      await queue?.close();
      await deletePrefix(redis);
      await redis.quit();
      return {};
    },
  };
}
