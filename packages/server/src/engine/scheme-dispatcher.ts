import type { AttemptTimeouts } from '../domain/attempt-timeouts.js';
import type { RetryTask } from '../domain/task.js';
import type { AttemptDispatcher, AttemptResult } from './attempt-result.js';

/** The dispatchers of a {@link SchemeDispatcher}: one for HTTP targets, one for gRPC targets. */
export interface SchemeDispatchers {
  /** `http://` and `https://` targets (and any URL that is not gRPC: the HTTP dispatcher refuses other schemes). */
  http: AttemptDispatcher;
  /** `grpc://` and `grpcs://` targets. */
  grpc: AttemptDispatcher;
}

/**
 * One dispatcher for the engine that hands each attempt to the one its target's scheme calls for: `grpc:` and `grpcs:`
 * to `grpc`, everything else to `http`. The engine, the secret reveal and the protections above it see one
 * dispatcher, whatever the target speaks.
 *
 * @example
 * ```ts
 * const dispatcher = new SchemeDispatcher({ http: new HttpDispatcher(options), grpc: new GrpcDispatcher(options) });
 * ```
 */
export class SchemeDispatcher implements AttemptDispatcher {
  constructor(private readonly dispatchers: SchemeDispatchers) {}

  dispatch(task: RetryTask, attemptNumber: number, signingSecrets?: readonly string[], timeouts?: AttemptTimeouts): Promise<AttemptResult> {
    // A prefix test, not a parse: the URL was checked at enqueue, and this runs on every attempt.
    const url = task.targetUrl;
    const inner = url.startsWith('grpc://') || url.startsWith('grpcs://') ? this.dispatchers.grpc : this.dispatchers.http;
    // Called with the arguments it was given: a dispatcher may tell an absent argument from an undefined one.
    if (timeouts !== undefined) return inner.dispatch(task, attemptNumber, signingSecrets, timeouts);
    return signingSecrets === undefined ? inner.dispatch(task, attemptNumber) : inner.dispatch(task, attemptNumber, signingSecrets);
  }

  async close(): Promise<void> {
    await Promise.all([this.dispatchers.http.close(), this.dispatchers.grpc.close()]);
  }

  async destroy(): Promise<void> {
    await Promise.all([this.dispatchers.http.destroy(), this.dispatchers.grpc.destroy()]);
  }
}
