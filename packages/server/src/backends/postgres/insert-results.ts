import type { RetryTask } from '../../domain/task.js';
import type { InsertResult } from '../../store/store.js';

/** The tasks of a batch the INSERT inserted, by tenant and task id, or 'all' when it inserted every one. */
export type InsertedKeys = 'all' | readonly { tenantId: string; taskId: string }[];

/**
 * The results of `insertTasks`, in input order, from the tasks the INSERT reported inserting. A task not inserted is
 * a duplicate of its key's winner: the task of the same batch that was inserted, or else the stored one, which
 * `lookup` reads (one more round trip, only when some key was stored before this batch).
 */
export async function insertResults(
  tasks: readonly RetryTask[],
  inserted: InsertedKeys,
  lookup: (unknown: readonly RetryTask[]) => Promise<RetryTask[]>,
): Promise<InsertResult[]> {
  if (inserted === 'all') return tasks.map((task) => ({ kind: 'inserted', task }));
  const insertedIds = new Set(inserted.map((key) => `${key.tenantId}\u0000${key.taskId}`));
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
