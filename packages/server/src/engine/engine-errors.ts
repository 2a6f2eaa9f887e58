/** What the engine was doing when something failed: the `context` argument of `onError`. */
export interface EngineErrorContext {
  operation:
    | 'claim'
    | 'hand_off'
    | 'complete'
    | 'release'
    | 'reap'
    | 'resolve_policy'
    | 'resolve_retention'
    | 'decide'
    | 'hook'
    | 'protect'
    | 'extend_lease';
  /** The task concerned, when there is one. */
  taskId?: string;
  /** With `taskId`: the number of the attempt concerned (1-based; the one about to be made, or just made). */
  attempt?: number;
  /** With `taskId`: the task's target, its origin alone (`targetKey`): never its path or query. */
  target?: string;
}

/** The context of a failure about one claimed task: its id, the attempt it was making and its target's origin. */
export function taskContext(
  operation: EngineErrorContext['operation'],
  task: { taskId: string; attemptNumber: number; targetKey: string },
): EngineErrorContext {
  return { operation, taskId: task.taskId, attempt: task.attemptNumber + 1, target: task.targetKey };
}

/**
 * A completion the store refused because the task's fencing token had moved on: the lease lapsed and the task now
 * has a new owner (or was reaped). The result is dropped — overwriting the new owner's state would be worse.
 */
export class FencedOutError extends Error {
  override readonly name = 'FencedOutError';
  readonly code = 'FENCED_OUT';
  constructor(
    readonly taskId: string,
    readonly fencingToken: number,
  ) {
    super(`completion of task ${taskId} with fencing token ${fencingToken} was fenced out: the task has a new owner`);
  }
}

/**
 * An attempt result that could not be written before its lease lapsed (the store kept failing) or before shutdown
 * ended. The attempt is not lost from the record: whoever reaps the lapsed lease logs it as `lease_expired`.
 */
export class CompletionAbandonedError extends Error {
  override readonly name = 'CompletionAbandonedError';
  readonly code = 'COMPLETION_ABANDONED';
  constructor(
    readonly taskId: string,
    reason: string,
  ) {
    super(`result of task ${taskId} was not recorded: ${reason}; its lease will lapse and be reaped`);
  }
}
