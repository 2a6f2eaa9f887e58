import { failureClassOfGrpcStatus, grpcStatusName, parseGrpcPushback, HttpOutcome, retryableGrpcCodesOf, type FailureClass, type RetryPolicy } from '@retryd/core';
import { DeadLetterReason } from '../domain/dead-letter-reason.js';
import type { AttemptResult } from './attempt-result.js';


/** What a gRPC status means for its task: the outcome, and what the attempt log and the retry take from it. */
export interface GrpcVerdict {
  outcome: HttpOutcome;
  /** For a final failure: `permanent_status:<CODE_NAME>`, or {@link DeadLetterReason.RETRY_REFUSED}. */
  reason?: string;
  failureClass?: FailureClass;
  /** The wait `grpc-retry-pushback-ms` asks for, in ms (honoured as a `Retry-After` is). */
  retryAfterMs?: number;
  /** `grpc <CODE_NAME>: <message>`, null for OK. */
  errorMessage: string | null;
  snippet: string | null;
}

/**
 * Classifies a gRPC status: OK is a success; a code in the policy's gRPC codes (`retryableGrpcCodesOf`: UNAVAILABLE,
 * RESOURCE_EXHAUSTED and DEADLINE_EXCEEDED by default) is retried, after its `grpc-retry-pushback-ms` when the target
 * sent one; a pushback that is negative or not a number means the target asks for no retry, and the task fails
 * (`retry_refused`); any other code is final (`permanent_status:<CODE_NAME>`). The attempt log keeps no HTTP status:
 * `grpc <CODE_NAME>: <message>` is its error message. Pure.
 *
 * @example
 * ```ts
 * grpcVerdict({ kind: 'grpc', code: 14, details: 'down', pushback: '250', bodySnippet: null }, policy);
 * // { outcome: 'retryable', failureClass: 'serverError', retryAfterMs: 250, errorMessage: 'grpc UNAVAILABLE: down', snippet: null }
 * ```
 */
export function grpcVerdict(result: Extract<AttemptResult, { kind: 'grpc' }>, policy: RetryPolicy): GrpcVerdict {
  const name = grpcStatusName(result.code);
  if (name === 'OK') return { outcome: HttpOutcome.SUCCESS, errorMessage: null, snippet: result.bodySnippet };
  const errorMessage = result.details === '' ? `grpc ${name}` : `grpc ${name}: ${result.details}`;
  if (!retryableGrpcCodesOf(policy).includes(name)) {
    return { outcome: HttpOutcome.PERMANENT, reason: `permanent_status:${name}`, errorMessage, snippet: result.bodySnippet };
  }
  const verdict: GrpcVerdict = { outcome: HttpOutcome.RETRYABLE, errorMessage, snippet: result.bodySnippet };
  if (result.pushback !== undefined) {
    const pushback = parseGrpcPushback(result.pushback);
    if (pushback === 'stop') {
      return {
        outcome: HttpOutcome.PERMANENT,
        reason: DeadLetterReason.RETRY_REFUSED,
        errorMessage: `${errorMessage} (grpc-retry-pushback-ms ${JSON.stringify(result.pushback.trim().slice(0, 20))}: the target asks for no retry)`,
        snippet: result.bodySnippet,
      };
    }
    verdict.retryAfterMs = pushback;
  }
  const failureClass = failureClassOfGrpcStatus(name);
  if (failureClass !== undefined) verdict.failureClass = failureClass;
  return verdict;
}
