import type { RetryTask } from '../../domain/task.js';
import type { InsertResult } from '../../store/store.js';

/**
 * The results of `insertTasks`, in input order, from the tasks the INSERT reported (by tenant and task id).
 * A task not inserted is a duplicate of its key's winner: the task of the same batch that was inserted, or else
 * the stored one, which `lookup` reads (one more round trip, only when some key was stored before this batch).
 */
export async function insertResults(
  tasks: readonly RetryTask[],
  inserted: readonly { tenant_id: string; task_id: string }[],
  lookup: (unknown: readonly RetryTask[]) => Promise<RetryTask[]>,
): Promise<InsertResult[]> {
  const insertedIds = new Set(inserted.map((row) => `${row.tenant_id}\u0000${row.task_id}`));
  const winners = new Map<string, RetryTask>();
  const results = tasks.map((task): InsertResult | undefined => {
    if (!insertedIds.has(`${task.tenantId}\u0000${task.taskId}`)) return undefined;
    winners.set(keyOf(task), task);
    return { kind: 'inserted', task };
  });
  const unknown = tasks.filter((task, i) => results[i] === undefined && !winners.has(keyOf(task)));
  if (unknown.length > 0) for (const stored of await lookup(unknown)) winners.set(keyOf(stored), stored);
  return tasks.map((task, i) => {
    const result = results[i];
    if (result !== undefined) return result;
    const winner = winners.get(keyOf(task));
    if (winner === undefined) throw new Error(`Task ${task.taskId} was neither inserted nor found by its key.`);
    return { kind: 'duplicate', task: winner };
  });
}

function keyOf(task: RetryTask): string {
  return `${task.tenantId}\u0000${task.idempotencyKey}`;
}
