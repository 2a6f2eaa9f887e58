import { expect } from 'vitest';
import type { RetryTask } from '../../src/domain/task.js';
import type { Store } from '../../src/store/store.js';
import { insertStoredTasks } from '../fixtures/stored-tasks.js';
import { T0 } from '../fixtures/tasks.js';

/** Gives the suite's cases access to the store of the running test. */
export type CurrentStore = () => Store;

/** Inserts tasks that must all be new (PENDING or IN_FLIGHT, none a duplicate), through the port. */
export async function insertAll(store: Store, tasks: readonly RetryTask[]): Promise<void> {
  const results = await store.insertTasks(tasks);
  expect(results.map((r) => r.kind)).toEqual(tasks.map(() => 'inserted'));
}

/**
 * Inserts tasks in any status, none a duplicate, past the port's rule that inserts only new tasks: for a case that
 * needs a task already ended (see fixtures/stored-tasks.ts).
 */
export async function insertAllStored(store: Store, tasks: readonly RetryTask[]): Promise<void> {
  const results = await insertStoredTasks(store, tasks);
  expect(results.map((r) => r.kind)).toEqual(tasks.map(() => 'inserted'));
}

/** Inserts one due task and claims it: the usual start of a completion case. */
export async function claimed(
  store: Store,
  task: RetryTask,
  now = T0,
  leaseMs = 1_000,
  workerId = 'worker-1',
): Promise<RetryTask> {
  await insertAll(store, [task]);
  return claimById(store, task.taskId, now, leaseMs, workerId);
}

/** Claims due tasks until `taskId` is among them (the other tasks of the test are not due yet). */
export async function claimById(
  store: Store,
  taskId: string,
  now: number,
  leaseMs = 1_000,
  workerId = 'worker-1',
): Promise<RetryTask> {
  const claims = await store.claimDue(now, { limit: 1, leaseMs, workerId });
  const task = claims.find((t) => t.taskId === taskId);
  if (task === undefined) throw new Error(`Expected to claim ${taskId} at ${now}; got ${claims.map((t) => t.taskId).join(', ')}`);
  return task;
}

/** Newest first: `createdAt`, then `taskId`, both descending (the listing order of the port). */
export function newestFirst(a: RetryTask, b: RetryTask): number {
  return b.createdAt - a.createdAt || (a.taskId < b.taskId ? 1 : a.taskId > b.taskId ? -1 : 0);
}
