import { computeDelay, type BackoffSchedule, type Random } from '@retryd/core';
import type {
  AttemptView,
  BreakerAction,
  CancelAnswer,
  Page,
  PageRequest,
  PolicyView,
  Problem,
  PutPolicyAnswer,
  TargetView,
  TaskFilter,
  TaskView,
} from './answers.js';

/** Where the service listens when no URL is given: `retryd serve`'s default. */
export const DEFAULT_SERVICE_URL = 'http://127.0.0.1:8080';

/** How long one request may take before it is abandoned: 30 s (a page of 1,000 tasks is well under that). */
export const REQUEST_TIMEOUT_MS = 30_000;

/**
 * How requests are retried when the service is unreachable or answers 429 or 503 (a restart, a store outage): three
 * attempts, waiting up to 200 ms then up to 400 ms (full jitter, drawn by the `computeDelay` the service uses for its
 * tasks). Only requests that are safe to repeat (`GET`, `PUT`) are retried; a `Retry-After` longer than the delay
 * wins, up to 5 s.
 */
export const CLIENT_RETRY: Readonly<BackoffSchedule & { maxAttempts: number }> = Object.freeze({
  maxAttempts: 3,
  backoffType: 'EXPONENTIAL',
  initialDelayMs: 200,
  multiplier: 2,
  maxDelayMs: 5_000,
  jitterType: 'FULL',
});

/** The service answered with an error: its status and its `application/problem+json` body (or one made up from the status). */
export class RetrydApiError extends Error {
  override readonly name = 'RetrydApiError';
  constructor(
    readonly status: number,
    readonly problem: Problem,
  ) {
    super(problem.detail);
  }
}

/** No answer at all: the connection was refused or reset, the name did not resolve, or the request timed out. */
export class RetrydUnreachableError extends Error {
  override readonly name = 'RetrydUnreachableError';
}

/** How to reach the service. */
export interface RetrydClientOptions {
  /** The service's base URL. Default {@link DEFAULT_SERVICE_URL}. */
  url?: string;
  /** An API key (`rtd_…`), sent as `Authorization: Bearer …`; none when the service is open (loopback, no key yet). */
  apiKey?: string;
  /** Default {@link REQUEST_TIMEOUT_MS}. */
  timeoutMs?: number;
  /** Default `Math.random`: the jitter of retried reads. */
  random?: Random;
}

/**
 * A small client of the retryd HTTP API: one method per route the operator's CLI uses, each answering the service's
 * view types (see `answers.ts`). Errors are a {@link RetrydApiError} (the service answered a problem) or a
 * {@link RetrydUnreachableError}; the API key is only ever put in the `Authorization` header, never in an error.
 *
 * @example
 * ```ts
 * const client = new RetrydClient({ url: 'http://127.0.0.1:8080', apiKey: process.env.RETRYD_API_KEY });
 * for await (const task of client.all((page) => client.listDeadLetters(page))) console.log(task.taskId);
 * ```
 */
export class RetrydClient {
  readonly url: string;
  readonly #apiKey: string | undefined;
  readonly #timeoutMs: number;
  readonly #random: Random;

  constructor(options: RetrydClientOptions = {}) {
    this.url = (options.url ?? DEFAULT_SERVICE_URL).replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
    this.#timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
    this.#random = options.random ?? Math.random;
  }

  /** `GET /retry-tasks`: a page of tasks, newest first, filtered by status and named policy. */
  listTasks(filter: TaskFilter & PageRequest = {}): Promise<Page<TaskView>> {
    return this.#get(`/retry-tasks${query({ status: filter.status, policyId: filter.policyId, cursor: filter.cursor, limit: filter.limit })}`);
  }

  /** `GET /retry-tasks/{taskId}`. */
  getTask(taskId: string): Promise<TaskView> {
    return this.#get(`/retry-tasks/${seg(taskId)}`);
  }

