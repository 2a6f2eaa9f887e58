/**
 * Every error the service answers with, in one table (in the manner of fastify's `lib/errors.js`): a stable
 * `code` that clients can switch on, its HTTP status and the short title of RFC 9457 problem details.
 * The `type` URI of each problem is derived from the code, so a client never has to parse the title.
 */
export const ERROR_CODES = Object.freeze({
  VALIDATION_FAILED: { status: 400, title: 'The request is not valid' },
  TARGET_NOT_ALLOWED: { status: 400, title: 'The target address is not allowed' },
  UNAUTHENTICATED: { status: 401, title: 'A valid API key is required' },
  FORBIDDEN: { status: 403, title: "The API key's scope does not allow this" },
  NOT_FOUND: { status: 404, title: 'Not found' },
  TASK_NOT_CANCELLABLE: { status: 409, title: 'The task can no longer be cancelled' },
  TASK_NOT_REPLAYABLE: { status: 409, title: 'The task cannot be replayed' },
  TASK_RUNNING: { status: 409, title: 'The task is running an attempt now' },
  TASK_NOT_PENDING: { status: 409, title: 'The task is not waiting for an attempt' },
  POLICY_CONFLICT: { status: 409, title: 'A different policy is registered under this id' },
  METHOD_NOT_ALLOWED: { status: 405, title: 'The method is not allowed on this resource' },
  HOST_NOT_ALLOWED: { status: 421, title: 'This service does not answer for this host name' },
  REQUEST_TIMEOUT: { status: 408, title: 'The request took too long to arrive' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'The request body is too large' },
  URI_TOO_LONG: { status: 414, title: 'The request path is too long' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported media type' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, title: 'The idempotency key was used for a different request' },
  RESCHEDULE_OUT_OF_RANGE: { status: 422, title: 'The time is later than the task may wait' },
  RATE_LIMITED: { status: 429, title: 'Too many requests for this tenant' },
  TOO_MANY_PENDING_TASKS: { status: 429, title: 'The tenant has too many tasks pending' },
  HEADERS_TOO_LARGE: { status: 431, title: 'The request headers are too large' },
  INTERNAL: { status: 500, title: 'Internal error' },
  STORE_UNAVAILABLE: { status: 503, title: 'The task store is unavailable' },
  SHUTTING_DOWN: { status: 503, title: 'The service is shutting down' },
  TARGET_LOOKUP_FAILED: { status: 503, title: 'The target host could not be resolved for now' },
} as const satisfies Record<string, { status: number; title: string }>);

/** One of the codes of {@link ERROR_CODES}. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** Base of the `type` URI of every problem: `https://retryd.dev/problems/validation-failed`. */
export const PROBLEM_TYPE_BASE = 'https://retryd.dev/problems/';

/** One broken rule of a request: the dotted field (`headers.Host`, `tasks[3].method`), the rule and a sentence. */
export interface FieldError {
  field: string;
  rule: string;
  message: string;
}

/**
 * An RFC 9457 problem details object, sent as `application/problem+json`.
 *
 * @example
 * ```json
 * { "type": "https://retryd.dev/problems/validation-failed", "title": "The request is not valid", "status": 400,
 *   "detail": "method must be one of GET, POST, ...", "code": "VALIDATION_FAILED",
 *   "errors": [{ "field": "method", "rule": "one of GET, POST, ...", "message": "method must be ..." }] }
 * ```
 */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  /** The request path the problem is about, when known. */
  instance?: string;
  /** Each broken rule, for VALIDATION_FAILED (and any code about a field). */
  errors?: FieldError[];
}

/** Most field errors one problem lists: 100. */
export const MAX_FIELD_ERRORS = 100;

/** The media type of problem details (RFC 9457). */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/**
 * A failure the service reports to its caller. The HTTP layer renders it with {@link RetrydError.toProblem};
 * anything that is not a `RetrydError` is an INTERNAL error whose message is logged, never sent.
 *
 * @example
 * ```ts
 * throw new RetrydError('NOT_FOUND', `no task ${taskId}`);
 * throw RetrydError.validation([{ field: 'method', rule: 'one of GET, POST', message: 'method must be ...' }]);
 * ```
 */
export class RetrydError extends Error {
  override readonly name = 'RetrydError';
  readonly status: number;
  readonly title: string;
  /** When the request may succeed if sent again (the answer's `Retry-After`), for a limit that will let it through. */
  readonly retryAfterSeconds?: number;

  constructor(
    readonly code: ErrorCode,
    /** A sentence for the caller: what went wrong with this request. Never holds secrets (header values). */
    readonly detail: string,
    readonly errors?: FieldError[],
    options?: { cause?: unknown; retryAfterSeconds?: number },
  ) {
    super(detail, options);
    if (options?.retryAfterSeconds !== undefined) this.retryAfterSeconds = options.retryAfterSeconds;
    this.status = ERROR_CODES[code].status;
    this.title = ERROR_CODES[code].title;
  }

  /**
   * A VALIDATION_FAILED error listing every broken rule (the first {@link MAX_FIELD_ERRORS} of them: a request
   * with a million unknown fields must not get an answer many times its size); the detail joins their messages.
   */
  static validation(errors: FieldError[]): RetrydError {
    const shown = errors.slice(0, MAX_FIELD_ERRORS);
    const more = errors.length - shown.length;
    const detail = shown.map((e) => e.message).join('; ') + (more > 0 ? `; and ${more} more` : '');
    return new RetrydError('VALIDATION_FAILED', detail, shown);
  }

  /** The problem details body. */
  toProblem(instance?: string): Problem {
    return problemOf(this.code, this.detail, this.errors, instance);
  }
}

/** The `type` URI of a code: `VALIDATION_FAILED` → `https://retryd.dev/problems/validation-failed`. */
export function problemType(code: ErrorCode): string {
  return PROBLEM_TYPE_BASE + code.toLowerCase().replaceAll('_', '-');
}

/** Builds a problem body for a code. */
export function problemOf(code: ErrorCode, detail: string, errors?: FieldError[], instance?: string): Problem {
  const { status, title } = ERROR_CODES[code];
  const problem: Problem = { type: problemType(code), title, status, detail, code };
  if (instance !== undefined) problem.instance = instance;
  if (errors !== undefined && errors.length > 0) problem.errors = errors;
  return problem;
}

/** True for an error meant for the caller. */
export function isRetrydError(error: unknown): error is RetrydError {
  return error instanceof RetrydError;
}
