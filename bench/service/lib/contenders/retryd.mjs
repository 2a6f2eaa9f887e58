// retryd as a W1 contender: the service in its own process, tasks enqueued through POST /retry-tasks/batch.

import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { distOf, inParallel, serviceBuild, sleep, waitFor } from '../report.mjs';
import { POSTGRES_URL, REDIS_URL, deleteKeys, dropSchema, postgresDurability, redisDurability, schemaSize } from '../servers.mjs';
import { storeServerCpuMs } from './call-downstream.mjs';
import { partitionTasks, partitionsFromEnv } from '../pg-partitioned-tasks.mjs';
import { CLI, PROTECTIONS_OFF_PATCH, serveHasFlag, startRetryd, sqliteStoreSize, targetPath } from '../retryd-service.mjs';

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
 * Where a retryd contender keeps its state: the `--store` argument of the benchmarks.
 *
 * - `sqlite` (default): a fresh database file in a temporary directory; `--sync full|normal`.
 * - `postgres` or `postgres://user@host:port/db`: the schema `retryd_bench_<name>` of that server (default
 *   BENCH_POSTGRES_URL or postgres://root@127.0.0.1:5432/test), dropped before and after.
 * - `redis` or `redis://host:port`: the key prefix `retryd-bench-<name>` (default BENCH_REDIS_URL or
 *   redis://127.0.0.1:6379), deleted before and after.
 *
 * The durability of a networked store is read back from its server (`SHOW synchronous_commit`, `CONFIG GET
 * appendfsync`), not assumed.
 */
export async function retrydStore(kind, { sync = 'full', name = 'bench' } = {}) {
  if (kind === 'sqlite') {
    const dir = await mkdtemp(join(tmpdir(), `retryd-${name}-`));
    const path = join(dir, `${name}.db`);
    const full = sync === 'full';
    // Removed at exit too, so that an interrupted W2 run does not leave a 700 MB database behind.
    const removeAtExit = () => rmSync(dir, { recursive: true, force: true });
    process.once('exit', removeAtExit);
    return {
      kind: 'sqlite',
      url: `sqlite:${path}`,
      sync,
      label: `SQLite, synchronous=${full ? 'FULL' : 'NORMAL'}`,
      durability: full
        ? 'durable: WAL fsynced at every commit (synchronous=FULL)'
        : 'NOT power-loss durable: synchronous=NORMAL (safe against kill -9; the last commits may be lost on power loss)',
      size: () => sqliteStoreSize(path),
      cleanup: async () => {
        process.off('exit', removeAtExit);
        await rm(dir, { recursive: true, force: true });
      },
    };
  }
  if (kind === 'postgres' || /^postgres(ql)?:\/\//.test(kind)) {
    const base = kind === 'postgres' ? POSTGRES_URL : kind;
    const schema = `retryd_bench_${name.replace(/[^a-z0-9]/gi, '_')}`;
    const durability = await postgresDurability(base);
    await dropSchema(schema, base);
    const url = new URL(base);
    url.searchParams.set('schema', schema);
    // The experiment of bench/service/pg-partitions.mjs: the tasks table hash-partitioned by tenant.
    const partitions = partitionsFromEnv();
    if (partitions !== undefined) await partitionTasks({ storeUrl: url.toString(), schema, partitions, base });
    return {
      kind: 'postgres',
      url: url.toString(),
      sync,
      label: `PostgreSQL, schema ${schema}${partitions === undefined ? '' : `, tasks hash-partitioned by tenant_id into ${partitions}`}`,
      durability: durability.label,
      size: async () => ({ total: await schemaSize(schema, base) }),
      cleanup: () => dropSchema(schema, base),
    };
  }
  if (kind === 'redis' || /^rediss?:\/\//.test(kind)) {
    const base = kind === 'redis' ? REDIS_URL : kind;
    const prefix = `retryd-bench-${name.replace(/[^a-z0-9._-]/gi, '-')}`;
    const redis = new Redis(base, { maxRetriesPerRequest: null });
    const durability = await redisDurability(redis);
    // Keys are `{prefix:partition}:…` and `prefix:…` (see packages/server/src/backends/redis/keys.ts).
    await deleteKeys(redis, `*${prefix}*`);
    await redis.quit();
    const url = new URL(base);
    url.searchParams.set('prefix', prefix);
    return {
      kind: 'redis',
      url: url.toString(),
      sync,
      label: `Redis, ${durability.persistence}, prefix ${prefix}`,
      durability: durability.label,
      size: async () => {
        const r = new Redis(base);
        try {
          const used = /used_memory:(\d+)/.exec(await r.info('memory'))?.[1];
          return { total: Number(used), note: 'used_memory of the whole Redis server' };
        } finally {
          await r.quit();
        }
      },
      cleanup: async () => {
        const r = new Redis(base, { maxRetriesPerRequest: null });
        try {
          await deleteKeys(r, `*${prefix}*`);
        } finally {
          await r.quit();
        }
      },
    };
  }
  throw new Error(`--store must be sqlite, postgres[://…] or redis[://…]; got ${kind}`);
}

/**
 * W1 for retryd: tasks are enqueued to become due all at once, after the whole enqueue, like a full peer queue.
 * With `instances` > 1, that many `retryd serve` processes share the store (the enqueue goes through the first;
 * every instance's engine takes tasks from the store) and CPU is summed over them.
 *
 * `cli` runs another build (default {@link CLI}); `role: 'before'` marks it as the build before a change (the
 * benchmarks' `--baseline`): its id ends in `-before`, its name says `(before)`, and it keeps its own schema or
 * key prefix, so the two builds never share a store. `role: 'control'` is the current build once more (W1's
 * `--control`, an A/A pair): its id ends in `-control`, its name says `(control)`, its store is its own too.
 *
 * Per-target protection (issue 9), on builds that have it: `protection: 'defaults'` (the default) runs the service
 * as it starts, with the protections a user gets without asking; `protection: 'off'` starts it with `--protection
 * off`, or on a build without that flag (an older `--baseline`) turns the downstream target's protections off with
 * `PUT /targets/{origin}` before the enqueue, or on a build without `/targets` either runs it as it is; the
 * contender's name says which. An off contender's id (and `pairId`) ends in `-protection-off`; `protectionPairId`
 * pairs the current build's runs of one configuration with the protections on and off.
 *
 * `grpc`: W1 over gRPC (`w1.mjs --downstream grpc`): each task calls `/bench.W1/Charge` of the gRPC downstream, its
 * body the same JSON's bytes in base64; `-grpc` follows the store in its ids (`retryd-sqlite-full-grpc`).
 *
 * `aof` (its `appendfsync`): the configuration on W1's own Redis with AOF (`--redis-aof`; `storeKind` is its URL): `-aof` follows the
 * store in its ids (`retryd-redis-aof`, `retryd-redis-aof-protection-off`). `serverCpuMs` reads the CPU of the store's
 * server (default: every process of its kind, see {@link storeServerCpuMs}; W1's own server: its pid alone).
 *
 * @param {{ storeKind?: string | undefined, sync?: string | undefined, concurrency?: number | undefined,
 *   nodeArgs?: string[] | undefined, instances?: number | undefined, cli?: string | undefined,
 *   role?: string | undefined, protection?: string | undefined, aof?: string | undefined, grpc?: boolean | undefined,
 *   serverCpuMs?: (() => Promise<number | undefined>) | undefined }} options
 */
export function retrydContender({
  storeKind = 'sqlite',
  sync = 'full',
  concurrency,
  nodeArgs = [],
  instances = 1,
  cli = CLI,
  role = 'after',
  protection = 'defaults',
  aof,
  grpc = false,
  serverCpuMs,
}) {
  if (!['defaults', 'off'].includes(protection)) throw new Error(`protection must be defaults or off, got ${protection}`);
  let store;
  let service;
  let services = [];
  let dueAt;
  let build;
  // Another run of a configuration, beside the current build's: the build before (--baseline) or a control.
  const twin = role === 'before' || role === 'control';
  const off = protection === 'off';
  const offByFlag = off && serveHasFlag(cli, '--protection');
  /** What was done about the target's protection, for the contender's name (set at the enqueue without the flag). */
  let protectionNote = off ? (offByFlag ? '--protection off' : "target's protections off") : 'default protections';
  const base = `${storeKind === 'sqlite' ? `retryd-sqlite-${sync}` : `retryd-${storeKind.replace(/:.*$/, '')}`}${aof === undefined ? '' : '-aof'}${grpc ? '-grpc' : ''}${instances > 1 ? `-x${instances}` : ''}`;
  const pairId = off ? `${base}-protection-off` : base;
  return {
    id: twin ? `${pairId}-${role}` : pairId,
    role,
    /** The id of this configuration whatever the build: pairs a `--baseline` contender with the current one. */
    pairId,
    /** Pairs the current build's runs of one configuration with the protections on and off. */
    protectionPairId: twin ? undefined : base,
    protection,
    cli,
    get name() {
      const extra = [grpc ? 'over gRPC' : '', instances > 1 ? `${instances} instances` : '', protectionNote].filter((x) => x !== '').join(', ');
      return `retryd${twin ? ` (${role})` : ''} (${store?.label ?? storeKind}${extra === '' ? '' : `, ${extra}`})`;
    },
    get durability() {
      if (store === undefined) return '';
      return store.kind === 'sqlite' && service?.syncConfirmed === false
        ? `${store.durability} (as asked; this build does not report it)`
        : store.durability;
    },
    /** Hash of the build's dist/ when this run started (colleagues may rebuild it between runs). */
    get build() {
      return build;
    },
    get pid() {
      return service?.pid;
    },
    /** Where CPU is spent during dispatch: the service processes (plus the server of a networked store, not counted here). */
    cpuMs: async () => (await Promise.all(services.map((s) => s.cpuMs()))).reduce((a, b) => a + b, 0),
    /**
     * The CPU of the store's server during dispatch (every `postgres` or `redis-server` process on the machine, other
     * users of that server counting too, unless `serverCpuMs` says otherwise), reported apart: on a 2-core machine the
     * server's work per attempt competes with the service's. Undefined for SQLite, which runs inside the service.
     */
    storeCpuMs: async () => (store === undefined ? undefined : (serverCpuMs ?? (() => storeServerCpuMs(store.kind)))()),
    async setup() {
      build = serviceBuild(distOf(cli)).hash;
      store = await retrydStore(storeKind, { sync, name: twin ? `${role}-w1` : 'w1' });
      services = [];
      const extraArgs = offByFlag ? ['--protection', 'off'] : [];
      for (let i = 0; i < instances; i++) services.push(await startRetryd({ cli, store: store.url, sync, concurrency, nodeArgs, extraArgs }));
      service = services[0];
    },
    async enqueue(tasks, downstreamUrl) {
      // All tasks become due at `dueAt`, after the enqueue (at ≥ 4,000 tasks/s), so the dispatch figure is not
      // mixed with the enqueue, as with the peers, whose workers start once everything is enqueued.
      dueAt = Date.now() + 2_000 + Math.ceil(tasks.length * 0.25);
      const target = grpc ? `${downstreamUrl}/bench.W1/Charge` : `${downstreamUrl}/w1`;
      // A gRPC downstream's URL is its target key already (`URL.origin` is "null" for grpc:).
      const origin = grpc ? downstreamUrl : new URL(downstreamUrl).origin;
      if (off && !offByFlag && !(await service.hasTargets())) protectionNote = 'no /targets in this build';
      else if (off && !offByFlag) await service.call('PUT', targetPath(origin), PROTECTIONS_OFF_PATCH);
      const batches = Math.ceil(tasks.length / 1000);
      const started = performance.now();
      await inParallel(batches, 4, (b) =>
        service.enqueueBatch(
          tasks.slice(b * 1000, (b + 1) * 1000).map((t) => ({
            targetUrl: target,
            method: 'POST',
            ...(grpc ? { body: Buffer.from(t.body).toString('base64') } : { headers: { 'content-type': 'application/json' }, body: t.body }),
            idempotencyKey: t.key,
            policy: W1_POLICY,
            notBefore: dueAt,
          })),
          // As a caller loading a backlog would ask: ids back, not 1,000 whole tasks (RFC 7240).
          { minimal: true },
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
    async waitRecorded(n, settled) {
      await waitFor(
        'retryd to record every task',
        async () => !(await service.anyWithStatus('PENDING')) && !(await service.anyWithStatus('IN_FLIGHT')),
        { timeoutMs: 600_000, everyMs: 20 },
      );
      const at = Date.now();
      await settled?.();
      const succeeded = await service.countStatus('SUCCEEDED');
      return { at, recorded: succeeded, ok: succeeded === n, detail: `${succeeded} SUCCEEDED in the store` };
    },
    async teardown() {
      const size = await store?.size();
      await Promise.all(services.map((s) => s.stop()));
      await store?.cleanup();
      return { storeBytes: size?.total };
    },
  };
}
