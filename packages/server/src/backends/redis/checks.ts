import type { RetryTask } from '../../domain/task.js';
import type { AttemptCompletion, TaskOutcome } from '../../store/store.js';
import { checkedTaskId } from '../../domain/task-id.js';
import { InvalidTaskStateError } from './errors.js';

// The SQLite store's CHECK constraints, as checks before anything is sent: a PENDING task without a due time
// would never be claimed, an IN_FLIGHT one without a lease never reclaimed. And the SQL stores' refusal of a task id
// that is not a UUID in canonical text (see domain/task-id.ts), so that every store takes the same ids.
export function checkInsertable(task: RetryTask): void {
  checkedTaskId(task.taskId, 'taskId');
  if (task.status === 'PENDING' && task.nextAttemptAt === null) {
    throw new InvalidTaskStateError(`insertTasks refused task ${task.taskId}: a PENDING task needs nextAttemptAt.`);
  }
  if (task.status === 'IN_FLIGHT' && task.leaseExpiresAt === null) {
    throw new InvalidTaskStateError(`insertTasks refused task ${task.taskId}: an IN_FLIGHT task needs leaseExpiresAt.`);
  }
}

export function checkCompletion(completion: AttemptCompletion): void {
  for (const outcome of [completion.next, completion.ifCancelRequested]) {
    if (outcome !== undefined) checkOutcome(completion.taskId, outcome);
  }
}

function checkOutcome(taskId: string, outcome: TaskOutcome): void {
  if (outcome.status === 'IN_FLIGHT' || (outcome.status === 'PENDING' && outcome.nextAttemptAt === null)) {
    throw new InvalidTaskStateError(
      `completeAttempts refused task ${taskId}: an outcome is ${outcome.status}${outcome.status === 'PENDING' ? ' without nextAttemptAt' : ''}.`,
    );
  }
}
