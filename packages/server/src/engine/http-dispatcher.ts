import type { IncomingHttpHeaders } from 'node:http';
import { systemClock, type Clock } from '@retryd/core';
import { Agent, type Dispatcher } from 'undici';
import type { AttemptTimeouts } from '../domain/attempt-timeouts.js';
import type { RetryTask } from '../domain/task.js';
import { guardedConnector, TargetBlockedError } from '../security/guarded-connector.js';
import { TargetGuard } from '../security/target-guard.js';
import { WEBHOOK_HEADERS, WEBHOOK_SECRET_RULE, webhookKey, webhookSignature } from '../security/webhook-signature.js';
import type { AttemptDispatcher, AttemptResult } from './attempt-result.js';
import { clearClockTimer, setClockTimer } from './clock-timer.js';
import { DeadLetterReason } from '../domain/dead-letter-reason.js';
import { describeError } from './describe-error.js';
import { TargetUrlParser, type TargetUrlParts } from './target-url-parts.js';

/** Reads a large body that the task keeps in the blob store (`bodyRef`): a `BlobStore.get`. */
export type LoadBody = (ref: string) => Promise<Uint8Array | string>;

/** Options of {@link HttpDispatcher}. */
export interface HttpDispatcherOptions {
  /** Loads `bodyRef` bodies. Without it, a task with a `bodyRef` fails its attempt with a clear message. */
  loadBody?: LoadBody | undefined;
  /** Most time one attempt may take, from sending the request to reading the snippet, in ms. Default 30 000. */
  attemptTimeoutMs?: number | undefined;
  /**
   * Most time to open a TCP (and TLS) connection, in ms. Default 5 000. An attempt given a connect timeout of its own
   * (a task's or a target's) goes through a pool of its own for that timeout (see {@link MAX_CONNECT_POOLS}).
   */
  connectTimeoutMs?: number | undefined;
  /** Most connections to one origin (keep-alive pool size). Default 256. */
  connectionsPerOrigin?: number | undefined;
  /** How long an idle keep-alive connection is kept, in ms. Default 4 000 (below Node's server default of 5 s). */
  keepAliveTimeoutMs?: number | undefined;
  /**
   * Checks every connection the pooled `Agent` opens, and pins it to the checked address (see `guardedConnector`).
   * Default: a guard with no allowance, which refuses every blocked range (loopback and private networks included).
   */
  targetGuard?: TargetGuard | undefined;
  /**
   * The undici dispatcher to send through instead of the pooled `Agent` built from the options above (a proxy, say).
   * It makes its own connections: `targetGuard` does not check them, and a connect timeout is its own (an attempt's
   * `connectTimeoutMs` does not apply). The dispatcher does not close or destroy one it was given.
   */
  agent?: Dispatcher | undefined;
  /** Times each attempt (`attemptTimeoutMs`). Default `systemClock`; the engine passes its own. */
  clock?: Clock | undefined;
}

/**
 * The attempt ran out of time (`attemptTimeoutMs`, from sending the request to the end of the snippet). Its name is
 * `TimeoutError`, as `AbortSignal.timeout()`'s, so `classifyError` retries it.
 */
export class AttemptTimeoutError extends Error {
  override readonly name = 'TimeoutError';
  readonly code = 'ATTEMPT_TIMEOUT';
  constructor(readonly timeoutMs: number) {
    super(`no response within ${timeoutMs} ms`);
  }
}

/**
 * Most pools kept for connect timeouts other than the dispatcher's own. undici applies a connect timeout per pool (its
 * connector is the pool's, and a connection serves many requests), so each distinct timeout that tasks or targets ask
 * for gets an `Agent` of its own, made when first needed; past this many, the least recently used one is closed
 * (its calls in flight finish first) and made again if asked for later. Tasks and targets that set none share the
 * default pool, as before: they pay nothing for this.
 */
export const MAX_CONNECT_POOLS = 16;

/** Bytes of the response body kept for the attempt log. */
export const SNIPPET_BYTES = 4096;

/**
 * Bytes of a response body read (and thrown away) after the snippet so the keep-alive connection can be reused.
 * A longer body closes the connection instead: reconnecting is cheaper than downloading megabytes nobody reads.
 */
