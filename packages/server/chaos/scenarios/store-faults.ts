import { readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { attemptsOf, audit, type Acknowledged } from '../audit.js';
import { ChaosDownstream } from '../chaos-downstream.js';
import { enqueue, keys, logLine, openAuditStore, serviceArgs, startServiceProcess, stop, waitSettled, workerIdOf, type ServiceProcess } from '../chaos-kit.js';
import { waitFor } from '../../test/wait-for.js';
import { OwnPostgres, mountTmpfs } from '../own-servers.js';
import { ownDatabase, ownRedis } from '../store-fixtures.js';
import { checks, type ChaosContext, type Scenario, type ScenarioOutcome } from '../scenario.js';

// Faults of the store under a running service: PostgreSQL connections cut and the server restarted, Redis crashed
// and restarted, two processes on one SQLite file, and a disk that fills up.

/**
 * Runs flaky tasks (each key fails once, so every task writes twice) on `storeUrl` through `instances` services,
 * applies `fault` once a third of the keys are processed, enqueues as many again once it is over, and audits.
 */
async function faultMidRun(
  ctx: ChaosContext,
  storeUrl: string,
  fault: (services: ServiceProcess[], target: string) => Promise<string>,
  instances = 1,
): Promise<ScenarioOutcome> {
  const { failed, check } = checks();
  const downstream = new ChaosDownstream({ misbehave: 'fail' });
  const target = await downstream.start();
  ctx.defer(() => downstream.close());
  const services = await Promise.all(Array.from({ length: instances }, () => startServiceProcess(serviceArgs(storeUrl))));
  for (const service of services) ctx.defer(() => stop(service));
  const before = await enqueue(services[0]!.url, target, keys('before', ctx.tasks));
  await waitFor('a third of the keys processed', () => downstream.processed.size >= Math.ceil(ctx.tasks / 3), 60_000);
  const what = await fault(services, target);
  // After the fault, through every instance: the API answers again (a refused batch is sent again, as a client would).
  const after: Acknowledged[] = [];
  for (const [i, service] of services.entries()) {
    const batch = keys(`after-${i}`, Math.ceil(ctx.tasks / instances));
    await waitFor('the API to accept tasks again', async () => {
      const result = await enqueue(service.url, target, batch);
      after.push(...result.acknowledged);
      return result.refused.size === 0;
    }, 60_000);
  }
  const acknowledged = [...before.acknowledged, ...after];
  const store = await openAuditStore(storeUrl);
  ctx.defer(() => store.close());
  await waitSettled(store, acknowledged.length, 90_000);
  for (const service of services) check(service.child.exitCode === null, `an instance exited (${service.child.exitCode}) during the fault`);
  const errors = services.flatMap((service) => service.logs.filter((line) => line.event === 'store_error' || line.event === 'engine_error'));
  const report = await audit(store, acknowledged, downstream);
  return { audit: report, failed, notes: `${what}; ${errors.length} store/engine error lines logged meanwhile, then recovered` };
}

const terminateBackends: Scenario = {
  id: 'postgres-terminate-backend',
  store: 'PostgreSQL',
  fault: "`pg_terminate_backend` of every connection of the service's database, twice, mid-run",
  async run(ctx) {
    const db = await ownDatabase(ctx);
    return faultMidRun(ctx, db.url, async () => {
      const first = await db.terminateBackends();
      await new Promise((resolve) => setTimeout(resolve, 300));
      const second = await db.terminateBackends();
      return `${first} then ${second} connections terminated`;
    });
  },
};

/** A server of the suite's own that the scenario restarts mid-run. */
function restartMidRun(id: string, store: string, fault: string, open: (ctx: ChaosContext) => Promise<{ url: string; restart(): Promise<void> }>): Scenario {
  return {
    id,
    store,
    fault,
    async run(ctx) {
      const server = await open(ctx);
      return faultMidRun(ctx, server.url, async () => {
        const started = Date.now();
        await server.restart();
        return `the server was back in ${Date.now() - started} ms`;
      });
    },
  };
}

const restartPostgres = restartMidRun('postgres-restart', 'PostgreSQL (own instance)', 'PostgreSQL restarted (`pg_ctl restart -m fast`) mid-run', async (ctx) => {
  const server = new OwnPostgres(await ctx.tempDir());
  await server.start();
  ctx.defer(() => server.stop());
  return server;
});

const restartRedis = restartMidRun('redis-restart', 'Redis (own, AOF always)', '`kill -9` of redis-server mid-run, restarted on its AOF', ownRedis);

const twoOnSqlite: Scenario = {
  id: 'sqlite-two-processes',
  store: 'SQLite',
  fault: 'two service processes on one SQLite file',
  async run(ctx) {
    const storeUrl = `sqlite:${await ctx.tempDir()}/retryd.db`;
    let running: ServiceProcess[] = [];
    let target = '';
    const outcome = await faultMidRun(
      ctx,
      storeUrl,
      async (services, url) => {
        running = services;
        target = url;
        return 'both instances claiming from the one file';
      },
      2,
    );
    const workers = running.map(workerIdOf);
    // Both did work: their worker ids both appear in the attempt logs. The two race for every claim, and on a busy
    // machine one may win them all; an instance not seen yet is given tasks of its own (an enqueue through it wakes
    // it at once), five at a time, until it has recorded an attempt. Past the deadline it cannot claim: a failure.
    const store = await openAuditStore(storeUrl);
    try {
      const seen = new Set<string>();
      for (const task of (await store.listTasks({ tenantId: 'default', limit: 200 })).items) {
        for (const attempt of await attemptsOf(store, task.taskId)) seen.add(attempt.workerId);
      }
      for (const [i, id] of workers.entries()) {
        let unattempted: string[] = [];
        let round = 0;
        const attempted = async (): Promise<boolean> => {
          if (unattempted.length === 0) {
            const sent = await enqueue((running[i] as ServiceProcess).url, target, keys(`own-work-${i}-${round++}`, 5));
            unattempted = sent.acknowledged.map((task) => task.taskId);
          }
          const left: string[] = [];
          for (const taskId of unattempted) {
            const attempts = await attemptsOf(store, taskId);
            for (const attempt of attempts) seen.add(attempt.workerId);
            if (attempts.length === 0) left.push(taskId);
          }
          unattempted = left;
          return seen.has(id);
        };
        if (!seen.has(id)) await waitFor(`instance ${id} to record an attempt`, attempted, 30_000).catch(() => undefined);
      }
      const idle = workers.filter((id) => !seen.has(id));
      if (idle.length > 0) outcome.failed.push(`instance ${idle.join(', ')} recorded no attempt`);
    } finally {
      await store.close();
    }
    return outcome;
  },
};

const diskFull: Scenario = {
  id: 'disk-full',
  store: 'SQLite (8 MiB tmpfs)',
  fault: 'the disk fills up mid-run, then space returns',
  async run(ctx) {
    const { failed, check } = checks();
    const dir = await ctx.tempDir();
    const unmount = await mountTmpfs(dir, 8);
    ctx.defer(unmount);
    const dbFile = join(dir, 'retryd.db');
    const storeUrl = `sqlite:${dbFile}`;
    // The instance stops itself with an answer in hand; the disk fills meanwhile, so that answer's write meets it.
    const downstream = new ChaosDownstream({ misbehave: 'fail' });
    const target = await downstream.start();
    ctx.defer(() => downstream.close());
    const service = await startServiceProcess(serviceArgs(storeUrl), { RETRYD_FAULT_PAUSE_AT: 'after-response' });
    ctx.defer(() => stop(service));
    const before = await enqueue(service.url, target, keys('before', ctx.tasks), { delayMs: 300 });
    await logLine(service, 'fault_pause');

    // Fill every free byte: 1 MiB at a time, then smaller, until the file system refuses.
    const filler = join(dir, 'filler');
    await writeFile(filler, '');
    for (let chunk = 1 << 20; chunk >= 512; chunk >>= 1) {
      for (;;) {
        const written = await writeFile(filler, Buffer.alloc(chunk), { flag: 'a' }).then(() => true, () => false);
        if (!written) break;
      }
    }
    service.child.kill('SIGCONT');
    const writeError = await logLine(service, 'engine_error').catch(() => undefined);
    check(writeError !== undefined, 'the engine wrote its results on a full disk without an error');
    const during = await enqueue(service.url, target, keys('during', Math.max(ctx.tasks, 50)));
    const statuses = [...during.refused.keys()];
    check(statuses.length > 0 && statuses.every((status) => status === 503), `a full disk was answered ${statuses.join(', ') || 'with acceptance'}, not 503`);
    const problemBody = await fetch(`${service.url}/retry-tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ targetUrl: `${target}/charge`, method: 'POST', idempotencyKey: 'during-single', body: {} }),
    }).then(async (res) => ({ status: res.status, problem: (await res.json()) as { code?: string } }));
    check(problemBody.status === 503 && problemBody.problem.code === 'STORE_UNAVAILABLE', `a single enqueue on a full disk got ${problemBody.status} ${problemBody.problem.code ?? ''}`);
    // A body over 64 KiB goes to the blob directory first: its write meets the full disk before the task's does.
    const largeBody = await fetch(`${service.url}/retry-tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ targetUrl: `${target}/charge`, method: 'POST', idempotencyKey: 'during-large', body: { pad: 'x'.repeat(100_000) } }),
    });
    await largeBody.body?.cancel();
    check(largeBody.status === 503, `an enqueue with a 100 KB body on a full disk got ${largeBody.status}, not 503`);

    await rm(filler);
    const after = await enqueue(service.url, target, keys('after', ctx.tasks));
    check(after.refused.size === 0, `after space returned, enqueues were still refused: ${[...after.refused].join(', ')}`);
    const acknowledged = [...before.acknowledged, ...during.acknowledged, ...after.acknowledged];
    const store = await openAuditStore(storeUrl);
    ctx.defer(() => store.close());
    await waitSettled(store, acknowledged.length, 60_000);
    check(service.child.exitCode === null, `the service exited (${service.child.exitCode}) on the full disk`);
    // Nothing half-written: the file is whole, and holds exactly the acknowledged tasks.
    const db = new Database(dbFile, { readonly: true });
    const integrity = (db.pragma('integrity_check') as { integrity_check: string }[])[0]?.integrity_check;
    db.close();
    check(integrity === 'ok', `integrity_check: ${integrity}`);
    const blobFiles = await readdir(`${dbFile}.blobs`, { recursive: true }).catch(() => []);
    const leftovers = blobFiles.filter((name) => name.endsWith('.tmp'));
    check(leftovers.length === 0, `half-written blobs left behind: ${leftovers.join(', ')}`);
    const total = Object.values(await store.admin.countByStatus()).reduce((a, b) => a + b, 0);
    check(total === acknowledged.length, `${total} tasks in the store, ${acknowledged.length} acknowledged`);
    const report = await audit(store, acknowledged, downstream);
    return {
      audit: report,
      failed,
      notes: `while full: the engine's writes failed (${String((writeError?.err as { code?: string } | undefined)?.code ?? 'no error')}) and were retried; a 100 KB body (a blob) got ${largeBody.status}, no half-written blob left; ${during.acknowledged.length} acknowledged, ${[...during.refused].map(([status, n]) => `${n} refused ${status}`).join(', ')}; the service stayed up; integrity_check ${integrity}; every task written before and after accounted for`,
    };
  },
};

/** The store scenarios. */
export const STORE_SCENARIOS: Scenario[] = [terminateBackends, restartPostgres, restartRedis, twoOnSqlite, diskFull];
