import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { retry } from '@retryd/core';
import { seededRandom } from '@retryd/core/testing';
import { GatewayLedger } from '../mock-gateway/gateway-ledger.js';
import { DECLINED_CARD_SUFFIX, ISSUER_DOWN_CARD_SUFFIX } from '../mock-gateway/flakiness.js';
import { PaymentStore } from '../payments-app/payment-store.js';
import { CALLBACK_SECRET_NAME, configureRetryd, newSigningSecret } from '../payments-app/retryd-setup.js';
import { CALLBACK_PATH } from '../payments-app/settlement-callbacks.js';
import type { PaymentRequest } from '../payment/payment-request.js';
import { auditLedgers, type AuditReport } from './ledger-audit.js';
import { startChild, startChildAgain, stopChild, type RunningChild } from './child-process.js';
import { freePort, startOwnPostgres, type OwnPostgres } from './own-postgres.js';

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** Payments to fire. */
  payments: number;
  /** SIGKILLs of the payment worker, at random moments of the run. */
  workerCrashes: number;
  /** SIGKILLs of the retryd service. */
  serviceCrashes: number;
  /** SIGKILLs of the PostgreSQL server (every process of it), restarted at once on the same files. Default 1. */
  postgresCrashes?: number;
  /** Seeds the payments, the crash moments and the gateway's flakiness. Default 1. */
  seed?: number;
  /** Submits in flight at once. Default 32. */
  concurrency?: number;
  /** Most time to wait for every payment to be final. Default 10 minutes. */
  settleTimeoutMs?: number;
  /** Progress lines. Default: none. */
  log?: (line: string) => void;
}

/** What {@link runDemo} measured and found. */
export interface DemoResult {
  report: AuditReport;
  elapsedMs: number;
  workerCrashes: number;
  serviceCrashes: number;
  postgresCrashes: number;
  /** Children that exited without being killed (logged with their stderr, and started again, as a supervisor would). */
  unexpectedExits: number;
}

const here = dirname(fileURLToPath(import.meta.url));
// The demo always runs the built processes (dist/), whether it was started from dist or from the sources by vitest.
const dist = join(here, '..', '..', 'dist');
const GATEWAY_MAIN = join(dist, 'mock-gateway', 'main.js');
const WORKER_MAIN = join(dist, 'payments-app', 'main.js');
/** The built `retryd` CLI of `@retryd/server`. */
export const RETRYD_MAIN = join(dirname(fileURLToPath(import.meta.resolve('@retryd/server'))), 'cli', 'main.js');
/** retryd's schema in the demo's database, beside the app's `payments` schema. */
export const RETRYD_SCHEMA = 'retryd';

/** The payments of a run: about 3% declined cards, 2% cards whose issuer is down, the rest fine. */
function makePayments(count: number, random: () => number): PaymentRequest[] {
  return Array.from({ length: count }, (_, i) => {
    const roll = random();
    const suffix = roll < 0.03 ? DECLINED_CARD_SUFFIX : roll < 0.05 ? ISSUER_DOWN_CARD_SUFFIX : '4242';
    return { paymentId: `pay-${String(i + 1).padStart(6, '0')}`, amountCents: 100 + Math.floor(random() * 99_900), card: `400000000000${suffix}` };
  });
}

/** `count` crash moments, as numbers of acknowledged submissions, spread over the middle of the run. */
function crashMoments(count: number, payments: number, random: () => number): number[] {
  return Array.from({ length: count }, () => Math.floor(payments * (0.05 + 0.9 * random()))).sort((a, b) => a - b);
}