const DRAIN_LIMIT_BYTES = 64 * 1024;

/**
 * One attempt as an undici dispatch handler: keeps the status, the headers and the first {@link SNIPPET_BYTES} of
 * the body, discards the rest as it streams by (nothing is buffered), and settles exactly once. Used instead of
 * `request()`, whose body stream, abort-signal wiring and async-hooks resource per call cost more CPU than the
 * rest of an attempt together (measured on W1); the pool, timeouts and no-redirect behaviour are the same.
 */
class AttemptHandler implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private status = 0;
  private headers: Record<string, string | string[] | undefined> = {};
  private chunks: Buffer[] = [];
  private kept = 0;
  private seen = 0;
  private settled = false;
  private timedOut: Error | null = null;
  /** The attempt's timeout: a timer of the injected clock, cleared when the attempt settles first. */
  private readonly timer: unknown;

  constructor(
    private readonly resolve: (result: AttemptResult) => void,
    private readonly describe: (error: unknown) => string,
    timeoutMs: number,
    private readonly clock: Clock,
  ) {
    this.timer = setClockTimer(clock, timeoutMs, () => this.timeout(new AttemptTimeoutError(timeoutMs)));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.timedOut !== null) controller.abort(this.timedOut);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    // 1xx are interim: the final response follows.
    if (statusCode < 200) return;
    this.status = statusCode;
    this.headers = headers;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.seen += chunk.length;
    if (this.kept < SNIPPET_BYTES) {
      const part = chunk.length > SNIPPET_BYTES - this.kept ? chunk.subarray(0, SNIPPET_BYTES - this.kept) : chunk;
      this.chunks.push(part);
      this.kept += part.length;
    }
    if (this.seen > DRAIN_LIMIT_BYTES) {
      this.settleResponse();
      controller.abort(new Error('response body discarded'));
    }
  }

  onResponseEnd(): void {
    this.settleResponse();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.fail(error);
  }

  /** Ends the attempt with `error`, unless a status already arrived: then a body that broke off keeps what was read. */
  fail(error: unknown): void {
    if (this.status !== 0) this.settleResponse();
    else this.settle({ kind: 'error', error, message: this.describe(error) });
  }

  private timeout(error: Error): void {
    if (this.settled) return;
    this.timedOut = error;
    if (this.status !== 0) this.settleResponse();
    this.controller?.abort(error);
  }

  private settleResponse(): void {
    const bodySnippet = this.kept === 0 ? null : Buffer.concat(this.chunks, this.kept).toString('utf8');
    this.settle({ kind: 'response', status: this.status, headers: this.headers, bodySnippet });
  }

  private settle(result: AttemptResult): void {
    if (this.settled) return;
    this.settled = true;
    clearClockTimer(this.clock, this.timer);
    this.resolve(result);
  }
}

const OWN_HEADERS = new Set(['idempotency-key', 'retryd-attempt', 'retryd-task-id', 'traceparent', 'host', 'content-length']);

/**
 * The request headers of attempt `attemptNumber`: the task's own, then retryd's, which always win — a task cannot
 * send an `Idempotency-Key` that differs from its key in any letter case.
 */
export function attemptHeaders(task: RetryTask, attemptNumber: number): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name in task.headers) {
    const value = task.headers[name];
    // A secret (sealed or a reference) is never sent as it is stored: RevealingDispatcher gives plain values.
    if (typeof value === 'string' && !OWN_HEADERS.has(name.toLowerCase())) headers[name] = value;
  }
  headers['idempotency-key'] = task.idempotencyKey;
  headers['retryd-attempt'] = String(attemptNumber);
  headers['retryd-task-id'] = task.taskId;
  if (task.traceContext !== null) headers['traceparent'] = task.traceContext;
  return headers;
}

/**
 * Signs a request per Standard Webhooks, in place: `webhook-id` (the idempotency key), `webhook-timestamp` (`timestamp`,
 * in seconds) and `webhook-signature` over the exact `body` sent. Like retryd's own headers, they replace any of the
 * task's that differ only in letter case. False when a secret is not a `whsec_…` value (nothing may be sent).
 */
