import type { AttemptCompletion } from '../store/store.js';
import type { AttemptVerdict } from './attempt-protection.js';

/**
 * Applies protection's verdict to a decided completion: a retry moved to `retryAt` (whole ms, as stores keep them),
 * in the task's next state and in its logged attempt alike, so the timeline shows when the retry will really go. A
 * move later that the verdict names a reason for (`delayedBy`: the retry budget) is logged with it and with the time
 * the backoff said (`backoffAt`): nothing else can tell a user why the retry waits longer than its policy says, since
 * the budget that delayed it lives in one instance's memory. Nothing else is ever changed: a completion that is not a
 * retry (done, dead, cancelled) stays as the engine decided.
 */
export function applyVerdict(completion: AttemptCompletion, verdict: AttemptVerdict): void {
  const { next, attempt } = completion;
  if (verdict.retryAt === undefined || next.status !== 'PENDING' || next.nextAttemptAt === null) return;
  const retryAt = Math.ceil(verdict.retryAt);
  const backoffAt = next.nextAttemptAt;
  if (retryAt === backoffAt) return;
  next.nextAttemptAt = retryAt;
  if (attempt === undefined) return;
  attempt.nextAttemptAt = retryAt;
  if (verdict.delayedBy !== undefined && retryAt > backoffAt) {
    attempt.delayedBy = verdict.delayedBy;
    attempt.backoffAt = backoffAt;
  }
}
