import {
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Context,
  type Span,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import { grpcStatusName } from '@retryd/core';
import { grpcTargetOf, isGrpcUrl } from '../domain/grpc-target.js';
import type { RetryTask } from '../domain/task.js';
import { formatTraceparent, parseTraceparent } from '../domain/traceparent.js';
import type { AttemptCompletion } from '../store/store.js';
import type { AttemptResult } from './attempt-result.js';

/**
 * The attributes of an attempt span: OpenTelemetry's HTTP client conventions where they apply (its RPC conventions for
 * a gRPC target: `rpc.system`, `rpc.service`, `rpc.method`, `rpc.grpc.status_code`), `retry.*` for retryd's own. `url.full` and `url.path` are deliberately absent: webhook URLs carry tokens in their path and query.
 */
export const AttemptSpanAttribute = {
  TASK_ID: 'retry.task_id',
  ATTEMPT: 'retry.attempt',
  OUTCOME: 'retry.outcome',
  DELAY_MS: 'retry.delay_ms',
  METHOD: 'http.request.method',
  STATUS_CODE: 'http.response.status_code',
  SERVER_ADDRESS: 'server.address',
  SERVER_PORT: 'server.port',
  URL_SCHEME: 'url.scheme',
  ERROR_TYPE: 'error.type',
  /** `grpc` for a gRPC target (OpenTelemetry's RPC conventions), with the three below. */
  RPC_SYSTEM: 'rpc.system',
  RPC_SERVICE: 'rpc.service',
  RPC_METHOD: 'rpc.method',
  RPC_GRPC_STATUS_CODE: 'rpc.grpc.status_code',
} as const;

/** The methods the HTTP conventions name a span after; any other is `HTTP` (the conventions' rule for unknown ones). */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);

/** One attempt's span, and the task as it is sent: carrying the span's own `traceparent`. */
export interface AttemptSpan {
  span: Span;
  sent: RetryTask;
}

/**
 * Makes each attempt a CLIENT span, a child of the `traceparent` its task was enqueued with (stored with the task, so
 * every attempt of a task, across retries and restarts, lands in the caller's trace), or a root span when it came
 * without one. The request carries the span's context as its `traceparent`, so the target's server span is the
 * attempt's child. Attributes are built only for a span that records (a sampled one).
 */
export class AttemptTracing {
  constructor(private readonly tracer: Tracer) {}

  /** Starts the span of attempt `attemptNumber` (1-based) of `task`. */
  start(task: RetryTask, attemptNumber: number): AttemptSpan {
    const parent = remoteParent(task.traceContext);
    const context: Context = parent === undefined ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, parent);
    const method = task.method.toUpperCase();
    const grpc = isGrpcUrl(task.targetUrl) ? grpcTargetOf(new URL(task.targetUrl)) : undefined;
    const rpc = grpc !== undefined && 'path' in grpc ? grpc : undefined;
    // The RPC conventions name a span `package.Service/Method`.
    const name = rpc !== undefined ? rpc.path.slice(1) : KNOWN_METHODS.has(method) ? method : 'HTTP';
    const span = this.tracer.startSpan(name, { kind: SpanKind.CLIENT, root: parent === undefined }, context);
    if (span.isRecording()) {
      span.setAttribute(AttemptSpanAttribute.TASK_ID, task.taskId);
      span.setAttribute(AttemptSpanAttribute.ATTEMPT, attemptNumber);
      if (rpc === undefined) span.setAttribute(AttemptSpanAttribute.METHOD, method);
      else {
        span.setAttribute(AttemptSpanAttribute.RPC_SYSTEM, 'grpc');
        span.setAttribute(AttemptSpanAttribute.RPC_SERVICE, rpc.service);
        span.setAttribute(AttemptSpanAttribute.RPC_METHOD, rpc.method);
      }
      setTargetAttributes(span, task.targetKey);
    }
    const own = span.spanContext();
    // The no-op tracer of an API without an SDK hands back the parent's context (or an invalid one): send what was stored.
    const sent = isSpanContextValid(own) && own.spanId !== parent?.spanId ? { ...task, traceContext: traceparentOf(own) } : task;
    return { span, sent };
  }

  /**
   * Ends the span with what the attempt came back with and what was decided: the status code, the attempt log's
   * outcome, the delay before the next attempt (`now` is when it was decided), and an error status on failure. The
   * status description is only a status code or an error code: an error's message may quote the target.
   */
  end({ span }: AttemptSpan, result: AttemptResult, completion: AttemptCompletion | undefined, now: number): void {
    if (span.isRecording()) {
      if (result.kind === 'response') span.setAttribute(AttemptSpanAttribute.STATUS_CODE, result.status);
      else if (result.kind === 'grpc') span.setAttribute(AttemptSpanAttribute.RPC_GRPC_STATUS_CODE, result.code);
      const attempt = completion?.attempt;
      if (attempt !== undefined) {
        span.setAttribute(AttemptSpanAttribute.OUTCOME, attempt.outcome);
        if (attempt.nextAttemptAt !== null) span.setAttribute(AttemptSpanAttribute.DELAY_MS, Math.max(0, attempt.nextAttemptAt - now));
      }
      const errorType = errorTypeOf(result);
      if (errorType !== undefined) {
        span.setAttribute(AttemptSpanAttribute.ERROR_TYPE, errorType);
        const status = result.kind === 'response' ? `HTTP ${result.status}` : result.kind === 'grpc' ? `grpc ${errorType}` : errorType;
        span.setStatus({ code: SpanStatusCode.ERROR, message: status });
      }
    }
    span.end();
  }
}

/** The span context of the stored `traceparent`, as the remote parent of an attempt span. */
function remoteParent(traceContext: string | null): SpanContext | undefined {
  const parsed = parseTraceparent(traceContext);
  if (parsed === undefined) return undefined;
  return { traceId: parsed.traceId, spanId: parsed.spanId, traceFlags: parsed.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE, isRemote: true };
}

function traceparentOf(context: SpanContext): string {
  return formatTraceparent({ traceId: context.traceId, spanId: context.spanId, sampled: (context.traceFlags & TraceFlags.SAMPLED) !== 0 });
}

function setTargetAttributes(span: Span, targetKey: string): void {
  let url: URL;
  try {
    url = new URL(targetKey);
  } catch {
    return;
  }
  span.setAttribute(AttemptSpanAttribute.URL_SCHEME, url.protocol.slice(0, -1));
  span.setAttribute(AttemptSpanAttribute.SERVER_ADDRESS, url.hostname.replace(/^\[|\]$/g, ''));
  span.setAttribute(AttemptSpanAttribute.SERVER_PORT, url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port));
}

/**
 * The conventions' `error.type`: the status code of a 4xx or 5xx response, the code name of a gRPC status other than
 * OK (`UNAVAILABLE`), the error's code (`ECONNREFUSED`,
 * `ATTEMPT_TIMEOUT`) or class name for a request that got none; undefined for a success or another status.
 */
function errorTypeOf(result: AttemptResult): string | undefined {
  if (result.kind === 'response') return result.status >= 400 ? String(result.status) : undefined;
  if (result.kind === 'grpc') return result.code === 0 ? undefined : grpcStatusName(result.code);
  const { error } = result;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[\w.-]{1,64}$/.test(code)) return code;
  return error instanceof Error ? error.name : '_OTHER';
}