export function signAttemptHeaders(
  headers: Record<string, string>,
  task: RetryTask,
  secrets: readonly string[],
  timestamp: number,
  body: string | Uint8Array | null,
): boolean {
  const keys: Buffer[] = [];
  for (const secret of secrets) {
    const key = webhookKey(secret);
    if (key === undefined) return false;
    keys.push(key);
  }
  for (const name in headers) if ((WEBHOOK_HEADERS as readonly string[]).includes(name.toLowerCase())) delete headers[name];
  headers['webhook-id'] = task.idempotencyKey;
  headers['webhook-timestamp'] = String(timestamp);
  headers['webhook-signature'] = webhookSignature(keys, task.idempotencyKey, timestamp, body);
  return true;
}

/**
 * Makes attempts over HTTP with undici: a keep-alive pool per origin (bounded connections), a connect timeout,
 * a per-attempt timeout (request sent to snippet read), no redirects followed (a 3xx is a result, not
 * an instruction), and at most {@link SNIPPET_BYTES} of the response kept; signed per Standard Webhooks when given
 * signing secrets (`whsec_…` values), with the clock's time. Every connection is checked by the
 * `targetGuard` and goes to the address it checked; a refused one ends its attempts with a `TargetBlockedError`.
 *
 * @example
 * ```ts
 * const dispatcher = new HttpDispatcher({ loadBody: (ref) => blobs.get(ref), attemptTimeoutMs: 10_000 });
 * const result = await dispatcher.dispatch(task, task.attemptNumber + 1);
 * await dispatcher.close();
 * ```
 */
export class HttpDispatcher implements AttemptDispatcher {
  private readonly agent: Dispatcher;
  private readonly ownsAgent: boolean;
  private readonly loadBody: LoadBody | undefined;
  private readonly attemptTimeoutMs: number;
  private readonly connectTimeoutMs: number;
  /** The service's timeouts, quoted by the messages of attempts that have none of their own. */
  private readonly serviceTimeouts: AttemptTimeouts;
  private readonly clock: Clock;
  /** Makes a pool with a given connect timeout; undefined when the dispatcher was given its `agent`. */
  private readonly makeAgent: ((connectTimeoutMs: number) => Agent) | undefined;
  /** The pools of other connect timeouts, least recently used first (see {@link MAX_CONNECT_POOLS}). */
  private readonly connectPools = new Map<number, Agent>();
  /** Pools let go of while calls were in flight through them, until they are closed. */
  private readonly retiredPools = new Set<Agent>();
  /** Each target URL parsed once, not per attempt. */
  private readonly targetUrls = new TargetUrlParser();

  constructor(options: HttpDispatcherOptions = {}) {
    this.loadBody = options.loadBody;
    this.clock = options.clock ?? systemClock;
    this.attemptTimeoutMs = options.attemptTimeoutMs ?? 30_000;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 5_000;
    this.serviceTimeouts = { attemptTimeoutMs: this.attemptTimeoutMs, connectTimeoutMs: this.connectTimeoutMs };
    this.ownsAgent = options.agent === undefined;
    const guard = options.targetGuard ?? new TargetGuard();
    this.makeAgent =
      options.agent === undefined
        ? (connectTimeoutMs) =>
            new Agent({
              connections: options.connectionsPerOrigin ?? 256,
              // Checked per connection, not per request: a keep-alive connection is reused without another lookup.
              connect: guardedConnector(guard, { timeoutMs: connectTimeoutMs }),
              keepAliveTimeout: options.keepAliveTimeoutMs ?? 4_000,
              // Backstops only: every dispatch sets its own from its attempt timeout, and its timer fires first.
              headersTimeout: this.attemptTimeoutMs + 1_000,
              bodyTimeout: this.attemptTimeoutMs + 1_000,
            })
        : undefined;
    this.agent = options.agent ?? (this.makeAgent as (connectTimeoutMs: number) => Agent)(this.connectTimeoutMs);
  }

