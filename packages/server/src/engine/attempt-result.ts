import type { HeadersLike } from '@retryd/core';
import type { AttemptTimeouts } from '../domain/attempt-timeouts.js';
import type { RetryTask } from '../domain/task.js';

/**
 * What one HTTP attempt came back with: a response (any status), or an error that kept it from getting one.
 * A dispatcher never throws; every failure is an `error` result with a readable `message`.
 */
export type AttemptResult =
  | {
      kind: 'response';
      status: number;
      headers: HeadersLike;
      /** The first 4 KiB of the body as UTF-8, or null when it was empty. */
      bodySnippet: string | null;
    }
  | {
      kind: 'error';
      /** The original error (its `code` and `cause` chain are what `classifyError` reads). */
      error: unknown;
      /** One line for the attempt log, e.g. `connect ECONNREFUSED 127.0.0.1:9 (ECONNREFUSED)`. */
      message: string;
      /**
       * Set for a failure no retry can mend, found before any request was sent (a secret that cannot be revealed):
       * the task ends FAILED with this dead-letter reason, whatever `classifyError` would say.
       */
      deadLetterReason?: string;
    };

/**
 * Makes one attempt of a task's HTTP call. {@link HttpDispatcher} is the real one; the engine takes any, so a
 * guarded client (SSRF checks at connect time) or a test double can stand in.
 */
export interface AttemptDispatcher {
  /**
   * Sends the task's request as attempt `attemptNumber` (1-based over the task's life). Never rejects.
   * `signingSecrets`: the Standard Webhooks secrets to sign it with (its target's `signing.secrets`, as
   * `{{secret:NAME}}` references until `RevealingDispatcher` resolves them to `whsec_…` values); absent: not signed.
   * `timeouts`: the attempt's own, resolved from the task's and its target's (see domain/attempt-timeouts.ts); absent:
   * the dispatcher's (the service's), as for every task and target that sets none.
   */
  dispatch(task: RetryTask, attemptNumber: number, signingSecrets?: readonly string[], timeouts?: AttemptTimeouts): Promise<AttemptResult>;
  /** Lets calls in flight finish, then closes idle connections. */
  close(): Promise<void>;
  /** Aborts calls in flight (they resolve as `error` results) and closes every connection. */
  destroy(): Promise<void>;
}
