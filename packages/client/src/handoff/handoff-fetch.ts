import { classifyHttpStatus, HttpOutcome, isRetryableError } from '@retryd/core';
import { stripCredentials, type CredentialRules } from '../credentials/strip-credentials.js';
import type { EnqueueRequest, RetryPolicy, Task } from '../service/api-types.js';
import type { RetrydClient } from '../service/retryd-client.js';
import type { HandoffSpool } from '../spool/handoff-spool.js';
import { serviceUnavailable } from '../spool/service-answer.js';
import { handoffKey } from './handoff-key.js';
import { RetrydSpooled } from './retryd-spooled.js';

/** How a request handler's downstream calls are handed to the retryd service when they fail in a retryable way. */
export interface HandoffOptions extends CredentialRules {
  /** The client of the service the calls are handed to. */
  client: RetrydClient;
  /** The registered policy the service retries with. Default: the service's `default`. Not with `policy`. */
  policyId?: string;
  /** An inline policy instead. Not with `policyId`. */
  policy?: RetryPolicy;
  /** The fetch of the first try. Default the global `fetch`. */
  fetch?: typeof fetch;
  /**
   * Where a call is kept when retryd cannot take it (no answer, 408, 429, a 5xx), to be forwarded when it answers
   * again: the call is then answered `202 { status: 'spooled', idempotencyKey }` ({@link RetrydSpooled}) instead of
   * failing. While the spool finds retryd unavailable, calls go straight to it, behind those already there. Default:
   * none, and such a call fails (an `AggregateError` of retryd's error and the call's).
   * @example `spool: await HandoffSpool.open({ client, storage: fileSpoolStorage({ directory: '/var/lib/app/retryd-spool' }) })`
   */
  spool?: HandoffSpool;
}

/** What a handler calls through: the first try here, the retries in the service. */
export interface RequestRetryd {
  /**
   * Makes the call now, as `fetch` does, with an `Idempotency-Key`: the request's own, else one derived from its
   * method, URL and body (see `handoffKey`: the same call made twice gets one key, and the service makes one task of
   * it; a call whose only difference from another is its credentials needs a key of its own). The answer comes
   * back as it is when it succeeds or fails for good (a 400 is the handler's to read). When it fails in a way worth
   * retrying (a network error, a timeout, 408, 425, 429, 5xx but 501), the call is enqueued to the service with the
   * same key and its credentials stripped (see `stripCredentials`), and this rejects with {@link RetrydQueued}, which
   * the framework integration answers with `202 { status: 'queued', taskId }`; when retryd cannot take it and there
   * is a `spool`, it is spooled and this rejects with {@link RetrydSpooled} (`202 { status: 'spooled', idempotencyKey }`).
   * @throws SpoolFullError when the call should be spooled but the spool is full
   */
  fetch(url: string | URL, init?: RequestInit): Promise<Response>;
}

/** The call was handed to the service: the handler's work ends here and the answer is `202 { status: 'queued', taskId }`. */
export class RetrydQueued extends Error {
  override readonly name = 'RetrydQueued';
  readonly code = 'RETRYD_QUEUED';
  readonly taskId: string;

  constructor(readonly task: Task) {
    super(`the call to ${task.targetKey} failed and was handed to retryd as task ${task.taskId}`);
    this.taskId = task.taskId;
  }
}

/** True for a {@link RetrydQueued}, also one made by another copy of this package. */
export function isRetrydQueued(error: unknown): error is RetrydQueued {
  return error instanceof RetrydQueued || (error instanceof Error && (error as { code?: unknown }).code === 'RETRYD_QUEUED' && 'taskId' in error);
}

/** The body `202` answers: what a caller needs to follow the call up. */
export function queuedAnswer(error: RetrydQueued): { status: 'queued'; taskId: string } {
  return { status: 'queued', taskId: error.taskId };
}

/** A body the service can store: a string (JSON or not), form fields, or none. */
function bodyText(body: RequestInit['body']): string | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  throw new TypeError('init.body must be a string, URLSearchParams or absent for a call that may be handed to retryd');
}

/** The fetch handlers call through (see {@link RequestRetryd}). */
export function handoffFetch(options: HandoffOptions): RequestRetryd['fetch'] {
  const firstTry = options.fetch ?? ((input: string | URL, init?: RequestInit) => fetch(input, init));
  // Checked once, at set-up: a secret name that breaks the rule is the integrator's to fix, not a request's.
  stripCredentials({}, options);
  return async (url, init = {}) => {
    const headers = new Headers(init.headers);
    const method = (init.method ?? 'GET').toUpperCase();
    const body = bodyText(init.body);
    const idempotencyKey = headers.get('idempotency-key') ?? (await handoffKey(method, String(url), body));
    headers.set('idempotency-key', idempotencyKey);
    let failure: unknown;
    try {
      const response = await firstTry(url, { ...init, headers, ...(body === undefined ? {} : { body }) });
      if (classifyHttpStatus(response.status) !== HttpOutcome.RETRYABLE) return response;
      // The answer is not read: the service makes the next attempt.
      await response.body?.cancel();
    } catch (error) {
      if (!isRetryableError(error)) throw error;
      failure = error;
    }
    const plain: Record<string, string> = {};
    headers.forEach((value, name) => {
      if (name !== 'idempotency-key') plain[name] = value;
    });
    const request: EnqueueRequest & { idempotencyKey: string } = {
      targetUrl: String(url),
      method: method as EnqueueRequest['method'],
      headers: stripCredentials(plain, options).headers,
      idempotencyKey,
      ...(body === undefined ? {} : { body }),
      ...(options.policyId === undefined ? {} : { policyId: options.policyId }),
      ...(options.policy === undefined ? {} : { policy: options.policy }),
    };
    const { spool } = options;
    if (spool?.waitingForRetryd === true) throw new RetrydSpooled(await spool.spool(request, failure), { cause: failure });
    const { task } = await options.client.enqueueTask(request).catch(async (error: unknown) => {
      if (spool !== undefined && serviceUnavailable(error)) throw new RetrydSpooled(await spool.spool(request, error), { cause: error });
      throw new AggregateError([error, ...(failure === undefined ? [] : [failure])], `the call failed and could not be handed to retryd: ${String(error)}`);
    });
    // retryd answers: what the spool holds can go now.
    void spool?.forward();
    throw new RetrydQueued(task);
  };
}
