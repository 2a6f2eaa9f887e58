import type { Store } from '../src/store/store.js';
import { attemptsOf, listAll } from '../test/store-reads.js';
import type { ChaosDownstream } from './chaos-downstream.js';

export { attemptsOf, listAll };

/** A task the API acknowledged (answered 201): the service owes it an end. */
export interface Acknowledged {
  taskId: string;
  idempotencyKey: string;
}

/** What {@link audit} found. `problems` is empty when every promise held. */
export interface AuditReport {
  acknowledged: number;
  succeeded: number;
  /** Ended FAILED or EXHAUSTED, each with a dead-letter reason. */
  dead: number;
  /** Attempts recorded, over every acknowledged task. */
  attempts: number;
  /** Attempts recorded as `lease_expired`: a worker lost its lease (killed, frozen, or outrun by a clock). */
  leaseExpired: number;
  /** Requests the downstream received, and those that were replays of a processed key. */
  requests: number;
  replays: number;
  /** One sentence per broken promise. */
  problems: string[];
}

/**
 * The audit that ends every chaos scenario, read from the store itself and from the downstream's counts:
 *
 * 1. every acknowledged task is accounted for: SUCCEEDED, or dead (FAILED / EXHAUSTED) with a reason;
 * 2. no attempt is recorded twice: each task's attempts are numbered 1..n, once each, n its attempt count;
 * 3. the downstream processed each succeeded task's key exactly once (re-sends were replays), and no key twice.
 */
export async function audit(
  store: Store,
  acknowledged: readonly Acknowledged[],
  // What the audit reads of a downstream: an HTTP `ChaosDownstream` or a `GrpcChaosDownstream` counts alike.
  downstream: Pick<ChaosDownstream, 'processed' | 'replays' | 'totalRequests'>,
): Promise<AuditReport> {
  const byId = new Map((await listAll(store)).map((task) => [task.taskId, task]));
  const problems: string[] = [];
  const report: AuditReport = {
    acknowledged: acknowledged.length,
    succeeded: 0,
    dead: 0,
    attempts: 0,
    leaseExpired: 0,
    requests: downstream.totalRequests,
    replays: downstream.replays,
    problems,
  };
  for (const { taskId, idempotencyKey } of acknowledged) {
    const task = byId.get(taskId);
    if (task === undefined) {
      problems.push(`${taskId} was acknowledged and is missing`);
      continue;
    }
    const processed = downstream.processed.get(idempotencyKey) ?? 0;
    if (task.status === 'SUCCEEDED') {
      report.succeeded++;
      if (processed !== 1) problems.push(`${taskId} SUCCEEDED and its key ${idempotencyKey} was processed ${processed} times`);
    } else if ((task.status === 'FAILED' || task.status === 'EXHAUSTED') && task.deadLetterReason !== null) {
      report.dead++;
      if (processed > 1) problems.push(`${taskId} is dead and its key ${idempotencyKey} was processed ${processed} times`);
    } else {
      problems.push(`${taskId} is ${task.status}${task.status === 'FAILED' || task.status === 'EXHAUSTED' ? ' without a reason' : ''}, not settled`);
    }
    const attempts = await attemptsOf(store, taskId);
    report.attempts += attempts.length;
    report.leaseExpired += attempts.filter((attempt) => attempt.outcome === 'lease_expired').length;
    const numbers = attempts.map((attempt) => attempt.attemptNumber).sort((a, b) => a - b);
    const expected = Array.from({ length: task.attemptNumber }, (_, i) => i + 1);
    if (numbers.join() !== expected.join()) {
      problems.push(`${taskId} has attempts ${numbers.join()} recorded, expected ${expected.join()}`);
    }
  }
  return report;
}
