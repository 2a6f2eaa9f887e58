import type { FieldError, Problem, Task } from './api-types.js';

/**
 * The service answered with an error: its status and its `application/problem+json` body (or one made up from the
 * status when the body is not a problem, e.g. a proxy's HTML page). `code`, `detail` and `errors` are the problem's.
 *
 * @example
 * ```ts
 * try { await client.enqueueTask(request); }
 * catch (error) {
 *   if (error instanceof RetrydApiError && error.code === 'VALIDATION_FAILED') for (const e of error.errors) console.log(e.field, e.rule);
 * }
 * ```
 */
export class RetrydApiError extends Error {
  override readonly name = 'RetrydApiError';
  /** The stable error code, e.g. `VALIDATION_FAILED`, `NOT_FOUND`, `POLICY_CONFLICT`. */
  readonly code: string;
  /** Each broken rule (for `VALIDATION_FAILED`); empty when the problem lists none. */
  readonly errors: readonly FieldError[];

  constructor(
    readonly status: number,
    readonly problem: Problem,
  ) {
    super(problem.detail);
    this.code = problem.code;
    this.errors = problem.errors ?? [];
  }

  /** The problem's `detail`: one sentence naming the field and the rule. */
  get detail(): string {
    return this.problem.detail;
  }
}

/** No answer at all: the connection was refused or reset, the name did not resolve, or the request timed out. */
export class RetrydUnreachableError extends Error {
  override readonly name = 'RetrydUnreachableError';
}

/** {@link RetrydClient.waitForTask}'s time passed before the task ended: `task` is the task as last read. */
export class TaskWaitTimeoutError extends Error {
  override readonly name = 'TaskWaitTimeoutError';

  constructor(
    readonly task: Task,
    readonly timeoutMs: number,
  ) {
    super(`task ${task.taskId} had not ended after ${timeoutMs} ms: it is ${task.status}`);
  }
}

/** The code a bare status stands for, when the body is not a problem. */
const CODE_OF_STATUS: Partial<Record<number, string>> = {
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
  429: 'RATE_LIMITED',
  503: 'STORE_UNAVAILABLE',
};

/** The problem the service sent, or one made from the status when the body is not one. */
export function problemOf(status: number, text: string): Problem {
  try {
    const parsed = JSON.parse(text) as Partial<Problem> | null;
    if (typeof parsed === 'object' && parsed !== null && typeof parsed.detail === 'string' && typeof parsed.code === 'string') {
      return parsed as Problem;
    }
  } catch {
    // Not JSON: described by its status below.
  }
  return {
    type: 'about:blank',
    title: `HTTP ${status}`,
    status,
    detail: `the service answered HTTP ${status}`,
    code: CODE_OF_STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'VALIDATION_FAILED'),
  };
}

/** Why fetch failed, from its cause (`connect ECONNREFUSED 127.0.0.1:8080`) rather than its bare `fetch failed`. */
export function reasonOf(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError') return 'no answer within the request timeout';
  const cause = error instanceof Error ? (error.cause as { message?: string; code?: string } | undefined) : undefined;
  if (cause?.message !== undefined && cause.message !== '') return cause.message;
  if (cause?.code !== undefined) return cause.code;
  return error instanceof Error ? error.message : String(error);
}
