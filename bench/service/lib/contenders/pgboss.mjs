// pg-boss as a W1 contender: PostgreSQL at 127.0.0.1:5432 (database `test`, user `root`), its own schema,
// workers in the bench process.

import PgBoss from 'pg-boss';
import { inParallel, waitFor } from '../report.mjs';
import { POSTGRES_URL, postgresDurability, withPostgres } from '../servers.mjs';
import { callDownstream, cpuMsOfCommand, ownCpuMs } from './call-downstream.mjs';

const CONNECTION = POSTGRES_URL;
const SCHEMA = 'retryd_bench_w1_pgboss';
const QUEUE = 'w1';
/** pg-boss's minimum: its worker loop waits this long after every fetch (src/worker.js), jobs or not. */
const POLLING_INTERVAL_SECONDS = 0.5;

const withClient = (fn) => withPostgres(fn, CONNECTION);

/** W1 for pg-boss: `retryLimit: 4`, `retryDelay: 0`, 4 workers × batch 500, `insert`. */
export function pgbossContender() {
  let boss;
  let durability;
  return {
    id: 'pgboss',
    name: 'pg-boss 10.4.2 (PostgreSQL)',
    get durability() {
      return durability?.label ?? '';
    },
    /** Dispatch runs in this process; PostgreSQL does the queue work (all its processes are counted). */
    cpuMs: async () => ownCpuMs() + (await cpuMsOfCommand('postgres')),
    async setup() {
      durability = await postgresDurability(CONNECTION);
      await withClient((c) => c.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`));
      boss = new PgBoss({ connectionString: CONNECTION, schema: SCHEMA, schedule: false });
      boss.on('error', (e) => console.error('pg-boss error:', e.message));
      await boss.start();
      // @ts-expect-error pg-boss 10's types ask for `name` in the options too; it takes the name from the first argument.
      await boss.createQueue(QUEUE, { retryLimit: 4, retryDelay: 0 });
    },
    async enqueue(tasks) {
      const batches = Math.ceil(tasks.length / 1000);
      const started = performance.now();
      await inParallel(batches, 4, (b) =>
        boss.insert(
          tasks.slice(b * 1000, (b + 1) * 1000).map((t) => ({
            name: QUEUE,
            data: { key: t.key, body: t.body },
            retryLimit: 4,
            retryDelay: 0,
          })),
        ),
      );
      return { ms: performance.now() - started, note: '' };
    },
    async startWorkers(downstreamUrl) {
      const target = `${downstreamUrl}/w1`;
      // A batch handler either completes or fails all its jobs, and each job here has its own outcome. So the
      // handler completes the succeeded ones itself (awaited), then throws if any failed: pg-boss then fails the
      // batch, which only touches jobs not completed (failJobsById in src/plans.js), i.e. the failed ones.
      // (Failing inside the handler and returning is wrong: pg-boss's own complete() is not awaited, can run
      // after another worker fetched the retried jobs again, and completes them unfinished.)
      const handler = async (jobs) => {
        const outcomes = await Promise.allSettled(jobs.map((job) => callDownstream(target, job.data.key, job.data.body)));
        const ok = jobs.filter((_, i) => outcomes[i].status === 'fulfilled').map((job) => job.id);
        if (ok.length > 0) await boss.complete(QUEUE, ok);
        if (ok.length < jobs.length) throw new Error(`${jobs.length - ok.length} calls refused by the downstream`);
      };
      for (let w = 0; w < 4; w++) {
        await boss.work(QUEUE, { batchSize: 500, pollingIntervalSeconds: POLLING_INTERVAL_SECONDS }, handler);
      }
    },
    /** Job states, for a run that stalled. */
    async diagnose() {
      const states = await withClient(async (c) => {
        const { rows } = await c.query(`SELECT state, retry_count, count(*)::int AS n FROM ${SCHEMA}.job WHERE name = $1 GROUP BY 1, 2 ORDER BY 1, 2`, [QUEUE]);
        return rows.map((r) => `${r.state}/retry_count=${r.retry_count}: ${r.n}`).join(', ');
      });
      const wip = boss.getWipData?.({ includeInternal: false }) ?? [];
      return `jobs ${states}; workers with jobs: ${JSON.stringify(wip.map((w) => ({ state: w.state, count: w.count, lastError: w.lastError?.message })))}`;
    },
    async waitRecorded(n) {
      /** @type {Record<string, number>} */
      let counts = {};
      await waitFor(
        'pg-boss to complete every job',
        async () => {
          counts = await withClient(async (c) => {
            const { rows } = await c.query(`SELECT state, count(*)::int AS n FROM ${SCHEMA}.job WHERE name = $1 GROUP BY state`, [QUEUE]);
            return Object.fromEntries(rows.map((r) => [r.state, r.n]));
          });
          return (counts.completed ?? 0) + (counts.failed ?? 0) >= n;
        },
        { timeoutMs: 600_000, everyMs: 50 },
      );
      const completed = counts.completed ?? 0;
      return { at: Date.now(), recorded: completed, ok: completed === n, detail: `${completed} completed, ${counts.failed ?? 0} failed` };
    },
    async teardown() {
      await boss?.stop({ graceful: false, wait: true, close: true }).catch((e) => console.error('pg-boss stop:', e.message));
      await withClient((c) => c.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`));
      return {};
    },
  };
}
