import { retryableStatusKindOf, type RetryPolicy } from '@retryd/core';
import type { FieldError } from '../domain/errors.js';

/**
 * The rules an enqueue request meets when its `targetUrl` is a gRPC method (`grpc://` or `grpcs://`), beyond those of
 * every task, and the rule that ties a policy's `retryableStatusCodes` to the kind of its task's target.
 */

/** Records a broken rule of `field`, with what was given when it is safe to repeat (as in `parseEnqueueInput`). */
type Fail = (field: string, rule: string, got?: string) => void;

/**
 * Standard base64 (RFC 4648 §4) with its padding: the encoding of a gRPC task's `body` (the request message, already
 * serialised by the caller) and of the values of its `-bin` headers. The empty text is the empty message.
 */
export const BASE64_PATTERN = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** What {@link BASE64_PATTERN} asks, for the messages that refuse a value. */
export const BASE64_RULE = 'standard base64 (RFC 4648 §4, with = padding)';

/**
 * A gRPC metadata key: lower-case letters, digits, `_`, `-` and `.` (header names are matched in any case and sent in
 * lower case). `grpc-` keys are the protocol's own.
 */
const METADATA_KEY = /^[0-9a-z_.-]+$/;
/** A metadata value that is not `-bin`: printable ASCII, as HTTP/2 and grpc-js accept it. */
const METADATA_VALUE = /^[\x20-\x7e]*$/;

/** `method` of a gRPC task: POST or absent (a gRPC call is always an HTTP/2 POST). The method to store, or undefined. */
export function grpcMethodOf(method: unknown, fail: Fail): string | undefined {
  if (method === undefined || method === 'POST') return 'POST';
  fail('method', 'POST or absent for a gRPC target (a gRPC call is an HTTP/2 POST)', typeof method === 'string' ? JSON.stringify(method) : undefined);
  return undefined;
}

/** `body` of a gRPC task: absent, or the request message's bytes in base64 (never a JSON value). Never quotes it. */
export function checkGrpcBody(raw: unknown, fail: Fail): string | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'string' || !BASE64_PATTERN.test(raw)) {
    fail('body', `the request message's bytes in ${BASE64_RULE} for a gRPC target`);
    return null;
  }
  return raw;
}

/**
 * `headers` of a gRPC task, sent as metadata: each name a metadata key (in any case), not a `grpc-*` key, not
 * `content-type`; a `-bin` value in base64 (sent as bytes), any other value printable ASCII. Never quotes a value.
 */
export function checkGrpcHeaders(headers: Record<string, string>, fail: Fail): void {
  for (const [name, value] of Object.entries(headers)) {
    const key = name.toLowerCase();
    const field = `headers.${name}`;
    if (!METADATA_KEY.test(key)) fail(field, 'a gRPC metadata key for a gRPC target (letters, digits, _, - and .)');
    else if (key.startsWith('grpc-') || key === 'content-type') fail(field, 'absent for a gRPC target: grpc-* and content-type are set by the gRPC protocol');
    else if (key.endsWith('-bin')) {
      if (!BASE64_PATTERN.test(value)) fail(field, `a value in ${BASE64_RULE}: a -bin metadata value is bytes`);
    } else if (!METADATA_VALUE.test(value)) fail(field, 'printable ASCII for a gRPC target (put bytes in a -bin header, in base64)');
  }
}

/** A policy field that does not fit its task's target, and the rule it breaks. */
export interface PolicyMismatch {
  /** `retryableStatusCodes` or `successStatusCodes`. */
  field: 'retryableStatusCodes' | 'successStatusCodes';
  rule: string;
}

/**
 * Whether a policy fits its task's target: `retryableStatusCodes` names HTTP statuses for an http(s) target and gRPC
 * status code names for a gRPC one (a policy that names none fits both), and `successStatusCodes` (HTTP statuses) is
 * only for HTTP targets. Empty when it fits.
 */
export function policyTargetMismatches(policy: Pick<RetryPolicy, 'retryableStatusCodes' | 'successStatusCodes'>, grpc: boolean): PolicyMismatch[] {
  const found: PolicyMismatch[] = [];
  const kind = retryableStatusKindOf(policy);
  if (grpc && kind === 'http') {
    found.push({ field: 'retryableStatusCodes', rule: 'gRPC status code names (e.g. "UNAVAILABLE", "ABORTED") for a grpc:// or grpcs:// target, not HTTP statuses' });
  } else if (!grpc && kind === 'grpc') {
    found.push({ field: 'retryableStatusCodes', rule: 'HTTP statuses (e.g. 429, 503) for an http or https target, not gRPC status code names' });
  }
  if (grpc && policy.successStatusCodes !== undefined && policy.successStatusCodes.length > 0) {
    found.push({ field: 'successStatusCodes', rule: 'absent for a gRPC target (successStatusCodes are HTTP statuses; OK is the only success)' });
  }
  return found;
}

/** The field errors of an inline policy that does not fit its target, naming `policy.<field>` (with the request's path). */
export function inlinePolicyErrors(policy: RetryPolicy, grpc: boolean, name: (field: string) => string): FieldError[] {
  return policyTargetMismatches(policy, grpc).map(({ field, rule }) => ({
    field: name(`policy.${field}`),
    rule,
    message: `${name(`policy.${field}`)} must be ${rule}`,
  }));
}

/** The field errors of a registered policy (`policyId`) that does not fit its task's target, naming `policyId`. */
export function namedPolicyErrors(policy: RetryPolicy, policyId: string, grpc: boolean, field: string): FieldError[] {
  return policyTargetMismatches(policy, grpc).map(({ field: which, rule }) => ({
    field,
    rule: `a policy whose ${which} fits the target: ${rule}`,
    message: `${field} must name a policy whose ${which} fits the target; ${which} of policy ${policyId} must be ${rule}`,
  }));
}
