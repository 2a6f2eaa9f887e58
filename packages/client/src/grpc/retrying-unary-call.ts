import {
  Metadata,
  status as Status,
  type InterceptingListener,
  type InterceptorOptions,
  type NextCall,
  type StatusObject,
} from '@grpc/grpc-js';
import { BrokenCircuitError, RetryExhaustedError, retry, type RetryOptions, type RetryPolicy } from '@retryd/core';
import type { Task } from '../service/api-types.js';
import { copyWith } from '../shared/copy-with.js';
import { requestKey } from '../shared/request-key.js';
import { handedOffStatus, IDEMPOTENCY_KEY_METADATA, type HandoffCall } from './grpc-handoff.js';
import { GrpcAttemptFailure, runUnaryAttempt, type AttemptAnswer, type NextCallInterface } from './unary-attempt.js';

/** What the calls of one interceptor share, worked out from its options once. */
export interface GrpcCallPlan {
  /** The channel's target as given, for `getPeer` before any attempt. */
  target: string;
  /** The target's origin (`host:port`). */
  origin: string;
  /** The policy, with a deadline: the call's own, when shorter, replaces it. */
  policy: Partial<RetryPolicy> & { totalBudgetMs: number };
  /** Every call's retry options but the signal (the breaker included). */
  retryOptions: RetryOptions<AttemptAnswer>;
  wallClock: () => number;
  handoff: ((call: HandoffCall) => Promise<Task>) | undefined;
}

type MessageContext = Parameters<NextCallInterface['sendMessageWithContext']>[0];

/**
 * A unary call as the caller (and the interceptors before this one) see it: one request, one answer. It keeps the
 * request and sends it once per attempt through the interceptors after this one, each attempt a call of its own, and
 * passes on only the last attempt's answer.
 */
export class RetryingUnaryCall implements NextCallInterface {
  #metadata: Metadata | undefined;
  #listener: Partial<InterceptingListener> = {};
  #message: unknown;
  #hasMessage = false;
  #started = false;
  #ended = false;
  #serialized: Uint8Array | undefined;
  #current: NextCallInterface | undefined;
  // Made per call: a caller's cancellation ends this call's attempts and sleeps, nobody else's.
  readonly #cancelled = new AbortController();

  constructor(
    private readonly options: InterceptorOptions,
    private readonly nextCall: NextCall,
    private readonly plan: GrpcCallPlan,
  ) {}

  start(metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    this.#metadata = metadata;
    this.#listener = listener ?? {};
  }

  sendMessageWithContext(context: MessageContext, message: unknown): void {
    this.#message = message;
    this.#hasMessage = true;
    // The message is kept here, to be written by each attempt: as far as the caller is concerned it is sent.
    context.callback?.();
  }

  sendMessage(message: unknown): void {
    this.sendMessageWithContext({}, message);
  }

  // Each attempt reads its own answer (grpc-js's unary call does); the caller gets it when the retries end.
  startRead(): void {}

