import { systemClock, type BackoffSchedule, type Random } from '@retryd/core';
import type {
  ApiKey,
  ApiKeyRequest,
  Attempt,
  BatchEntryResult,
  BreakerAction,
  CancelAnswer,
  CreatedApiKey,
  EnqueueAnswer,
  EnqueueRequest,
  NamedPolicy,
  Page,
  PageRequest,
  PolicyReplaceRequest,
  PolicyRequest,
  PutPolicyAnswer,
  RescheduleRequest,
  Retention,
  RetentionRequest,
  Target,
  TargetSettingsPatch,
  Task,
  TaskFilter,
  TaskSummary,
  DeadLetterFilter,
  BulkReplayAnswer,
  LiveTaskFilter,
  BulkCancelAnswer,
  FinishedTaskFilter,
  DeletedTasksAnswer,
} from './api-types.js';
import { RetrydApiError, TaskWaitTimeoutError } from './errors.js';
import { allItems, allPages } from './paging.js';
import { CLIENT_RETRY, REQUEST_TIMEOUT_MS, send, type Answer, type RequestControl, type TransportOptions } from './transport.js';

/** Where the service listens when no URL is given: `retryd serve`'s default. */
export const DEFAULT_SERVICE_URL = 'http://127.0.0.1:8080';

/** The environment variable the API key is read from when the options give none. */
export const API_KEY_ENV = 'RETRYD_API_KEY';

/** How to reach the service. */
export interface RetrydClientOptions {
  /** The service's base URL. Default {@link DEFAULT_SERVICE_URL}. */
  url?: string;
  /**
   * An API key (`rtd_…`), sent as `Authorization: Bearer …`. Default: `RETRYD_API_KEY` from the environment; none
   * when that is unset or empty too (a service with no key yet, on loopback).
   */
  apiKey?: string | undefined;
  /** Most time one request may take, in ms. Default {@link REQUEST_TIMEOUT_MS}. */
  timeoutMs?: number;
  /** How the client's own requests are retried. Default {@link CLIENT_RETRY}. */
  retry?: Readonly<BackoffSchedule & { maxAttempts: number }>;
  /** The jitter of those retries. Default `Math.random`. */
  random?: Random;
  /** How the client waits between them. Default core's `systemClock.sleep` (which keeps waits of any length). */
  sleep?: (ms: number) => Promise<void>;
  /** The fetch it sends with. Default the global `fetch`. */
  fetch?: typeof fetch;
  /** Where `RETRYD_API_KEY` is read. Default `process.env` (none outside Node). */
  env?: Record<string, string | undefined>;
}

/** The longest one long poll asks the service to wait (its `waitMs` maximum): 30 s. */
export const MAX_WAIT_PER_REQUEST_MS = 30_000;

/** How long {@link RetrydClient.waitForTask} waits when not told: 60 s. */
export const DEFAULT_WAIT_TIMEOUT_MS = 60_000;

/** The statuses a task ends in. */
const ENDED: ReadonlySet<string> = new Set(['SUCCEEDED', 'FAILED', 'EXHAUSTED', 'CANCELLED']);

/** One path segment: every id is sent percent-encoded (a target key is a whole origin, `https%3A%2F%2F…`). */
const seg = (value: string) => encodeURIComponent(value);

function query(params: Record<string, string | number | boolean | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) search.set(name, String(value));
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

/** The page part of a bulk action's request: the cursor to go on from, and the page size when one is asked for. */
const pageOf = (cursor: string | undefined, limit: number | undefined): PageRequest => ({
  ...(cursor === undefined ? {} : { cursor }),
  ...(limit === undefined ? {} : { limit }),
});

const defaultEnv = (): Record<string, string | undefined> =>
  (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};

