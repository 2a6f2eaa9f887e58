import type { HeadersLike } from '@retryd/core';
import type { AttemptTimeouts } from '../domain/attempt-timeouts.js';
import type { RetryTask } from '../domain/task.js';

/**
 * What one attempt came back with: an HTTP response (any status), a gRPC status, or an error that kept it from
 * getting either.
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
      /** A gRPC call that ended with a status (every outcome of a call that was made, OK included). */
      kind: 'grpc';
      /** The gRPC status code (0 is OK), e.g. 14 for UNAVAILABLE. */
      code: number;
      /** The status message (`grpc-message`), '' when none. */
      details: string;
      /**
       * `grpc-retry-pushback-ms` as the target sent it (in its trailers or headers), or undefined: how long to wait
       * before a retry (honoured as `Retry-After` is), or, when negative or not a number, not to retry at all.
       */
      pushback: string | undefined;
      /** The response message's first bytes in base64 (see `GRPC_SNIPPET_BYTES`), or null when none came back. */
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
 * Makes one attempt of a task's call. `HttpDispatcher` and `GrpcDispatcher`, behind `SchemeDispatcher`, are the real ones; the engine takes any, so a
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