  halfClose(): void {
    if (this.#started || this.#ended) return;
    this.#started = true;
    this.#run();
  }

  cancelWithStatus(code: Status, details: string): void {
    if (this.#ended) return;
    this.#cancelled.abort(new DOMException(details, 'AbortError'));
    this.#end({ code, details, metadata: new Metadata() });
  }

  getPeer(): string {
    return this.#current?.getPeer() ?? this.plan.target;
  }

  getAuthContext(): ReturnType<NextCallInterface['getAuthContext']> {
    return this.#current?.getAuthContext() ?? null;
  }

  #run(): void {
    const { plan } = this;
    if (!this.#hasMessage) return this.#end(statusOf(Status.INTERNAL, 'the unary call sent no request message'));
    const metadata = this.#metadata ?? new Metadata();
    const deadline = deadlineMs(this.options.deadline);
    let policy = plan.policy;
    if (deadline !== undefined) {
      // A whole ms short of the deadline: grpc-js counts deadlines in whole ms, and an attempt started with less than
      // one left would be failed DEADLINE_EXCEEDED before it is sent.
      const remainingMs = Math.floor(deadline - plan.wallClock()) - 1;
      if (remainingMs <= (policy.estimatedCallMs ?? 0)) return this.#end(statusOf(Status.DEADLINE_EXCEEDED, 'the deadline passed before the first attempt'));
      if (remainingMs < policy.totalBudgetMs) policy = copyWith(policy, { totalBudgetMs: remainingMs });
    }
    const budgetMs = policy.totalBudgetMs;
    const key = this.#idempotencyKey(metadata);
    const retryOptions = copyWith(plan.retryOptions, { signal: this.#cancelled.signal });
    void retry(
      (context) => {
        // Each attempt gets what is left of the call's deadline, or of the policy's, so the server knows it too.
        const now = plan.wallClock();
        const attemptDeadline = Math.min(deadline ?? Infinity, now + budgetMs - context.elapsedMs);
        // A wait that ended late (a busy event loop) may leave no time: the attempt is not sent, and this ends the call.
        if (attemptDeadline - now < 1) throw new DOMException(`the deadline passed before attempt ${context.attempt} could start`, 'TimeoutError');
        const attemptMetadata = metadata.clone();
        attemptMetadata.set(IDEMPOTENCY_KEY_METADATA, key);
        return runUnaryAttempt(this.nextCall, {
          options: copyWith(this.options, { deadline: attemptDeadline }),
          metadata: attemptMetadata,
          message: this.#message,
          signal: context.signal,
          started: (call) => (this.#current = call),
        });
      },
      policy,
      retryOptions,
    ).then(
      (answer) => this.#deliver(answer),
      (error: unknown) => this.#failed(error, metadata, key),
    );
  }

  /**
   * The caller's `idempotency-key`, else one derived once from the target, the method and the serialized request, as
   * the retrying fetch derives one for a POST: the same call made twice (the caller's own retry after a deadline, a
   * double submit) carries the same key, so the server, and retryd when the call is handed over, can tell it is one.
   * A random one where it cannot be derived (a target that is no `host:port`, a request that does not serialize).
   */
  #idempotencyKey(metadata: Metadata): string {
    const [given] = metadata.get(IDEMPOTENCY_KEY_METADATA);
    if (typeof given === 'string' && given !== '') return given;
    const body = this.#body();
    const path = this.options.method_definition.path;
    return requestKey(body === undefined ? undefined : { method: 'POST', url: `http://${this.plan.origin}${path}`, body });
  }

  /** The request as the server receives it, serialized once for a key and a hand-off. */
  #body(): Uint8Array | undefined {
    if (this.#serialized === undefined) {
      try {
        this.#serialized = this.options.method_definition.requestSerialize(this.#message);
      } catch {
        // Each attempt fails INTERNAL with the serializer's error (grpc-js reports it): no key or task needs it.
        return undefined;
      }
    }
    return this.#serialized;
  }

  async #failed(error: unknown, metadata: Metadata, idempotencyKey: string): Promise<void> {
    if (this.#ended) return;
    // The server's own answer when the call ends on one (a final status, or retries that ended on a retryable one),
    // as the retrying fetch returns the last response.
    const last = error instanceof GrpcAttemptFailure ? error : error instanceof RetryExhaustedError && error.lastError instanceof GrpcAttemptFailure ? error.lastError : undefined;
    const failure: AttemptAnswer = last?.answer ?? { headers: undefined, message: null, status: this.#statusOfGiveUp(error) };
    // Only a call that failed in a way worth retrying is handed over: a final status would fail there too, and a
    // pushback of -1 asks for no retry at all.
    const { handoff } = this.plan;
    const body = this.#body();
    if (handoff !== undefined && body !== undefined && (error instanceof RetryExhaustedError || error instanceof BrokenCircuitError || isTimeout(error))) {
      const path = this.options.method_definition.path;
      const handOver = metadata.clone();
      handOver.set(IDEMPOTENCY_KEY_METADATA, idempotencyKey);
      try {
        const task = await handoff({ path, body, metadata: handOver, idempotencyKey });
        return this.#end(handedOffStatus(task, failure.status));
      } catch (handoffError) {
        const reason = handoffError instanceof Error ? handoffError.message : String(handoffError);
        return this.#deliver(copyWith(failure, { status: copyWith(failure.status, { details: `${failure.status.details}; it could not be handed to retryd: ${reason}` }) }));
      }
    }
    this.#deliver(failure);
  }

  /** The status of a call whose retries ended without a server's answer to pass on. */
  #statusOfGiveUp(error: unknown): StatusObject {
    const cause = error instanceof RetryExhaustedError ? error.lastError : error;
    if (cause instanceof BrokenCircuitError) return statusOf(Status.UNAVAILABLE, `the circuit of ${this.plan.origin} is open: ${cause.message}`);
    if (isTimeout(cause)) return statusOf(Status.DEADLINE_EXCEEDED, cause.message);
    return statusOf(Status.INTERNAL, error instanceof Error ? error.message : String(error));
  }

  #deliver(answer: AttemptAnswer): void {
    if (this.#ended) return;
    const listener = this.#listener;
    if (answer.headers !== undefined) listener.onReceiveMetadata?.(answer.headers);
    listener.onReceiveMessage?.(answer.message);
    this.#end(answer.status);
  }

  #end(status: StatusObject): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#listener.onReceiveStatus?.(status);
  }
}

/** The deadline ran out: during an attempt (core's `retry` aborts it with a `TimeoutError`) or before one could start. */
function isTimeout(error: unknown): error is Error {
  return (error as { name?: unknown } | null)?.name === 'TimeoutError';
}

function statusOf(code: Status, details: string): StatusObject {
  return { code, details, metadata: new Metadata() };
}

/** A grpc-js deadline (a `Date`, or ms since the epoch, `Infinity` for none) in ms, or undefined for none. */
function deadlineMs(deadline: InterceptorOptions['deadline']): number | undefined {
  if (deadline === undefined) return undefined;
  const ms = deadline instanceof Date ? deadline.getTime() : deadline;
  return Number.isFinite(ms) ? ms : undefined;
}
