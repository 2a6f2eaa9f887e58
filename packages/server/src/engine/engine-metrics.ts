import { isTerminal, type Clock, type TaskStatus } from '@retryd/core';
import type { AttemptLog, RetryTask } from '../domain/task.js';
import type { AttemptCompletion, Store } from '../store/store.js';
import { attemptLogged, type AppliedCompletion } from './applied-completion.js';

/** The engine's store calls whose time is measured: a claim (`claimDue`), or a commit of results (`completeAttempts`, `completeAndClaim`). */
export type TimedStoreCall = 'claim' | 'commit';

/**
 * What the engine tells a metrics collector (the service's is `ServiceMetrics`, in `metrics/`). Optional: an engine
 * without one measures nothing.
 *
 * Every call is on the hot path, once per attempt or per store call: it must stay O(1), make no I/O and not throw
 * (the engine catches and reports a throw, as for any hook). What is cheap to read when asked (attempts in flight,
 * queue depth, per-target state) is read by the collector at scrape time instead.
 */
export interface EngineMetrics {
  /**
   * An attempt was recorded, durably. `task` is the task as claimed: its `nextAttemptAt` is the due time the attempt
   * was made for (the schedule lag is `attempt.startedAt` minus it). Lost attempts (`lease_expired`) come here too.
   */
  attemptRecorded(task: RetryTask, attempt: AttemptLog): void;
  /** A claimed task reached a final status, durably, at `now`; `deadLetterReason` is set for FAILED and EXHAUSTED. */
  taskEnded(task: RetryTask, status: TaskStatus, deadLetterReason: string | null, now: number): void;
  /** One of the engine's store calls took `seconds` (failed ones included). */
  storeCallTimed(call: TimedStoreCall, seconds: number): void;
}

/** Tells `metrics` what an applied completion recorded: its attempt, if it made one, and the task's end, if it ended. */
export function observeCompletion(
  metrics: EngineMetrics,
  task: RetryTask,
  completion: AttemptCompletion,
  result: AppliedCompletion,
  now: number,
): void {
  const attempt = attemptLogged(completion, result);
  if (attempt !== undefined) metrics.attemptRecorded(task, attempt);
  if (!isTerminal(result.status)) return;
  const cancelled = result.cancelRequested && completion.ifCancelRequested !== undefined;
  const outcome = cancelled ? (completion.ifCancelRequested ?? completion.next) : completion.next;
  metrics.taskEnded(task, result.status, outcome.deadLetterReason, now);
}

/** The store calls the engine times. */
export type TimedStore = Pick<Store, 'claimDue' | 'completeAttempts' | 'completeAndClaim'>;

/**
 * `store`'s claim and commit calls, each timed on `clock` and told to `metrics`; `store` itself when there is no
 * `metrics` (no wrapper, no cost).
 */
export function timeStoreCalls(store: TimedStore, clock: Clock, metrics: EngineMetrics | undefined): TimedStore {
  if (metrics === undefined) return store;
  const timed = <T>(call: TimedStoreCall, run: () => Promise<T>): Promise<T> => {
    const started = clock.now();
    const observe = () => metrics.storeCallTimed(call, (clock.now() - started) / 1_000);
    return run().then(
      (value) => (observe(), value),
      (error: unknown) => {
        observe();
        throw error;
      },
    );
  };
  return {
    claimDue: (now, options) => timed('claim', () => store.claimDue(now, options)),
    completeAttempts: (completions, now) => timed('commit', () => store.completeAttempts(completions, now)),
    completeAndClaim: (completions, now, options) => timed('commit', () => store.completeAndClaim(completions, now, options)),
  };
}
