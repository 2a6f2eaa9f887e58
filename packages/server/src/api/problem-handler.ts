import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Socket } from 'node:net';
import {
  ERROR_CODES,
  PROBLEM_CONTENT_TYPE,
  RetrydError,
  problemOf,
  type ErrorCode,
  type FieldError,
  type Problem,
} from '../domain/errors.js';

/**
 * Longest path segment the router matches (fastify's `maxParamLength`): 2,048 characters, room for the longest id of
 * every route fully percent-encoded (3 characters a byte), so any id that can be created can be read. Longer: 414.
 */
export const MAX_PATH_PARAM_LENGTH = 2048;

/** One error of ajv, as fastify attaches it to a validation error. */
interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

/** `/tasks/3/method` → `tasks[3].method`; a query or path parameter is named as is. */
export function fieldOf(instancePath: string, extra?: string): string {
  const parts = instancePath.split('/').slice(1).map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (extra !== undefined) parts.push(extra);
  return parts.reduce((field, part) => (/^\d+$/.test(part) ? `${field}[${part}]` : field === '' ? part : `${field}.${part}`), '');
}

/** The rule an ajv error names, in the words of the API's other messages. */
function ruleOf(e: AjvError): string {
  const p = e.params;
  switch (e.keyword) {
    case 'type':
      return `of type ${String(p.type)}`;
    case 'enum':
      return `one of ${(p.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'required':
      return 'present';
    case 'additionalProperties':
      return 'a known parameter';
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `${String(p.comparison)} ${String(p.limit)}`;
    case 'minLength':
      return `at least ${String(p.limit)} characters long`;
    case 'maxLength':
      return `at most ${String(p.limit)} characters long`;
    case 'maxItems':
      return `at most ${String(p.limit)} items`;
    case 'pattern':
      return `matching ${String(p.pattern)}`;
    case 'format':
      return `a valid ${String(p.format)}`;
    default:
      return e.message?.replace(/^must (be )?/, '') ?? e.keyword;
  }
}

/** Ajv's errors as field errors, each naming the field and the rule. */
export function fieldErrorsOf(errors: readonly AjvError[], context: string | undefined): FieldError[] {
  return errors.map((e) => {
    const extra =
      e.keyword === 'required' ? String(e.params.missingProperty)
      : e.keyword === 'additionalProperties' ? String(e.params.additionalProperty)
      : undefined;
    const field = fieldOf(e.instancePath, extra) || context || 'body';
    const rule = ruleOf(e);
    const message =
      e.keyword === 'additionalProperties' ? `${field} is not a known ${context === 'querystring' ? 'query parameter' : 'field'}`
      : e.keyword === 'required' ? `${field} is required`
      : `${field} must be ${rule}`;
    return { field, rule, message };
  });
}

function notJson(reason: string): { code: ErrorCode; detail: string; errors: FieldError[] } {
  const rule = 'a JSON document';
  const message = `body must be ${rule}: ${reason}`;
  return { code: 'VALIDATION_FAILED', detail: message, errors: [{ field: 'body', rule, message }] };
}

/** Fastify's own errors (parsing, limits, routing) as problems; undefined for anything else. */
function fastifyProblem(error: FastifyError, bodyLimit: number): { code: ErrorCode; detail: string; errors?: FieldError[] } | undefined {
  switch (error.code) {
    case 'FST_ERR_BAD_URL': {
      const rule = 'a path whose percent-encoding is valid UTF-8 (%XX escapes)';
      return { code: 'VALIDATION_FAILED', detail: `path must be ${rule}`, errors: [{ field: 'path', rule, message: `path must be ${rule}` }] };
    }
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return { code: 'URI_TOO_LONG', detail: `a path segment is longer than ${MAX_PATH_PARAM_LENGTH} characters` };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { code: 'PAYLOAD_TOO_LARGE', detail: `the request body is larger than the limit of ${bodyLimit} bytes` };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { code: 'UNSUPPORTED_MEDIA_TYPE', detail: 'send the body as application/json' };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return notJson(error.message);
  }
  // JSON.parse's own error (fastify passes it through with status 400).
  if (error instanceof SyntaxError) return notJson(error.message);
  const status = error.statusCode ?? 500;
  if (status === 404) return { code: 'NOT_FOUND', detail: error.message };
  if (status === 413) return { code: 'PAYLOAD_TOO_LARGE', detail: error.message };
  if (status === 415) return { code: 'UNSUPPORTED_MEDIA_TYPE', detail: error.message };
  if (status >= 400 && status < 500) return { code: 'VALIDATION_FAILED', detail: error.message };
  return undefined;
}

/** Renders any error as a problem: a `RetrydError` as it says, fastify's errors mapped, anything else a 500. */
export function toProblem(error: unknown, bodyLimit: number, instance: string): Problem {
  if (error instanceof RetrydError) return error.toProblem(instance);
  const fastifyError = error as FastifyError & { validation?: AjvError[]; validationContext?: string };
  if (Array.isArray(fastifyError.validation)) {
    const errors = fieldErrorsOf(fastifyError.validation, fastifyError.validationContext);
    return RetrydError.validation(errors).toProblem(instance);
  }
  const mapped = error instanceof Error ? fastifyProblem(fastifyError, bodyLimit) : undefined;
  if (mapped !== undefined) return problemOf(mapped.code, mapped.detail, mapped.errors, instance);
  // Never the message of an unexpected error: it may hold internals. It is logged with the request id.
  return problemOf('INTERNAL', 'an unexpected error occurred; it has been logged', undefined, instance);
}

/** Sends a problem with its status and media type; 503s carry a Retry-After hint. */
export function sendProblem(reply: FastifyReply, problem: Problem): FastifyReply {
  reply.code(problem.status).type(PROBLEM_CONTENT_TYPE);
  if (problem.status === 503 && !reply.hasHeader('retry-after')) reply.header('retry-after', '1');
  return reply.send(problem);
}

/**
 * Installs the error and not-found handlers: every error answer is `application/problem+json`. Client errors
 * are logged at debug level without the body (it may hold credentials for the target); server errors at error
 * level with their cause.
 */
export function installProblemHandlers(app: FastifyInstance, bodyLimit: number): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof RetrydError && error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
    if (error instanceof RetrydError && error.code === 'UNAUTHENTICATED') reply.header('www-authenticate', 'Bearer realm="retryd"');
    return sendProblem(reply, logProblem(request, error, toProblem(error, bodyLimit, request.url)));
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = allowedMethods(app, path);
    if (allowed.length === 0) return sendProblem(reply, problemOf('NOT_FOUND', `no route ${request.method} ${path}`, undefined, request.url));
    reply.header('allow', allowed.join(', '));
    return sendProblem(
      reply,
      problemOf('METHOD_NOT_ALLOWED', `${path} answers ${allowed.join(', ')}, not ${request.method}`, undefined, request.url),
    );
  });
}

/**
 * Logs the error behind a problem: every 5xx at error level with the error and its cause (a 500 is a fault to look
 * into, so it is never without its line), client errors at debug level. Never the request's headers or body: they
 * may hold credentials for the target.
 */
export function logProblem(request: FastifyRequest, error: unknown, problem: Problem): Problem {
  if (problem.status >= 500) {
    const cause = error instanceof Error ? error.cause : undefined;
    request.log.error({ err: error, ...(cause === undefined ? {} : { cause }), code: problem.code }, problem.detail);
  } else request.log.debug({ code: problem.code }, problem.detail);
  return problem;
}

/** Methods any route could be asked on; the 405 answer's `Allow` lists those the path has. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** The methods some route answers on this path (empty: no route has it). */
function allowedMethods(app: FastifyInstance, path: string): string[] {
  return METHODS.filter((method) => app.findRoute({ method, url: path }) !== null);
}

/**
 * fastify's `frameworkErrors`: errors the router meets before any route runs (a malformed percent-encoding, a path
 * segment over {@link MAX_PATH_PARAM_LENGTH}) answered as problems like every other error.
 */
export function frameworkErrorHandler(bodyLimit: number) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    void sendProblem(reply, logProblem(request, error, toProblem(error, bodyLimit, request.url)));
  };
}

/** What Node's HTTP parser refuses before a request exists, answered as problems; see {@link clientErrorHandler}. */
function clientProblem(error: { code?: unknown }): Problem {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return problemOf('HEADERS_TOO_LARGE', 'the request line and headers are larger than the server accepts (16 KiB)');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return problemOf('REQUEST_TIMEOUT', 'the request did not arrive in time');
    default:
      return problemOf('VALIDATION_FAILED', 'the request is not valid HTTP/1.1');
  }
}

/**
 * fastify's `clientErrorHandler`: a request Node's HTTP parser refuses (headers over its limit, a malformed request
 * line or header, a timeout) gets a problem body and the connection is closed, as fastify's own handler does.
 */
export function clientErrorHandler(error: Error & { code?: unknown }, socket: Socket): void {
  // A reset connection has nobody to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const problem = clientProblem(error);
  const body = JSON.stringify(problem);
  const reason = ERROR_CODES[problem.code].title;
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${problem.status} ${reason}\r\nConnection: close\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
