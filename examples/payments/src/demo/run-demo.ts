import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { retry } from '@retryd/core';
import { seededRandom } from '@retryd/core/testing';
import { GatewayLedger } from '../mock-gateway/gateway-ledger.js';
import { DECLINED_CARD_SUFFIX, ISSUER_DOWN_CARD_SUFFIX } from '../mock-gateway/flakiness.js';
import { PaymentStore } from '../payments-app/payment-store.js';
import type { PaymentRequest } from '../payment/payment-request.js';
import { auditLedgers, type AuditReport } from './ledger-audit.js';
import { startChild, stopChild, type RunningChild } from './child-process.js';

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** Payments to fire. */
  payments: number;
  /** SIGKILLs of the payment worker, at random moments of the run. */
  workerCrashes: number;
  /** SIGKILLs of the retryd service. */
  serviceCrashes: number;
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
}

const here = dirname(fileURLToPath(import.meta.url));
// The demo always runs the built processes (dist/), whether it was started from dist or from the sources by vitest.
const dist = join(here, '..', '..', 'dist');
const GATEWAY_MAIN = join(dist, 'mock-gateway', 'main.js');
const WORKER_MAIN = join(dist, 'payments-app', 'main.js');
/** The built `retryd` CLI of `@retryd/server`. */
export const RETRYD_MAIN = join(dirname(fileURLToPath(import.meta.resolve('@retryd/server'))), 'cli', 'main.js');

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

/** The task ids of every dead letter of the service at `url`, page by page. */
async function readDeadLetters(url: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const query = new URLSearchParams({ limit: '1000', ...(cursor === undefined ? {} : { cursor }) });
    const response = await fetch(`${url}/dead-letters?${query}`);
    if (response.status !== 200) throw new Error(`retryd GET /dead-letters answered ${response.status}`);
    const page = (await response.json()) as { items: { taskId: string }[]; nextCursor?: string };
    ids.push(...page.items.map((task) => task.taskId));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return ids;
}

/**
 * Runs the payments demo end to end: the mock gateway, the retryd service (SQLite in a temporary directory) and
 * the payment worker as child processes; fires the payments; SIGKILLs the worker and the service at random moments
 * and restarts them on the same ports; waits until every payment is DONE or DEAD; stops everything and audits the
 * gateway's ledger against the app's.
 */
export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const log = options.log ?? (() => undefined);
  const random = seededRandom(options.seed ?? 1);
  const dir = mkdtempSync(join(tmpdir(), 'retryd-payments-'));
  const started = performance.now();
  const children: RunningChild[] = [];
  try {
    const gateway = await startChild(GATEWAY_MAIN, [], { GATEWAY_LEDGER: join(dir, 'gateway.db'), GATEWAY_SEED: String(options.seed ?? 1) });
    children.push(gateway);
    const retrydArgs = (port: number): string[] => [
      'serve', '--port', String(port), '--store', `sqlite:${join(dir, 'retryd.db')}`, '--allow-targets', '127.0.0.1/32',
      // The default protections (they do not hold a gateway that answers most of its calls), and short leases so a
      // killed service's attempts are due again within seconds.
      '--attempt-timeout', '1000', '--visibility-timeout', '3000',
    ];
    let service = await startChild(RETRYD_MAIN, retrydArgs(0), {});
    const servicePort = new URL(service.url).port;
    const workerEnv = (port: string): NodeJS.ProcessEnv => ({
      PAYMENTS_DB: join(dir, 'payments.db'), PAYMENTS_PORT: port, GATEWAY_URL: gateway.url, RETRYD_URL: service.url,
    });
    let worker = await startChild(WORKER_MAIN, [], workerEnv('0'));
    const workerPort = new URL(worker.url).port;
    const workerUrl = worker.url;

    // Crashes are applied one at a time, in the order their moments come.
    const crashes: { at: number; who: 'worker' | 'service' }[] = [
      ...crashMoments(options.workerCrashes, options.payments, random).map((at) => ({ at, who: 'worker' as const })),
      ...crashMoments(options.serviceCrashes, options.payments, random).map((at) => ({ at, who: 'service' as const })),
    ].sort((a, b) => a.at - b.at);
    let chaos = Promise.resolve();
    const counts = { worker: 0, service: 0 };
    const crash = (who: 'worker' | 'service'): void => {
      chaos = chaos.then(async () => {
        if (who === 'worker') {
          await stopChild(worker, 'SIGKILL');
          worker = await startChild(WORKER_MAIN, [], workerEnv(workerPort));
        } else {
          await stopChild(service, 'SIGKILL');
          service = await startChild(RETRYD_MAIN, retrydArgs(Number(servicePort)), {});
        }
        counts[who] += 1;
        log(`killed and restarted the ${who === 'worker' ? 'payment worker' : 'retryd service'}`);
      });
    };

    const payments = makePayments(options.payments, random);
    let next = 0;
    let acknowledged = 0;
    const submitLane = async (): Promise<void> => {
      while (next < payments.length) {
        const payment = payments[next++] as PaymentRequest;
        // The worker may be down: the client retries its submit; the same paymentId is the same payment.
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
        while (crashes.length > 0 && (crashes[0]?.at ?? Infinity) <= acknowledged) crash((crashes.shift() as { who: 'worker' | 'service' }).who);
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
    const deadLetters = await readDeadLetters(service.url);
    children.push(worker, service);
    await Promise.all([stopChild(worker, 'SIGTERM'), stopChild(service, 'SIGTERM'), stopChild(gateway, 'SIGTERM')]);

    const store = new PaymentStore(join(dir, 'payments.db'));
    const ledger = new GatewayLedger(join(dir, 'gateway.db'));
    try {
      const report = auditLedgers({
        submitted: payments.map((p) => p.paymentId),
        payments: store.all(),
        ledger: ledger.entries(),
        retrydDeadLetters: deadLetters,
      });
      return { report, elapsedMs: performance.now() - started, workerCrashes: counts.worker, serviceCrashes: counts.service };
    } finally {
      store.close();
      ledger.close();
    }
  } finally {
    await Promise.all(children.map((c) => stopChild(c, 'SIGKILL')));
    rmSync(dir, { recursive: true, force: true });
  }
}
