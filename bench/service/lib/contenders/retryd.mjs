// retryd as a W1 contender: the service in its own process, tasks enqueued through POST /retry-tasks/batch.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inParallel, serviceBuild, sleep, waitFor } from '../report.mjs';
import { startRetryd, sqliteStoreSize } from '../retryd-service.mjs';

/** The W1 policy (WORKLOADS.md): exponential, 1 ms initial, ×2, 10 ms max, 5 attempts, full jitter, no budget. */
export const W1_POLICY = Object.freeze({
  maxAttempts: 5,
  backoffType: 'EXPONENTIAL',
  initialDelayMs: 1,
  multiplier: 2,
  maxDelayMs: 10,
  jitterType: 'FULL',
});

/**
 * Where a retryd contender keeps its state. `kind` is the `--store` argument of the benchmark: today `sqlite`;
 * issue 4 adds `postgres://…` and `redis://…` here (a URL, the durability read back from the server —
 * `SHOW synchronous_commit` / `CONFIG GET appendfsync` — and a cleanup of its schema or key prefix).
 */
export async function retrydStore(kind, { sync = 'full', name = 'bench' } = {}) {
  if (kind === 'sqlite') {
    const dir = await mkdtemp(join(tmpdir(), `retryd-${name}-`));
    const path = join(dir, `${name}.db`);
    const full = sync === 'full';
    return {
      url: `sqlite:${path}`,
      sync,
      label: `SQLite, synchronous=${full ? 'FULL' : 'NORMAL'}`,
      durability: full
        ? 'durable: WAL fsynced at every commit (synchronous=FULL)'
        : 'NOT power-loss durable: synchronous=NORMAL (safe against kill -9; the last commits may be lost on power loss)',
      size: () => sqliteStoreSize(path),
      cleanup: () => rm(dir, { recursive: true, force: true }),
    };
  }
  throw new Error(
    `--store ${kind}: not available yet. The PostgreSQL and Redis stores arrive with issue 4; add them in retrydStore() ` +
      '(bench/service/lib/contenders/retryd.mjs) with their durability read back from the server.',
  );
}

/** W1 for retryd: tasks are enqueued to become due all at once, after the whole enqueue, like a full peer queue. */
export function retrydContender({ storeKind = 'sqlite', sync = 'full', concurrency, nodeArgs = [] }) {
  let store;
  let service;
  let dueAt;
  let build;
  return {
    id: `retryd-${storeKind}-${sync}`,
    get name() {
      return `retryd (${store?.label ?? storeKind})`;
    },
    get durability() {
      return store?.durability ?? '';
    },
    /** Hash of packages/server/dist when this run started (colleagues may rebuild it between runs). */
    get build() {
      return build;
    },
    get pid() {
      return service?.pid;
    },
    /** Where CPU is spent during dispatch: the service process (the store is embedded). */
    cpuMs: () => service.cpuMs(),
    async setup() {
      build = serviceBuild().hash;
      store = await retrydStore(storeKind, { sync, name: 'w1' });
      service = await startRetryd({ store: store.url, sync, concurrency, nodeArgs });
    },
    async enqueue(tasks, downstreamUrl) {
      // All tasks become due at `dueAt`, after the enqueue (at ≥ 4,000 tasks/s), so the dispatch figure is not
      // mixed with the enqueue, as with the peers, whose workers start once everything is enqueued.
      dueAt = Date.now() + 2_000 + Math.ceil(tasks.length * 0.25);
      const target = `${downstreamUrl}/w1`;
      const batches = Math.ceil(tasks.length / 1000);
      const started = performance.now();
      await inParallel(batches, 4, (b) =>
        service.enqueueBatch(
          tasks.slice(b * 1000, (b + 1) * 1000).map((t) => ({
            targetUrl: target,
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: t.body,
            idempotencyKey: t.key,
            policy: W1_POLICY,
            notBefore: dueAt,
          })),
        ),
      );
      const ms = performance.now() - started;
      const overlap = Date.now() > dueAt;
      return { ms, note: overlap ? 'WARNING: the enqueue ended after the tasks became due (dispatch overlapped it)' : '' };
    },
    async startWorkers() {
      // The service's engine runs all along; it dispatches at `dueAt` by itself.
      const wait = dueAt - Date.now() - 50;
      if (wait > 0) await sleep(wait);
    },
    async diagnose() {
      const counts = {};
      for (const status of ['PENDING', 'IN_FLIGHT', 'SUCCEEDED', 'FAILED', 'EXHAUSTED']) counts[status] = await service.countStatus(status);
      const errors = service.logs.filter((l) => l.level >= 40).slice(0, 3);
      return `${JSON.stringify(counts)}; warnings/errors logged: ${JSON.stringify(errors)}`;
    },
    async waitRecorded(n) {
      await waitFor(
        'retryd to record every task',
        async () => !(await service.anyWithStatus('PENDING')) && !(await service.anyWithStatus('IN_FLIGHT')),
        { timeoutMs: 600_000, everyMs: 20 },
      );
      const at = Date.now();
      const succeeded = await service.countStatus('SUCCEEDED');
      return { at, recorded: succeeded, ok: succeeded === n, detail: `${succeeded} SUCCEEDED in the store` };
    },
    async teardown() {
      const size = await store?.size();
      await service?.stop();
      await store?.cleanup();
      return { storeBytes: size?.total };
    },
  };
}
