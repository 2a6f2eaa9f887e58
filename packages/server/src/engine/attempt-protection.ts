import type { TimeoutOverrides } from '../domain/attempt-timeouts.js';
import type { RetryDelayReason, RetryTask } from '../domain/task.js';
import type { AttemptCompletion, TargetRef } from '../store/store.js';
import type { AttemptResult } from './attempt-result.js';

/**
 * What protection decided about an ended attempt, for the attempt runner to apply (`applyVerdict`): protection never
 * edits the engine's completion itself, so where a retry's time is decided has one answer.
 */
export interface AttemptVerdict {
  /**
   * When the retry may go instead of when its backoff said (a retry only: ignored for any other outcome). Later: the
   * retry budget's pacer slot. Earlier (a ms before the task's last due time), when its backoff ends within a breaker's
   * hold of its target: it keeps its place in line and is among the first let through as a probe when the hold ends,
   * instead of behind every task due since (or due with it).
   */
  retryAt?: number;
  /**
   * Why `retryAt` is later than the backoff said (the retry budget's pacer), for the attempt's log entry to say it; absent
   * for a move that is no delay (the breaker's hold). `applyVerdict` records it only when `retryAt` is in fact later.
   */
  delayedBy?: RetryDelayReason;
  /**
   * Settles once the state change this outcome caused is in the store (a breaker opened, a probe counted, a hold): the
   * engine writes the completion, and frees its slot, only then, so no claim can slip through the gate between the two.
   */
  written?: Promise<void>;
  /**
   * Called once with the task's version when its completion is written (not when it is fenced out or given up): a retry
   * whose backoff ends after its target's hold takes back its place in line then, by a move guarded by that version.
   */
  onWritten?: (version: number) => void;
}

/**
 * What the engine asks of per-target protection (breakers, limits, adaptive throttling, retry budgets; see
 * `TargetProtection`). Optional: an engine without one retries every task on its own schedule, as a plain queue does.
 *
 * Every call is on the hot path and must stay O(1) when nothing trips. A call returns a promise only when it changed
 * the target's state in a way the store must know before the completion is written (a breaker opened, a probe
 * counted, a hold): the engine then writes the completion, and frees its slot, once that promise settles, so no claim
 * can slip through the gate between the two. `attemptEnded` says so through its verdict's `written`.
 */
export interface AttemptProtection {
  /**
   * A claimed or handed-off task is about to be attempted (`attemptNumber > runAttemptOffset`: a retry). Returns
   * undefined when it may be sent at once, else a promise of its turn, within `maxWaitMs`: one instance's sends to a
   * rate-limited target are spread at its rate. An attempt sent at once starts at `now` (its attempt's `startedAt`), so
   * that protection can tell the answer to a send it counted by that time.
   */
  attemptStarting(task: RetryTask, now: number, maxWaitMs: number): Promise<void> | undefined;
  /**
   * An attempt ended and its completion is decided but not yet written: counts its outcome and says what it changes
   * (undefined: nothing), as a promise while it first reads what it judges on (the target's settings, its breaker).
   */
  attemptEnded(
    task: RetryTask,
    result: AttemptResult,
    completion: AttemptCompletion,
    now: number,
  ): AttemptVerdict | Promise<AttemptVerdict | undefined> | undefined;
  /**
   * A claimed task ends without an attempt (cancelled, out of attempts or out of budget before it went out): frees what
   * it held, and may name in `lastError` what held the task while its budget ran out.
   */
  endedWithoutAttempt(task: RetryTask, completion: AttemptCompletion, now: number): Promise<void> | undefined;
  /**
   * Whether `target`'s gate counts its attempts in flight (a concurrency limit, or a breaker's probes): then the end of
   * one of its attempts may make more of its tasks claimable, and the engine claims again rather than wait for a timer.
   */
  limitsInFlight(target: TargetRef): boolean;
  /**
   * Whether a task of `target` due now may skip the claim (the hand-off): false for a target this instance knows to be
   * held, limited, or with a breaker that is not closed, and for one it does not know yet.
   */
  admitsHandOff(target: TargetRef, now: number): boolean;
  /**
   * Makes this instance know `target` before tasks of it are enqueued: undefined when it does already, else a promise
   * of its first read, after which its gate is what its protection says (a target never seen to succeed is in slow
   * start), so that the claims of its first tasks obey it. Optional.
   */
  prepare?(target: TargetRef, now: number): Promise<void> | undefined;
  /**
   * The secrets an attempt of `task` is signed with (its target's `signing.secrets`, as references), or undefined when
   * its target does not sign. A promise only while this instance has not yet read the target's settings, so that a
   * target's first attempt is not sent unsigned; then a plain read of the cached settings.
   */
  signingSecrets(task: RetryTask, now: number): readonly string[] | undefined | Promise<readonly string[] | undefined>;
  /**
   * The attempt and connect timeouts `task`'s target sets for its tasks (each null where it sets none), or undefined
   * when it sets neither: a plain read of the cached settings, asked after `signingSecrets` (which waits for a target's
   * first read). Optional: without it, no target has timeouts of its own.
   */
  timeoutsOf?(task: RetryTask): TimeoutOverrides | undefined;
}