/** The dead letters of the service at `url`, page by page: their task ids and idempotency keys. */
export async function readDeadLetters(url: string): Promise<{ taskId: string; idempotencyKey: string }[]> {
  const letters: { taskId: string; idempotencyKey: string }[] = [];
  let cursor: string | undefined;
  do {
    const query = new URLSearchParams({ limit: '1000', ...(cursor === undefined ? {} : { cursor }) });
    const response = await fetch(`${url}/dead-letters?${query}`);
    if (response.status !== 200) throw new Error(`retryd GET /dead-letters answered ${response.status}`);
    const page = (await response.json()) as { items: { taskId: string; idempotencyKey: string }[]; nextCursor?: string };
    letters.push(...page.items.map(({ taskId, idempotencyKey }) => ({ taskId, idempotencyKey })));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return letters;
}

/** The `retryd serve` arguments of the demo's service on `port`: its store the demo's PostgreSQL, in its own schema. */
export function retrydArgs(databaseUrl: string, port: number, secretsFile: string): string[] {
  return [
    'serve', '--port', String(port), '--store', `${databaseUrl}?schema=${RETRYD_SCHEMA}`, '--allow-targets', '127.0.0.1/32',
    '--secrets-file', secretsFile,
    // The default protections (they do not hold a gateway that answers most of its calls), and short leases so a
    // killed service's attempts are due again within seconds.
    '--attempt-timeout', '1000', '--visibility-timeout', '3000',
  ];
}

type Crashed = 'worker' | 'service' | 'postgres';

/**
 * Runs the payments demo end to end: a PostgreSQL of its own (the app's tables and retryd's schema), the mock gateway,
 * the retryd service and the payment worker as child processes; fires the payments; SIGKILLs the worker, the service
 * and PostgreSQL at random moments and restarts them on the same ports and files; waits until every payment is DONE or
 * DEAD; stops everything and audits the gateway's ledger against the app's.
 */
export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const log = options.log ?? (() => undefined);
  const random = seededRandom(options.seed ?? 1);
  const dir = mkdtempSync(join(tmpdir(), 'retryd-payments-'));
  const started = performance.now();
  // Whatever is running when the run ends, or fails: stopped in the `finally`.
  const running: { gateway?: RunningChild; service?: RunningChild; worker?: RunningChild } = {};
  let postgres: OwnPostgres | undefined;
  // Set once the run stops its children: their exits from then on are not restarted.
  let stopping = false;
  try {
    postgres = await startOwnPostgres();
    const database = postgres.url;
    log(`PostgreSQL of the demo's own on port ${postgres.port}`);
    const gateway = await startChild(GATEWAY_MAIN, [], { GATEWAY_LEDGER: join(dir, 'gateway.db'), GATEWAY_SEED: String(options.seed ?? 1) });
    running.gateway = gateway;

    // retryd signs what it sends to the worker's origin (the callbacks) with this secret; the worker verifies it.
    const callbackSecret = newSigningSecret();
    const secretsFile = join(dir, 'retryd-secrets.json');
    writeFileSync(secretsFile, JSON.stringify({ [CALLBACK_SECRET_NAME]: callbackSecret }), { mode: 0o600 });
    running.service = await startChild(RETRYD_MAIN, retrydArgs(database, 0, secretsFile), {});
    const serviceUrl = running.service.url;
    const servicePort = Number(new URL(serviceUrl).port);
    const workerPort = await freePort();
    const workerUrl = `http://127.0.0.1:${workerPort}`;
    await configureRetryd(serviceUrl, workerUrl);
    const workerEnv: NodeJS.ProcessEnv = {
      DATABASE_URL: database, RETRYD_SCHEMA, RETRYD_URL: serviceUrl, GATEWAY_URL: gateway.url, PAYMENTS_PORT: String(workerPort),
      CALLBACK_URL: `${workerUrl}${CALLBACK_PATH}`, CALLBACK_SECRET: callbackSecret, RETRYD_ALLOW_TARGETS: '127.0.0.1/32',
    };
    running.worker = await startChild(WORKER_MAIN, [], workerEnv);

    // A supervisor, as a deployment has one: a worker or retryd that exits without being killed here is logged with
    // the end of its stderr and started again (a process stopping on its own is a crash like the others; the audit
    // still has to hold). `killing` marks the exits the chaos causes.
    let unexpectedExits = 0;
    const killing = new Set<RunningChild>();
    const supervise = (who: 'worker' | 'service', start: () => Promise<RunningChild>): void => {
      const current = running[who];
      if (current === undefined) return;
      void current.exited.then(async (code) => {
        if (stopping || killing.has(current) || running[who] !== current) return;
        unexpectedExits += 1;
        log(`the ${who === 'worker' ? 'payment worker' : 'retryd service'} exited on its own (${code}): ${current.stderrTail().slice(-600)}`);
        running[who] = await start();
        supervise(who, start);
      });
    };
    const startWorker = () => startChildAgain(WORKER_MAIN, [], workerEnv);
    const startService = () => startChildAgain(RETRYD_MAIN, retrydArgs(database, servicePort, secretsFile), {});
    supervise('worker', startWorker);
    supervise('service', startService);

    // Crashes are applied one at a time, in the order their moments come.
    const crashes: { at: number; who: Crashed }[] = [
      ...crashMoments(options.workerCrashes, options.payments, random).map((at) => ({ at, who: 'worker' as const })),
      ...crashMoments(options.serviceCrashes, options.payments, random).map((at) => ({ at, who: 'service' as const })),
      ...crashMoments(options.postgresCrashes ?? 1, options.payments, random).map((at) => ({ at, who: 'postgres' as const })),
    ].sort((a, b) => a.at - b.at);
    let chaos = Promise.resolve();
    const counts: Record<Crashed, number> = { worker: 0, service: 0, postgres: 0 };
    const names: Record<Crashed, string> = { worker: 'payment worker', service: 'retryd service', postgres: 'PostgreSQL server' };
    const crash = (who: Crashed): void => {
      chaos = chaos.then(async () => {
        const killedAt = performance.now();
        if (who === 'worker' || who === 'service') {
          const victim = running[who];
          if (victim !== undefined) {
            killing.add(victim);
            await stopChild(victim, 'SIGKILL');
          }
          // Started again even while the database restarts (it then stops at once, and is started again).
          running[who] = await (who === 'worker' ? startWorker() : startService());
          supervise(who, who === 'worker' ? startWorker : startService);
        } else {
          await postgres?.crash();
          await postgres?.start();
        }
        counts[who] += 1;
        log(`killed and restarted the ${names[who]} (back in ${((performance.now() - killedAt) / 1000).toFixed(1)} s)`);
      });
    };

    const payments = makePayments(options.payments, random);
    let next = 0;
    let acknowledged = 0;
    const submitLane = async (): Promise<void> => {
      while (next < payments.length) {
        const payment = payments[next++] as PaymentRequest;
        // The worker or its database may be down: the client retries its submit; the same paymentId is the same payment.
        await retry(
          () =>
            fetch(`${workerUrl}/payments`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(payment),
              signal: AbortSignal.timeout(10_000),
            }),
          { maxAttempts: 10_000, initialDelayMs: 20, maxDelayMs: 500, jitterType: 'FULL' },
          { retryOnError: () => true, retryOnResult: (r) => r.status !== 200 && r.status !== 202 },
        );
        acknowledged += 1;
        while (crashes.length > 0 && (crashes[0]?.at ?? Infinity) <= acknowledged) crash((crashes.shift() as { who: Crashed }).who);
        if (acknowledged % 1_000 === 0) log(`${acknowledged} payments accepted`);
      }
    };
    await Promise.all(Array.from({ length: options.concurrency ?? 32 }, submitLane));
    await chaos;
    log(`all ${acknowledged} payments accepted; waiting until each is DONE or DEAD`);

    const deadline = Date.now() + (options.settleTimeoutMs ?? 600_000);
    for (;;) {
      const summary = await fetch(`${workerUrl}/payments-summary`)
        .then((r) => r.json() as Promise<Record<string, number>>)
        .catch(() => ({}) as Record<string, number>);
      if ((summary.DONE ?? 0) + (summary.DEAD ?? 0) >= payments.length) break;
      if (Date.now() > deadline) {
        log(`gave up waiting: ${JSON.stringify(summary)}`);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const deadLetters = await readDeadLetters(serviceUrl);
    stopping = true;
    await Promise.all(Object.values(running).map((child) => stopChild(child, 'SIGTERM')));
    const isCallback = (letter: { idempotencyKey: string }): boolean => letter.idempotencyKey.startsWith('retryd-callback:');

    const store = await PaymentStore.open(database);
    const ledger = new GatewayLedger(join(dir, 'gateway.db'));
    try {
      const report = auditLedgers({
        submitted: payments.map((p) => p.paymentId),
        payments: await store.all(),
        ledger: ledger.entries(),
        retrydDeadLetters: deadLetters.filter((l) => !isCallback(l)).map((l) => l.taskId),
        callbackDeadLetters: deadLetters.filter(isCallback).length,
      });
      return {
        report,
        elapsedMs: performance.now() - started,
        workerCrashes: counts.worker,
        serviceCrashes: counts.service,
        postgresCrashes: counts.postgres,
        unexpectedExits,
      };
    } finally {
      await store.close();
      ledger.close();
    }
  } finally {
    stopping = true;
    await Promise.all(Object.values(running).map((child) => stopChild(child, 'SIGKILL')));
    await postgres?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
