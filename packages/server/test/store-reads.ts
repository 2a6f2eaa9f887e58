import type { AttemptLog, RetryTask } from '../src/domain/task.js';
import type { Store } from '../src/store/store.js';

// Reads of a whole store for the tests that audit a run from outside the service (many-instances, the chaos suite).

/** Every task of the default tenant of `status` (or of any status), read page by page. */
export async function listAll(store: Store, status?: RetryTask['status']): Promise<RetryTask[]> {
  const tasks: RetryTask[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listTasks({ tenantId: 'default', limit: 1_000, ...(status ? { status } : {}), ...(cursor ? { cursor } : {}) });
    tasks.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tasks;
}

/** Every attempt recorded for a task of the default tenant, oldest first. */
export async function attemptsOf(store: Store, taskId: string): Promise<AttemptLog[]> {
  const attempts: AttemptLog[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listAttempts('default', taskId, { limit: 1_000, ...(cursor ? { cursor } : {}) });
    attempts.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return attempts;
}
