import { openStore } from '../src/service/open-store.js';
import type { Store } from '../src/store/store.js';
import { startServiceProcess as startService, stopService as stop, type ServiceProcess } from '../test/service-harness.js';
import { waitFor } from '../test/wait-for.js';
import type { Acknowledged } from './audit.js';

export { stop, type ServiceProcess };

/**
 * Starts `retryd serve` through the test-only entry, so that the scenarios' RETRYD_FAULT_PAUSE_AT and
 * RETRYD_CLOCK_OFFSET_MS take effect (a service started otherwise ignores them).
 */
export function startServiceProcess(args: string[], env: NodeJS.ProcessEnv = {}): Promise<ServiceProcess> {
  return startService(args, env, { testSwitches: true });
}

/** Attempt timeout and lease of every chaos instance: short, so lapsed leases are reaped within seconds. */
export const ATTEMPT_TIMEOUT_MS = 1_000;
export const LEASE_MS = 2_000;

/** Quick retries, enough of them to outlast any fault here. */
export const CHAOS_POLICY = { maxAttempts: 30, backoffType: 'EXPONENTIAL', initialDelayMs: 5, multiplier: 2, maxDelayMs: 200, jitterType: 'FULL' };

/**
 * Arguments of `retryd serve` on `storeUrl` with the chaos timings (the lease `leaseMs`, default {@link LEASE_MS}),
 * loopback targets allowed and the default protections.
 */
export function serviceArgs(storeUrl: string, leaseMs = LEASE_MS): string[] {
  return [
    '--store', storeUrl,
    '--allow-targets', '127.0.0.1/32',
    '--attempt-timeout', String(ATTEMPT_TIMEOUT_MS),
    '--visibility-timeout', String(leaseMs),
    '--concurrency', '32',
    '--grace', '2000',
    // The default protections, as a deployment runs: the faults must be survived with breakers on, and a downstream
    // that fails or misbehaves on each key's first call is "not ready yet", which they must not starve.
  ];
}

/** The `workerId` an instance's start line names. */
export function workerIdOf(service: ServiceProcess): string {
  const id = service.logs.find((line) => line.event === 'start')?.workerId;
  if (typeof id !== 'string') throw new Error('the start line names no workerId');
  return id;
}

/** Resolves with the first log line of `service` with `event`, waiting for it up to `timeoutMs`. */
export async function logLine(service: ServiceProcess, event: string, timeoutMs = 30_000): Promise<Record<string, unknown>> {
  let found: Record<string, unknown> | undefined;
  await waitFor(`a ${event} line`, () => (found = service.logs.find((line) => line.event === event)) !== undefined, timeoutMs);
  return found as Record<string, unknown>;
}

/** Where one enqueue went: the acknowledged tasks, and how many requests the API refused with each status. */
export interface EnqueueResult {
  acknowledged: Acknowledged[];
  refused: Map<number, number>;
}

/** Options of {@link enqueue}. */
export interface EnqueueOptions {
  /** Default {@link CHAOS_POLICY}. */
  policy?: object;
  /**
   * First attempt this long after the enqueue. A scenario that stops the instance at its first attempt sets it, so
   * the batch is answered before a task due at once, handed straight to the engine, stops the process mid-answer.
   */
  delayMs?: number;
}

/**
 * Enqueues one task per key (POST `${target}/charge`) through the batch API, 500 at a time. Only what the API answered
 * 201 (or 200, replayed) for is acknowledged; a batch refused whole (a 503 from a store that cannot write) is counted, not thrown.
 */
export async function enqueue(apiUrl: string, target: string, keys: readonly string[], options: EnqueueOptions = {}): Promise<EnqueueResult> {
  const policy = options.policy ?? CHAOS_POLICY;
  const delay = options.delayMs === undefined ? {} : { delayMs: options.delayMs };
  const acknowledged: Acknowledged[] = [];
  const refused = new Map<number, number>();
  for (let offset = 0; offset < keys.length; offset += 500) {
    const batch = keys.slice(offset, offset + 500);
    const tasks = batch.map((key) => ({ targetUrl: `${target}/charge`, method: 'POST', idempotencyKey: key, body: { key }, policy, ...delay }));
    const res = await fetch(`${apiUrl}/retry-tasks/batch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tasks }) });
    if (res.status !== 200) {
      refused.set(res.status, (refused.get(res.status) ?? 0) + batch.length);
      await res.body?.cancel();
      continue;
    }
    const { results } = (await res.json()) as { results: { status: number; task?: { taskId: string } }[] };
    results.forEach((result, i) => {
      // 200 is a replay of a task an earlier, cut-off request did create: acknowledged all the same.
      if ((result.status === 201 || result.status === 200) && result.task !== undefined) acknowledged.push({ taskId: result.task.taskId, idempotencyKey: batch[i] as string });
      else refused.set(result.status, (refused.get(result.status) ?? 0) + 1);
    });
  }
  return { acknowledged, refused };
}

/** `count` keys named `${prefix}-0` … */
export function keys(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
}

/** `kill -9`, and waits for the exit. */
export async function kill9(service: ServiceProcess): Promise<void> {
  service.child.kill('SIGKILL');
  await service.exited;
}

/** The test's own view of a store (lease owners, attempt logs), opened by URL as the service opens it. */
export async function openAuditStore(storeUrl: string): Promise<Store> {
  return (await openStore(storeUrl)).store;
}

/** Waits until `count` tasks have ended (SUCCEEDED, FAILED, EXHAUSTED or CANCELLED). */
export async function waitSettled(store: Store, count: number, timeoutMs = 60_000): Promise<void> {
  await waitFor(
    `${count} tasks settled`,
    async () => {
      const by = await store.admin.countByStatus();
      return (by.SUCCEEDED ?? 0) + (by.FAILED ?? 0) + (by.EXHAUSTED ?? 0) + (by.CANCELLED ?? 0) >= count;
    },
    timeoutMs,
  );
}
