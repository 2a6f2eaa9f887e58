import type { Logger } from 'pino';
import type { AttemptLog, RetryTask } from '../domain/task.js';
import { FencedOutError, type EngineErrorContext } from '../engine/engine-errors.js';

/**
 * The debug line of one recorded attempt (`--log-level debug`): the task, the attempt's number, its target (the origin
 * alone), its outcome, the response status (null when no response came), how long it took and, when a retry follows,
 * the delay chosen before it (and, when the target's retry budget delayed it, `delayedBy` and the delay its backoff
 * chose, `backoffDelayMs`). Never headers, bodies, the target's path or query, nor the error's text (it may quote
 * the address).
 *
 * @example
 * ```json
 * {"level":20,"event":"attempt","tenantId":"default","taskId":"0190…","attempt":1,"target":"https://api.example.com",
 *  "outcome":"retry_scheduled","status":503,"durationMs":12,"delayMs":200,"msg":"attempt 1 retry_scheduled"}
 * ```
 */
export function logAttempt(logger: Logger, task: RetryTask, attempt: AttemptLog): void {
  // The decision was made when the attempt ended; the next one is due `delayMs` after it.
  const endedAt = attempt.startedAt + attempt.durationMs;
  logger.debug(
    {
      event: 'attempt',
      tenantId: task.tenantId,
      taskId: task.taskId,
      attempt: attempt.attemptNumber,
      target: task.targetKey,
      outcome: attempt.outcome,
      status: attempt.responseStatus,
      durationMs: Math.round(attempt.durationMs),
      ...(attempt.nextAttemptAt === null ? {} : { delayMs: Math.max(0, Math.round(attempt.nextAttemptAt - endedAt)) }),
      // Only when something delayed the retry past its backoff (the target's retry budget): the delay it alone chose.
      ...(attempt.delayedBy === null || attempt.backoffAt === null
        ? {}
        : { delayedBy: attempt.delayedBy, backoffDelayMs: Math.max(0, Math.round(attempt.backoffAt - endedAt)) }),
    },
    `attempt ${attempt.attemptNumber} ${attempt.outcome}`,
  );
}

/**
 * The line of a failure the engine survived. A failure about one task names it, the attempt and the target (origin)
 * at the top, as every line about a task does: `fenced_out` (warn, no stack) for a late result the store refused,
 * `engine_error` (error) for anything else.
 */
export function logEngineError(logger: Logger, error: unknown, context: EngineErrorContext): void {
  const { taskId, attempt, target, ...rest } = context;
  const task = taskId === undefined ? {} : { taskId, attempt, target };
  // Expected after a pause longer than the lease (GC, SIGSTOP, a frozen VM): the task was reaped and has a new
  // owner, so the store refused the late result. Not an engine fault; one line per task, without a stack.
  if (error instanceof FencedOutError) {
    logger.warn(
      { event: 'fenced_out', taskId: error.taskId, attempt, target, fencingToken: error.fencingToken },
      'late completion refused: the lease lapsed and the task has a new owner',
    );
    return;
  }
  // `context` keeps its `taskId` as before the top-level fields existed: alerts may match on it.
  logger.error({ event: 'engine_error', err: error, ...task, context: taskId === undefined ? rest : { ...rest, taskId } }, 'engine error');
}