  /** `GET /retry-tasks/{taskId}/attempts`: a page of the attempt log, oldest first. */
  listAttempts(taskId: string, page: PageRequest = {}): Promise<Page<AttemptView>> {
    return this.#get(`/retry-tasks/${seg(taskId)}/attempts${query({ ...page })}`);
  }

  /** `DELETE /retry-tasks/{taskId}`: cancelled now (200), or when the attempt in flight ends (202). */
  async cancelTask(taskId: string): Promise<CancelAnswer> {
    const { status, body } = await this.#send<TaskView>('DELETE', `/retry-tasks/${seg(taskId)}`);
    return { outcome: status === 202 ? 'cancel_requested' : 'cancelled', task: body };
  }

  /** Re-drives a FAILED or EXHAUSTED task; one already running again is answered as is (replaying twice runs it once). */
  async replayTask(taskId: string): Promise<TaskView> {
    return (await this.#send<TaskView>('POST', `/retry-tasks/${seg(taskId)}/replay`)).body;
  }

  /** `GET /dead-letters`: a page of FAILED and EXHAUSTED tasks, newest first. */
  listDeadLetters(page: PageRequest = {}): Promise<Page<TaskView>> {
    return this.#get(`/dead-letters${query({ ...page })}`);
  }

  /** `GET /retry-policies`. */
  listPolicies(page: PageRequest = {}): Promise<Page<PolicyView>> {
    return this.#get(`/retry-policies${query({ ...page })}`);
  }

  /** `GET /retry-policies/{policyId}`. */
  getPolicy(policyId: string): Promise<PolicyView> {
    return this.#get(`/retry-policies/${seg(policyId)}`);
  }

  /**
   * Creates or replaces a named policy: `PUT`, and `POST` when the service has no such policy yet (a `PUT` again if
   * another caller registered it in between). `fields` are the policy's fields, without `policyId`.
   */
  async putPolicy(policyId: string, fields: object): Promise<PutPolicyAnswer> {
    try {
      return { outcome: 'replaced', policy: (await this.#send<PolicyView>('PUT', `/retry-policies/${seg(policyId)}`, fields)).body };
    } catch (error) {
      if (!(error instanceof RetrydApiError) || error.status !== 404 || error.problem.code !== 'NOT_FOUND') throw error;
    }
    try {
      return { outcome: 'created', policy: (await this.#send<PolicyView>('POST', '/retry-policies', { ...fields, policyId })).body };
    } catch (error) {
      if (!(error instanceof RetrydApiError) || error.problem.code !== 'POLICY_CONFLICT') throw error;
      return { outcome: 'replaced', policy: (await this.#send<PolicyView>('PUT', `/retry-policies/${seg(policyId)}`, fields)).body };
    }
  }

  /** `GET /targets`: a page of targets in `targetKey` order. */
  listTargets(page: PageRequest = {}): Promise<Page<TargetView>> {
    return this.#get(`/targets${query({ ...page })}`);
  }

  /** `GET /targets/{targetKey}`: the key is the origin, encoded here as one path segment. */
  getTarget(targetKey: string): Promise<TargetView> {
    return this.#get(`/targets/${seg(targetKey)}`);
  }

  /** Changes a target's settings: a partial object (see `TargetSettingsPatch`); `null` lifts a limit. */
  async putTarget(targetKey: string, patch: object): Promise<TargetView> {
    return (await this.#send<TargetView>('PUT', `/targets/${seg(targetKey)}`, patch)).body;
  }

  /** `POST /targets/{targetKey}/breaker`: open, close or reset the breaker by hand. */
  async breaker(targetKey: string, action: BreakerAction): Promise<TargetView> {
    return (await this.#send<TargetView>('POST', `/targets/${seg(targetKey)}/breaker`, { action })).body;
  }

  /**
   * Every item of a listing, page after page through `nextCursor`, each page of `limit` (default 1000, the most a
   * page holds).
   */
  async *all<T>(listPage: (page: PageRequest) => Promise<Page<T>>, limit = 1000): AsyncGenerator<T> {
    let cursor: string | undefined;
    do {
      const page = await listPage(cursor === undefined ? { limit } : { cursor, limit });
      yield* page.items;
      cursor = page.nextCursor;
    } while (cursor !== undefined);
  }

  async #get<T>(path: string): Promise<T> {
    return (await this.#send<T>('GET', path)).body;
  }

  async #send<T>(method: string, path: string, body?: object): Promise<{ status: number; body: T }> {
    const repeatable = method === 'GET' || method === 'PUT';
    let previousDelayMs = 0;
    for (let attempt = 1; ; attempt += 1) {
      const last = !repeatable || attempt >= CLIENT_RETRY.maxAttempts;
      let response: Response;
      try {
        response = await fetch(`${this.url}${path}`, {
          method,
          headers: {
            accept: 'application/json, application/problem+json',
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            ...(this.#apiKey === undefined ? {} : { authorization: `Bearer ${this.#apiKey}` }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(this.#timeoutMs),
        });
      } catch (error) {
        if (last) throw new RetrydUnreachableError(`cannot reach ${this.url}: ${reasonOf(error)}`);
        previousDelayMs = await this.#pause(attempt, previousDelayMs, null);
        continue;
      }
      const text = await response.text();
      if (response.ok) return { status: response.status, body: JSON.parse(text) as T };
      if (!last && (response.status === 503 || response.status === 429)) {
        previousDelayMs = await this.#pause(attempt, previousDelayMs, response.headers.get('retry-after'));
        continue;
      }
      throw new RetrydApiError(response.status, problemOf(response.status, text));
    }
  }

  /** Waits before retry `n` of a read; a `Retry-After` in seconds that asks for longer wins, up to `maxDelayMs`. */
  async #pause(n: number, previousDelayMs: number, retryAfter: string | null): Promise<number> {
    const computed = computeDelay(CLIENT_RETRY, n, previousDelayMs, this.#random);
    const asked = retryAfter !== null && /^\d+$/.test(retryAfter) ? Number(retryAfter) * 1000 : 0;
    const delay = Math.min(CLIENT_RETRY.maxDelayMs, Math.max(computed, asked));
    await new Promise((resolve) => setTimeout(resolve, delay));
    return computed;
  }
}

/** One path segment: every id is sent percent-encoded (a target key is a whole origin, `https%3A%2F%2F…`). */
const seg = (value: string) => encodeURIComponent(value);

function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) search.set(name, String(value));
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

/** The problem the service sent, or one made from the status when the body is not one (a proxy's HTML page). */
function problemOf(status: number, text: string): Problem {
  try {
    const parsed = JSON.parse(text) as Partial<Problem>;
    if (typeof parsed === 'object' && parsed !== null && typeof parsed.detail === 'string') return parsed as Problem;
  } catch {
    // Not JSON: described by its status below.
  }
  return { type: 'about:blank', title: `HTTP ${status}`, status, detail: `the service answered HTTP ${status}`, code: CODE_OF_STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'VALIDATION_FAILED') };
}

/** The code a bare status stands for, when the body is not a problem (a proxy's page in front of the service). */
const CODE_OF_STATUS: Partial<Record<number, Problem['code']>> = {
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
  429: 'RATE_LIMITED',
  503: 'STORE_UNAVAILABLE',
};

/** Why fetch failed, from its cause (`connect ECONNREFUSED 127.0.0.1:8080`) rather than its bare `fetch failed`. */
function reasonOf(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError') return 'no answer within the request timeout';
  const cause = error instanceof Error ? (error.cause as { message?: string; code?: string } | undefined) : undefined;
  if (cause?.message !== undefined && cause.message !== '') return cause.message;
  if (cause?.code !== undefined) return cause.code;
  return error instanceof Error ? error.message : String(error);
}