  async dispatch(task: RetryTask, attemptNumber: number, signingSecrets?: readonly string[], timeouts?: AttemptTimeouts): Promise<AttemptResult> {
    const quoted = timeouts ?? this.serviceTimeouts;
    let body: string | Uint8Array | null = task.body;
    if (task.bodyRef !== null) {
      if (this.loadBody === undefined) {
        return { kind: 'error', error: new Error('no blob store'), message: `cannot load body ${task.bodyRef}: no blob store configured` };
      }
      try {
        body = await this.loadBody(task.bodyRef);
      } catch (error) {
        return { kind: 'error', error, message: `cannot load body ${task.bodyRef}: ${describeError(error, quoted)}` };
      }
    }
    let url: TargetUrlParts;
    try {
      url = this.targetUrls.parse(task.targetUrl);
    } catch (error) {
      return { kind: 'error', error, message: `invalid target URL: ${describeError(error, quoted)}` };
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      const error = new TargetBlockedError(`the scheme ${url.protocol} is not http: or https:`);
      return { kind: 'error', error, message: describeError(error, quoted) };
    }
    const headers = attemptHeaders(task, attemptNumber);
    // Signed last, over the body exactly as it goes out (loaded from the blob store when kept there).
    if (signingSecrets !== undefined && !signAttemptHeaders(headers, task, signingSecrets, Math.floor(this.clock.now() / 1000), body)) {
      const error = new Error(`a signing secret of the target is not a Standard Webhooks secret (${WEBHOOK_SECRET_RULE})`);
      return { kind: 'error', error, message: error.message, deadLetterReason: DeadLetterReason.SECRET_UNAVAILABLE };
    }
    const options: Dispatcher.DispatchOptions = {
      origin: url.origin,
      path: url.path,
      method: task.method as Dispatcher.HttpMethod,
      headers,
      body,
      headersTimeout: quoted.attemptTimeoutMs + 1_000,
      bodyTimeout: quoted.attemptTimeoutMs + 1_000,
    };
    const agent = timeouts === undefined ? this.agent : this.agentFor(timeouts.connectTimeoutMs);
    return new Promise<AttemptResult>((resolve) => {
      // undici's own headers/body timeouts tick at about 1 s resolution; the handler's timer makes the deadline
      // exact and bounds the whole attempt, from queueing for a connection to the end of the snippet.
      const describe = (error: unknown) => describeError(error, quoted);
      const handler = new AttemptHandler(resolve, describe, quoted.attemptTimeoutMs, this.clock);
      try {
        agent.dispatch(options, handler);
      } catch (error) {
        // Invalid options (a header undici refuses, an unknown method) are thrown synchronously.
        handler.fail(error);
      }
    });
  }

  async close(): Promise<void> {
    if (!this.ownsAgent) return;
    await Promise.all([this.agent.close(), ...[...this.connectPools.values(), ...this.retiredPools].map((pool) => pool.close())]);
    this.connectPools.clear();
  }

  async destroy(): Promise<void> {
    if (!this.ownsAgent) return;
    await Promise.all([this.agent.destroy(), ...[...this.connectPools.values(), ...this.retiredPools].map((pool) => pool.destroy())]);
    this.connectPools.clear();
  }

  /** The pool whose connections open within `connectTimeoutMs`: the default one for the dispatcher's own timeout. */
  private agentFor(connectTimeoutMs: number): Dispatcher {
    if (connectTimeoutMs === this.connectTimeoutMs || this.makeAgent === undefined) return this.agent;
    let pool = this.connectPools.get(connectTimeoutMs);
    if (pool !== undefined) {
      // Most recently used last: the first entry is the one let go of when another timeout needs a pool.
      this.connectPools.delete(connectTimeoutMs);
      this.connectPools.set(connectTimeoutMs, pool);
      return pool;
    }
    if (this.connectPools.size >= MAX_CONNECT_POOLS) {
      const [oldestMs, oldest] = this.connectPools.entries().next().value as [number, Agent];
      this.connectPools.delete(oldestMs);
      this.retiredPools.add(oldest);
      // Its calls in flight finish; its idle connections close. A pool that fails to close is let go of all the same.
      const forget = () => void this.retiredPools.delete(oldest);
      oldest.close().then(forget, forget);
    }
    pool = this.makeAgent(connectTimeoutMs);
    this.connectPools.set(connectTimeoutMs, pool);
    return pool;
  }
}
