import { systemClock, type Clock } from '@retryd/core';
import { Metadata, type ServiceError, type StatusObject } from '@grpc/grpc-js';
import type { AttemptTimeouts } from '../domain/attempt-timeouts.js';
import { grpcTargetOf } from '../domain/grpc-target.js';
import type { RetryTask } from '../domain/task.js';
import { refusalError, TargetBlockedError } from '../security/guarded-connector.js';
import { TargetGuard, type TargetVerdict } from '../security/target-guard.js';
import { WEBHOOK_SECRET_RULE } from '../security/webhook-signature.js';
import type { AttemptDispatcher, AttemptResult } from './attempt-result.js';
import { DeadLetterReason } from '../domain/dead-letter-reason.js';
import { describeError } from './describe-error.js';
import { GrpcChannels } from './grpc-channels.js';
import { attemptHeaders, signAttemptHeaders, type LoadBody } from './http-dispatcher.js';

/**
 * Bytes of a gRPC response message kept for the attempt log, as base64: 3,072 bytes are 4,096 characters, the most an
 * HTTP response's excerpt (4,096 bytes of UTF-8) takes. A message is binary (protobuf, usually): base64 keeps it
 * exact where UTF-8 would mangle it.
 */
export const GRPC_SNIPPET_BYTES = 3072;

/** How long a host name's checked addresses are used before the guard resolves and checks it again, in ms. */
export const GRPC_RESOLVE_TTL_MS = 30_000;

/** Longest status message kept from a target, in characters: one line in the attempt log. */
const MAX_DETAILS_CHARS = 500;

/** Options of {@link GrpcDispatcher}. */
export interface GrpcDispatcherOptions {
  /** Loads `bodyRef` bodies (the message's raw bytes). Without it, a task with a `bodyRef` fails its attempt. */
  loadBody?: LoadBody | undefined;
  /** The deadline of an attempt's call, in ms, when the attempt brings none of its own. Default 30 000. */
  attemptTimeoutMs?: number | undefined;
  /** Checks the address of every target before its channel is made. Default: a guard with no allowance. */
  targetGuard?: TargetGuard | undefined;
  /** PEM certificates trusted for `grpcs://` targets besides Node's bundled roots (`--grpc-ca-file`). */
  extraCa?: Buffer | undefined;
  /** Signs (Standard Webhooks) with its time, and ages resolved addresses. Default `systemClock`. */
  clock?: Clock | undefined;
}

const identity = (bytes: Buffer): Buffer => bytes;

/**
 * Makes attempts of unary gRPC calls with grpc-js, without a `.proto`: the task's body is the request message already
 * serialised (base64 in `body`, raw bytes in a `bodyRef` blob), sent as it is, and the response message's bytes are
 * kept (base64, {@link GRPC_SNIPPET_BYTES}). The task's headers go as metadata (`-bin` values decoded from base64),
 * with retryd's own: `idempotency-key` (the same on every attempt), `retryd-attempt`, `retryd-task-id`, `traceparent`
 * when traced, and the Standard Webhooks headers when the target signs. The attempt's timeout is the call's deadline
 * (sent as `grpc-timeout`); grpc-js keeps it on the system's time, whatever clock the engine runs on.
 *
 * The target's host is checked by the `targetGuard` before each call (a name's verdict kept {@link GRPC_RESOLVE_TTL_MS})
 * and the channel dials the checked address (see {@link GrpcChannels}); a refused one ends the attempt with a
 * `TargetBlockedError`. Every call that was made comes back as a `grpc` result with its status; only a failure before
 * the call (a body that cannot be loaded, a refused address, a header grpc-js refuses) is an `error` result.
 *
 * @example
 * ```ts
 * const grpc = new GrpcDispatcher({ targetGuard: guard, attemptTimeoutMs: 10_000 });
 * const result = await grpc.dispatch(task, task.attemptNumber + 1); // { kind: 'grpc', code: 0, … }
 * await grpc.close();
 * ```
 */
export class GrpcDispatcher implements AttemptDispatcher {
  readonly #loadBody: LoadBody | undefined;
  readonly #timeouts: AttemptTimeouts;
  readonly #guard: TargetGuard;
  readonly #clock: Clock;
  readonly #channels: GrpcChannels;
  /** Checked addresses of host names, with when they were checked. */
  readonly #resolved = new Map<string, { verdict: TargetVerdict; at: number }>();

  constructor(options: GrpcDispatcherOptions = {}) {
    this.#loadBody = options.loadBody;
    const attemptTimeoutMs = options.attemptTimeoutMs ?? 30_000;
    this.#timeouts = { attemptTimeoutMs, connectTimeoutMs: attemptTimeoutMs };
    this.#guard = options.targetGuard ?? new TargetGuard();
    this.#clock = options.clock ?? systemClock;
    this.#channels = new GrpcChannels(options.extraCa);
  }

