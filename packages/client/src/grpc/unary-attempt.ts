import { status as Status, type InterceptorOptions, type Metadata, type NextCall, type StatusObject } from '@grpc/grpc-js';
import { grpcStatusName } from '@retryd/core';
import { pushbackOf, type Pushback } from './pushback.js';

/** What one attempt of a unary call received, in the order the caller's listener is to get it. */
export interface AttemptAnswer {
  /** The response headers, when the server sent any before its status. */
  headers: Metadata | undefined;
  /** The response message (`null` when none came, as grpc-js reports a unary call without one). */
  message: unknown;
  /** The status, with the trailers as its `metadata`. */
  status: StatusObject;
}

/**
 * An attempt that ended with a status other than OK: what it received, and its pushback. `retryAfterMs` carries a
 * pushback's wait where core's `retry` looks for a hint on a failure.
 */
export class GrpcAttemptFailure extends Error {
  override readonly name = 'GrpcAttemptFailure';
  readonly code: number;
  readonly pushback: Pushback | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(readonly answer: AttemptAnswer) {
    super(`${grpcStatusName(answer.status.code)}: ${answer.status.details}`);
    this.code = answer.status.code;
    this.pushback = pushbackOf(answer.status.metadata);
    this.retryAfterMs = typeof this.pushback === 'object' ? this.pushback.retryInMs : undefined;
  }
}

/** A call as grpc-js hands it from one interceptor to the next (its `InterceptingCallInterface`, which it does not export). */
export type NextCallInterface = ReturnType<NextCall>;

/** One attempt's call, as {@link runUnaryAttempt} makes it. */
export interface UnaryAttempt {
  options: InterceptorOptions;
  metadata: Metadata;
  message: unknown;
  /** Cancels the attempt (a caller's cancellation, or the deadline of the whole call running out). */
  signal: AbortSignal;
  /** Told the attempt's call as it starts: the call's peer and auth context are those of the latest attempt. */
  started: (call: NextCallInterface) => void;
}

/**
 * Sends the request once through the interceptors after this one (`nextCall`) and resolves with the answer when its
 * status is OK; rejects with a {@link GrpcAttemptFailure} for any other status, a cancellation through `signal`
 * included (the status grpc-js then reports is `CANCELLED`).
 */
export function runUnaryAttempt(nextCall: NextCall, attempt: UnaryAttempt): Promise<AttemptAnswer> {
  return new Promise<AttemptAnswer>((resolve, reject) => {
    const call = nextCall(attempt.options);
    attempt.started(call);
    let headers: Metadata | undefined;
    let message: unknown = null;
    const { signal } = attempt;
    const cancel = () => call.cancelWithStatus(Status.CANCELLED, reasonText(signal.reason));
    call.start(attempt.metadata, {
      onReceiveMetadata: (received) => {
        headers = received;
      },
      onReceiveMessage: (received: unknown) => {
        message = received;
      },
      onReceiveStatus: (status) => {
        signal.removeEventListener('abort', cancel);
        const answer = { headers, message, status };
        if (status.code === Status.OK) resolve(answer);
        else reject(new GrpcAttemptFailure(answer));
      },
    });
    call.sendMessage(attempt.message);
    call.halfClose();
    if (signal.aborted) cancel();
    else signal.addEventListener('abort', cancel, { once: true });
  });
}

function reasonText(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}
