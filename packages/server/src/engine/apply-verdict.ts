import type { AttemptCompletion } from '../store/store.js';
import type { AttemptVerdict } from './attempt-protection.js';

/**
 * Applies protection's verdict to a decided completion: a retry moved to `retryAt` (whole ms, as stores keep them),
 * in the task's next state and in its logged attempt alike, so the timeline shows when the retry will really go.
 * Nothing else is ever changed: a completion that is not a retry (done, dead, cancelled) stays as the engine decided.
 */
export function applyVerdict(completion: AttemptCompletion, verdict: AttemptVerdict): void {
  const { next, attempt } = completion;
  if (verdict.retryAt === undefined || next.status !== 'PENDING' || next.nextAttemptAt === null) return;
  const retryAt = Math.ceil(verdict.retryAt);
  if (retryAt === next.nextAttemptAt) return;
  next.nextAttemptAt = retryAt;
  if (attempt !== undefined) attempt.nextAttemptAt = retryAt;
}
