// The console's calls to the retryd API: same origin, JSON, the API key the user entered (kept for this tab only,
// in sessionStorage) as a bearer token. The answers' types are @retryd/client's, generated from /openapi.json.
import type { FieldError, Problem } from '@retryd/client';

export type {
  Attempt as AttemptView,
  BreakerAction,
  FieldError,
  Page,
  NamedPolicy as PolicyView,
  Problem,
  RetryPolicy,
  Target as TargetView,
  TaskStatus,
  Task as TaskView,
  TaskSummary as TaskSummaryView,
} from '@retryd/client';
export type { ConsoleStats } from '../../src/metrics/service-metrics.js';
export type { ConsoleHistory, TargetHistory } from '../../src/metrics/history/service-history.js';

const KEY_ITEM = 'retryd.apiKey';

/** The API key entered in this tab, if any. */
export function storedKey(): string | null {
  return sessionStorage.getItem(KEY_ITEM);
}

/** Keeps the key for this tab (until it closes); `null` forgets it. */
export function storeKey(key: string | null): void {
  if (key === null) sessionStorage.removeItem(KEY_ITEM);
  else sessionStorage.setItem(KEY_ITEM, key);
}

/** An answer that is not 2xx, with the API's problem details. */
export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail || problem.title);
    this.name = 'ApiError';
  }

  get status(): number {
    return this.problem.status;
  }

  /** The API's messages by field (`maxAttempts` → "maxAttempts must be …"), for forms. */
  get fieldErrors(): Record<string, string> {
    const byField: Record<string, string> = {};
    for (const { field, message } of this.problem.errors ?? ([] as FieldError[])) byField[field] ??= message;
    return byField;
  }
}

/** Told when the service answers 401: the console then asks for a key. */
let onUnauthorized: () => void = () => {};
export function whenUnauthorized(listener: () => void): void {
  onUnauthorized = listener;
}

/** Calls the API: `path` with its query, a JSON body for writes. Rejects with {@link ApiError} on a problem. */
export async function api<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const key = storedKey();
  if (key !== null) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await response.text();
  const json: unknown = text === '' ? undefined : JSON.parse(text);
  if (response.ok) return json as T;
  if (response.status === 401) onUnauthorized();
  const problem = (json ?? {}) as Partial<Problem>;
  throw new ApiError({
    type: problem.type ?? 'about:blank',
    title: problem.title ?? response.statusText,
    status: response.status,
    detail: problem.detail ?? `${method} ${path} answered ${response.status}`,
    code: problem.code ?? 'INTERNAL',
    ...(problem.errors === undefined ? {} : { errors: problem.errors }),
  } as Problem);
}

/** A query string of the set values, `?a=1&b=x`, or `''`. */
export function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== '') search.set(name, String(value));
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}