  async dispatch(task: RetryTask, attemptNumber: number, signingSecrets?: readonly string[], timeouts?: AttemptTimeouts): Promise<AttemptResult> {
    const quoted = timeouts ?? this.#timeouts;
    const url = URL.parse(task.targetUrl);
    const target = url === null ? { rule: 'an absolute URL' } : grpcTargetOf(url);
    if ('rule' in target) {
      const error = new TargetBlockedError(`the target URL is not a gRPC method: it must be ${target.rule}`);
      return { kind: 'error', error, message: error.message };
    }
    let message: Buffer;
    if (task.bodyRef !== null) {
      if (this.#loadBody === undefined) {
        return { kind: 'error', error: new Error('no blob store'), message: `cannot load body ${task.bodyRef}: no blob store configured` };
      }
      try {
        const data = await this.#loadBody(task.bodyRef);
        message = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
      } catch (error) {
        return { kind: 'error', error, message: `cannot load body ${task.bodyRef}: ${describeError(error, quoted)}` };
      }
    } else {
      message = task.body === null ? Buffer.alloc(0) : Buffer.from(task.body, 'base64');
    }
    const headers = attemptHeaders(task, attemptNumber);
    if (signingSecrets !== undefined && !signAttemptHeaders(headers, task, signingSecrets, Math.floor(this.#clock.now() / 1000), message)) {
      const error = new Error(`a signing secret of the target is not a Standard Webhooks secret (${WEBHOOK_SECRET_RULE})`);
      return { kind: 'error', error, message: error.message, deadLetterReason: DeadLetterReason.SECRET_UNAVAILABLE };
    }
    let metadata: Metadata;
    try {
      metadata = metadataOf(headers);
    } catch (error) {
      return { kind: 'error', error, message: `invalid gRPC metadata: ${describeError(error, quoted)}` };
    }
    const verdict = await this.#check(target.hostname);
    if (!verdict.ok) {
      const error = refusalError(verdict);
      return { kind: 'error', error, message: describeError(error, quoted) };
    }
    const channel = this.#channels.channelFor(target, verdict.addresses[0] as string);
    return new Promise<AttemptResult>((resolve) => {
      let headerPushback: string | undefined;
      // Wall-clock time: grpc-js times the deadline and sends it as grpc-timeout from Date.now().
      const deadline = new Date(Date.now() + quoted.attemptTimeoutMs);
      const call = channel.makeUnaryRequest(target.path, identity, identity, message, metadata, { deadline }, (error: ServiceError | null, reply?: Buffer) => {
        if (error === null) {
          resolve(grpcResult({ code: 0, details: '', metadata: new Metadata() }, headerPushback, reply));
        } else {
          resolve(grpcResult(error, headerPushback, undefined));
        }
      });
      // A pushback may come in the response headers rather than the trailers.
      call.on('metadata', (initial: Metadata) => {
        headerPushback = firstText(initial, 'grpc-retry-pushback-ms');
      });
    });
  }

  /** Lets calls in flight finish (grpc-js lets them) and closes every channel. */
  close(): Promise<void> {
    this.#channels.close();
    return Promise.resolve();
  }

  /** As {@link close}: a call in flight ends at its deadline at the latest. */
  destroy(): Promise<void> {
    return this.close();
  }

  /** The guard's verdict on a host: at once for an address, else a name's, resolved again after {@link GRPC_RESOLVE_TTL_MS}. */
  async #check(hostname: string): Promise<TargetVerdict> {
    const now = this.#guard.checkHostNow(hostname);
    if (now !== undefined) return now;
    const at = this.#clock.now();
    const known = this.#resolved.get(hostname);
    if (known !== undefined && known.verdict.ok && at - known.at < GRPC_RESOLVE_TTL_MS) return known.verdict;
    const verdict = await this.#guard.checkHost(hostname);
    if (this.#resolved.size >= 4_096) this.#resolved.clear();
    // Only an allowed name is remembered: a refusal (or a failed lookup) is asked again at the next attempt.
    if (verdict.ok) this.#resolved.set(hostname, { verdict, at });
    return verdict;
  }
}

/** The attempt's headers as gRPC metadata: `-bin` values decoded from base64, every key in lower case. */
function metadataOf(headers: Record<string, string>): Metadata {
  const metadata = new Metadata();
  for (const name in headers) {
    const value = headers[name] as string;
    const key = name.toLowerCase();
    if (key.endsWith('-bin')) metadata.set(key, Buffer.from(value, 'base64'));
    else metadata.set(key, value);
  }
  return metadata;
}

function firstText(metadata: Metadata, key: string): string | undefined {
  const value = metadata.get(key)[0];
  return typeof value === 'string' ? value : undefined;
}

function grpcResult(status: Pick<StatusObject, 'code' | 'details' | 'metadata'>, headerPushback: string | undefined, reply: Buffer | undefined): AttemptResult {
  const details = status.details.length > MAX_DETAILS_CHARS ? `${status.details.slice(0, MAX_DETAILS_CHARS - 1)}…` : status.details;
  const bodySnippet = reply === undefined || reply.length === 0 ? null : reply.subarray(0, GRPC_SNIPPET_BYTES).toString('base64');
  return { kind: 'grpc', code: status.code, details, pushback: firstText(status.metadata, 'grpc-retry-pushback-ms') ?? headerPushback, bodySnippet };
}