/**
 * A typed client of the retryd HTTP API: one method per route, each named after the route's `operationId` in
 * `/openapi.json`, its types generated from that document. Listings come as pages (`list…`) and as async iterators
 * over every item (`tasks()`, `deadLetters()`, …). Errors are a {@link RetrydApiError} (the service answered a
 * problem: `status`, `code`, `detail`, `errors[]`) or a `RetrydUnreachableError`. Requests that are safe to repeat
 * are retried with jitter when the service is unreachable or answers 429 or 503 (see `CLIENT_RETRY`).
 *
 * @example
 * ```ts
 * const client = new RetrydClient({ url: 'http://127.0.0.1:8080' }); // API key from RETRYD_API_KEY
 * const { task } = await client.enqueueTask({ targetUrl: 'https://api.example.com/charge', method: 'POST', body: { amount: 5 } });
 * for await (const dead of client.deadLetters()) console.log(dead.taskId, dead.deadLetterReason);
 * ```
 */
export class RetrydClient {
  /** The service's base URL, without a trailing slash. */
  readonly url: string;
  readonly #transport: TransportOptions;

  constructor(options: RetrydClientOptions = {}) {
    this.url = (options.url ?? DEFAULT_SERVICE_URL).replace(/\/+$/, '');
    const apiKey = 'apiKey' in options ? options.apiKey : (options.env ?? defaultEnv())[API_KEY_ENV];
    this.#transport = {
      url: this.url,
      apiKey: apiKey === '' ? undefined : apiKey,
      timeoutMs: options.timeoutMs ?? REQUEST_TIMEOUT_MS,
      retry: options.retry ?? CLIENT_RETRY,
      random: options.random ?? Math.random,
      sleep: options.sleep ?? ((ms) => systemClock.sleep(ms)),
      fetch: options.fetch ?? ((input, init) => fetch(input, init)),
    };
  }

  // ---- tasks

  /**
   * `POST /retry-tasks` (enqueueTask). A request without an `idempotencyKey` is given one here (a random UUID), so
   * that a retry of this request after a lost answer finds the same task instead of making a second one.
   */
  async enqueueTask(request: EnqueueRequest): Promise<EnqueueAnswer> {
    const answer = await this.#send<Task>('POST', '/retry-tasks', withKey(request), true);
    return { outcome: answer.status === 201 ? 'created' : 'replayed', task: answer.body };
  }

  /**
   * `POST /retry-tasks/batch` (enqueueTasks): up to 1,000 tasks, one result per task in order (each keyed as in
   * {@link enqueueTask}). With `returnMinimal`, each created or replayed entry carries its `taskId` instead of the whole
   * task (`Prefer: return=minimal`): about a tenth of the bytes, for loading a backlog.
   */
  async enqueueTasks(tasks: readonly EnqueueRequest[], options: { returnMinimal?: boolean } = {}): Promise<BatchEntryResult[]> {
    const headers = options.returnMinimal === true ? { prefer: 'return=minimal' } : {};
    const body = { tasks: tasks.map(withKey) };
    return (await this.#send<{ results: BatchEntryResult[] }>('POST', '/retry-tasks/batch', body, true, headers)).body.results;
  }

  /** `GET /retry-tasks/{taskId}` (getTask). */
  async getTask(taskId: string): Promise<Task> {
    return this.#get(`/retry-tasks/${seg(taskId)}`);
  }

  /**
   * Waits until the task ends (SUCCEEDED, FAILED, EXHAUSTED or CANCELLED) and answers it as it ended: long polls of
   * `GET /retry-tasks/{taskId}?waitMs=` (each at most {@link MAX_WAIT_PER_REQUEST_MS}), so the service answers the
   * moment the task ends and no loop of reads is written by the caller. Rejects with a {@link TaskWaitTimeoutError}
   * (holding the task as last read) once `timeoutMs` passes, default {@link DEFAULT_WAIT_TIMEOUT_MS}; with the
   * signal's reason when `signal` aborts; with a `RetrydApiError` (404) when there is no such task.
   *
   * @example
   * ```ts
   * const { task } = await client.enqueueTask({ targetUrl, method: 'POST', body });
   * const ended = await client.waitForTask(task.taskId, { timeoutMs: 120_000 });
   * if (ended.status !== 'SUCCEEDED') console.warn(ended.deadLetterReason, ended.lastError);
   * ```
   */
  async waitForTask(taskId: string, options: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<Task> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
    if (!(timeoutMs >= 0)) throw new RangeError(`timeoutMs must be a number of ms, 0 or more, got ${timeoutMs}`);
    const { signal } = options;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (signal?.aborted === true) throw signal.reason;
      const waitMs = Math.max(0, Math.min(MAX_WAIT_PER_REQUEST_MS, deadline - Date.now()));
      const asked = Date.now();
      // The request may take its whole wait and then the answer: its own limit is the client's beyond the wait.
      const path = `/retry-tasks/${seg(taskId)}${query({ waitMs: Math.floor(waitMs) })}`;
      const task = (await this.#send<Task>('GET', path, undefined, true, {}, { timeoutMs: this.#transport.timeoutMs + waitMs, signal })).body;
      if (ENDED.has(task.status)) return task;
      if (Date.now() >= deadline) throw new TaskWaitTimeoutError(task, timeoutMs);
      // A service that answered before the wait it was asked for (an older one, or one with too many waiting):
      // a pause, so that this loop is never a stream of reads.
      const early = Math.min(1_000, waitMs) - (Date.now() - asked);
      if (early > 0) await this.#transport.sleep(Math.min(early, deadline - Date.now()));
    }
  }

  /**
   * `GET /retry-tasks` (listTasks): a page of tasks, newest first, filtered, without their bodies (`getTask` has
   * them). A page may hold fewer than `limit` tasks with a `nextCursor`: it stays within the service's page size.
   */
  async listTasks(filter: TaskFilter & PageRequest = {}): Promise<Page<TaskSummary>> {
    return this.#get(`/retry-tasks${query({ ...filter })}`);
  }

  /** Every task that matches `filter`, newest first, page after page. */
  tasks(filter: TaskFilter = {}, pageSize?: number): AsyncGenerator<TaskSummary> {
    return allItems((page) => this.listTasks({ ...filter, ...page }), pageSize);
  }

  /** `DELETE /retry-tasks/{taskId}` (cancelTask): cancelled now (200), or when the attempt in flight ends (202). */
  async cancelTask(taskId: string): Promise<CancelAnswer> {
    const { status, body } = await this.#send<Task>('DELETE', `/retry-tasks/${seg(taskId)}`, undefined, false);
    return { outcome: status === 202 ? 'cancel_requested' : 'cancelled', task: body };
  }

  /**
   * `POST /retry-tasks/{taskId}/run` (runTask): makes a PENDING task due now (one already due keeps its place). Its
   * attempt count and time budget stay, and its target's protections still apply: `waiting` says what holds it. An
   * IN_FLIGHT task answers 409 `TASK_RUNNING`, a finished one 409 `TASK_NOT_PENDING`.
   */
  async runTask(taskId: string): Promise<Task> {
    return (await this.#send<Task>('POST', `/retry-tasks/${seg(taskId)}/run`, undefined, false)).body;
  }

  /**
   * `POST /retry-tasks/{taskId}/reschedule` (rescheduleTask): makes a PENDING task due at `nextAttemptAt` (a `Date`,
   * epoch ms or an ISO 8601 date-time; a time already past means now), earlier or later than it was. A time past the
   * end of the task's time budget answers 422 `RESCHEDULE_OUT_OF_RANGE`; statuses as {@link runTask}.
   */
  async rescheduleTask(taskId: string, nextAttemptAt: Date | RescheduleRequest['nextAttemptAt']): Promise<Task> {
    const body: RescheduleRequest = { nextAttemptAt: nextAttemptAt instanceof Date ? nextAttemptAt.getTime() : nextAttemptAt };
    return (await this.#send<Task>('POST', `/retry-tasks/${seg(taskId)}/reschedule`, body, false)).body;
  }

  /**
   * `POST /retry-tasks/cancel` (cancelTasks): cancels one page of the live tasks matching `filter` (PENDING ones at
   * once, IN_FLIGHT ones when their attempt ends), with a result per task. Call again with `nextCursor` until there
   * is none (as {@link cancelAllTasks} does) to cancel every one.
   */
  async cancelTasks(filter: LiveTaskFilter & PageRequest = {}): Promise<BulkCancelAnswer> {
    return (await this.#send<BulkCancelAnswer>('POST', '/retry-tasks/cancel', { ...filter }, true)).body;
  }

  /** Every live task matching `filter` cancelled, page after page: yields each page's answer as it lands (for progress). */
  cancelAllTasks(filter: LiveTaskFilter = {}, pageSize?: number): AsyncGenerator<BulkCancelAnswer> {
    return allPages((cursor) => this.cancelTasks({ ...filter, ...pageOf(cursor, pageSize) }));
  }

  /**
   * `DELETE /retry-tasks` (deleteTasks, an admin key): deletes one page of the finished tasks matching `filter` (those
   * that ended before `finishedBefore`), each with its attempts and idempotency key. A page may delete none and still
   * have a `nextCursor`: call again with it until there is none (as {@link deleteAllTasks} does).
   */
  async deleteTasks(filter: FinishedTaskFilter & PageRequest): Promise<DeletedTasksAnswer> {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(filter)) {
      // `status` may name several statuses: one parameter each.
      for (const one of Array.isArray(value) ? value : [value]) if (one !== undefined) search.append(name, String(one));
    }
    return (await this.#send<DeletedTasksAnswer>('DELETE', `/retry-tasks?${search.toString()}`, undefined, true)).body;
  }

  /** Every finished task matching `filter` deleted, page after page: yields each page's answer as it lands (for progress). */
  deleteAllTasks(filter: FinishedTaskFilter, pageSize?: number): AsyncGenerator<DeletedTasksAnswer> {
    return allPages((cursor) => this.deleteTasks({ ...filter, ...pageOf(cursor, pageSize) }));
  }

  /** `GET /retry-tasks/{taskId}/attempts` (listAttempts): a page of the attempt log, oldest first. */
  async listAttempts(taskId: string, page: PageRequest = {}): Promise<Page<Attempt>> {
    return this.#get(`/retry-tasks/${seg(taskId)}/attempts${query({ ...page })}`);
  }

  /** Every attempt of a task, oldest first. */
  attempts(taskId: string, pageSize?: number): AsyncGenerator<Attempt> {
    return allItems((page) => this.listAttempts(taskId, page), pageSize);
  }

  // ---- dead letters

  /** `POST /retry-tasks/{taskId}/replay` (replayTask): re-drives a FAILED or EXHAUSTED task; replaying twice runs it once. */
  async replayTask(taskId: string): Promise<Task> {
    return (await this.#send<Task>('POST', `/retry-tasks/${seg(taskId)}/replay`, undefined, true)).body;
  }

  /**
   * `GET /dead-letters` (listDeadLetters): a page of FAILED and EXHAUSTED tasks, newest first, maybe of one status,
   * policy or target, without their bodies. A page may be shorter than `limit` with a `nextCursor` (a target filter's,
   * even empty; any page that reached the service's page size).
   */
  async listDeadLetters(filter: DeadLetterFilter & PageRequest = {}): Promise<Page<TaskSummary>> {
    return this.#get(`/dead-letters${query({ ...filter })}`);
  }

  /** Every dead letter that matches `filter`, newest first, page after page. */
  deadLetters(filter: DeadLetterFilter = {}, pageSize?: number): AsyncGenerator<TaskSummary> {
    return allItems((page) => this.listDeadLetters({ ...filter, ...page }), pageSize);
  }

  /**
   * `POST /dead-letters/replay` (replayDeadLetters): replays one page of the dead letters matching `filter`, with a
   * result per task. Replayed tasks leave the dead letters: call again with `nextCursor` until there is none (as
   * {@link replayAllDeadLetters} does) to replay every one, each once.
   */
  async replayDeadLetters(filter: DeadLetterFilter & PageRequest = {}): Promise<BulkReplayAnswer> {
    return (await this.#send<BulkReplayAnswer>('POST', '/dead-letters/replay', { ...filter }, true)).body;
  }

  /** Every dead letter matching `filter` replayed, page after page: yields each page's answer as it lands (for progress). */
  replayAllDeadLetters(filter: DeadLetterFilter = {}, pageSize?: number): AsyncGenerator<BulkReplayAnswer> {
    return allPages((cursor) => this.replayDeadLetters({ ...filter, ...pageOf(cursor, pageSize) }));
  }

  // ---- policies

  /** `POST /retry-policies` (createPolicy): registers a policy; the same definition again is `unchanged`, another one a 409. */
  async createPolicy(policy: PolicyRequest): Promise<PutPolicyAnswer> {
    const { status, body } = await this.#send<NamedPolicy>('POST', '/retry-policies', policy, true);
    return { outcome: status === 201 ? 'created' : 'unchanged', policy: body };
  }

  /** `PUT /retry-policies/{policyId}` (replacePolicy): a registered policy's new definition (404 when there is none). */
  async replacePolicy(policyId: string, fields: PolicyReplaceRequest): Promise<NamedPolicy> {
    return (await this.#send<NamedPolicy>('PUT', `/retry-policies/${seg(policyId)}`, fields, true)).body;
  }

  /**
   * Creates or replaces a named policy: `PUT`, and `POST` when the service has no such policy yet (a `PUT` again if
   * another caller registered it in between).
   */
  async putPolicy(policyId: string, fields: PolicyReplaceRequest): Promise<PutPolicyAnswer> {
    try {
      return { outcome: 'replaced', policy: await this.replacePolicy(policyId, fields) };
    } catch (error) {
      if (!(error instanceof RetrydApiError) || error.status !== 404 || error.code !== 'NOT_FOUND') throw error;
    }
    try {
      const created = await this.createPolicy({ ...fields, policyId });
      return created.outcome === 'created' ? created : { outcome: 'replaced', policy: created.policy };
    } catch (error) {
      if (!(error instanceof RetrydApiError) || error.code !== 'POLICY_CONFLICT') throw error;
      return { outcome: 'replaced', policy: await this.replacePolicy(policyId, fields) };
    }
  }

  /** `GET /retry-policies/{policyId}` (getPolicy). */
  async getPolicy(policyId: string): Promise<NamedPolicy> {
    return this.#get(`/retry-policies/${seg(policyId)}`);
  }

  /** `GET /retention` (getRetention): how long the tenant's finished tasks are kept. */
  async getRetention(): Promise<Retention> {
    return this.#get('/retention');
  }

  /** `GET /retry-policies/{policyId}/retention` (getPolicyRetention): how long a registered policy's finished tasks are kept. */
  async getPolicyRetention(policyId: string): Promise<Retention> {
    return this.#get(`/retry-policies/${seg(policyId)}/retention`);
  }

  /**
   * `PUT /retry-policies/{policyId}/retention` (setPolicyRetention): the policy's own periods (each one left out is
   * inherited; `{}` removes them). Applies to its tasks that end from then on.
   */
  async setPolicyRetention(policyId: string, periods: RetentionRequest): Promise<Retention> {
    return (await this.#send<Retention>('PUT', `/retry-policies/${seg(policyId)}/retention`, periods, true)).body;
  }

  /** `GET /retry-policies` (listPolicies). */
  async listPolicies(page: PageRequest = {}): Promise<Page<NamedPolicy>> {
    return this.#get(`/retry-policies${query({ ...page })}`);
  }

  /** Every registered policy. */
  policies(pageSize?: number): AsyncGenerator<NamedPolicy> {
    return allItems((page) => this.listPolicies(page), pageSize);
  }

  // ---- targets

  /** `GET /targets` (listTargets): a page of targets in `targetKey` order. */
  async listTargets(page: PageRequest = {}): Promise<Page<Target>> {
    return this.#get(`/targets${query({ ...page })}`);
  }

  /** Every target. */
  targets(pageSize?: number): AsyncGenerator<Target> {
    return allItems((page) => this.listTargets(page), pageSize);
  }

  /** `GET /targets/{targetKey}` (getTarget): the key is the origin, encoded here as one path segment. */
  async getTarget(targetKey: string): Promise<Target> {
    return this.#get(`/targets/${seg(targetKey)}`);
  }

  /** `PUT /targets/{targetKey}` (putTargetSettings): a partial settings object; `null` lifts a limit. */
  async putTargetSettings(targetKey: string, patch: TargetSettingsPatch): Promise<Target> {
    return (await this.#send<Target>('PUT', `/targets/${seg(targetKey)}`, patch, true)).body;
  }

  /**
   * `POST /targets/{targetKey}/breaker` (setTargetBreaker): open, close or reset the breaker by hand. An opening holds
   * the target for `durationMs` (by default the target's `maxOpenDurationMs`), then probes.
   */
  async setTargetBreaker(targetKey: string, action: BreakerAction, options: { durationMs?: number } = {}): Promise<Target> {
    const body = options.durationMs === undefined ? { action } : { action, durationMs: options.durationMs };
    return (await this.#send<Target>('POST', `/targets/${seg(targetKey)}/breaker`, body, true)).body;
  }

  /**
   * `POST /targets/{targetKey}/release` (releaseTarget): ends the target's holds now (a `Retry-After` hold, and any but
   * an open breaker's, which `setTargetBreaker(targetKey, 'close')` ends). Releasing twice is releasing once.
   */
  async releaseTarget(targetKey: string): Promise<Target> {
    return (await this.#send<Target>('POST', `/targets/${seg(targetKey)}/release`, undefined, true)).body;
  }

  // ---- API keys

  /** `POST /api-keys` (createApiKey): the answer's `key` is the only time it is shown. Never retried (it would make two). */
  async createApiKey(request: ApiKeyRequest): Promise<CreatedApiKey> {
    return (await this.#send<CreatedApiKey>('POST', '/api-keys', request, false)).body;
  }

  /** `GET /api-keys` (listApiKeys): the tenant's keys, revoked ones included. */
  async listApiKeys(page: PageRequest = {}): Promise<Page<ApiKey>> {
    return this.#get(`/api-keys${query({ ...page })}`);
  }

  /** Every API key of the tenant. */
  apiKeys(pageSize?: number): AsyncGenerator<ApiKey> {
    return allItems((page) => this.listApiKeys(page), pageSize);
  }

  /** `DELETE /api-keys/{keyId}` (revokeApiKey). */
  async revokeApiKey(keyId: string): Promise<ApiKey> {
    return (await this.#send<ApiKey>('DELETE', `/api-keys/${seg(keyId)}`, undefined, true)).body;
  }

  // ---- health

  /** `GET /readyz` (getReadiness): resolves when the service and its store answer; a 503 is a {@link RetrydApiError}. */
  async getReadiness(): Promise<{ status: string; store?: string }> {
    return this.#get('/readyz');
  }

  /**
   * Every item of a listing, page after page through `nextCursor`.
   * @example `for await (const p of client.all((page) => client.listPolicies(page))) …`
   */
  all<T>(listPage: (page: PageRequest) => Promise<Page<T>>, pageSize?: number): AsyncGenerator<T> {
    return allItems(listPage, pageSize);
  }

  async #get<T>(path: string): Promise<T> {
    return (await this.#send<T>('GET', path, undefined, true)).body;
  }

  #send<T>(method: string, path: string, body: unknown, repeatable: boolean, headers?: Record<string, string>, request?: RequestControl): Promise<Answer<T>> {
    return send<T>(this.#transport, method, path, body, repeatable, headers, request);
  }
}

/** The request with an idempotency key: its own, the one of its `Idempotency-Key` header, or a new one. */
function withKey(request: EnqueueRequest): EnqueueRequest {
  if (request.idempotencyKey !== undefined) return request;
  const inHeaders = Object.keys(request.headers ?? {}).some((name) => name.toLowerCase() === 'idempotency-key');
  return inHeaders ? request : { ...request, idempotencyKey: crypto.randomUUID() };
}
