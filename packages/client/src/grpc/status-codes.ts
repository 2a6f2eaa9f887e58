import { failureClassOfGrpcStatus, GrpcStatus, grpcStatusName, retryableGrpcCodesOf, type FailureClass, type RetryPolicy } from '@retryd/core';

/**
 * The status codes a policy retries for a gRPC call: the gRPC code names of its `retryableStatusCodes`
 * (`['UNAVAILABLE', 'ABORTED']`), else core's `DEFAULT_RETRYABLE_GRPC_CODES` (UNAVAILABLE, RESOURCE_EXHAUSTED,
 * DEADLINE_EXCEEDED), as the retryd service reads the same policy for a gRPC task. A list of HTTP statuses says
 * nothing of gRPC: the defaults then.
 */
export function retryableCodesOf(policy: Pick<RetryPolicy, 'retryableStatusCodes'>): ReadonlySet<number> {
  return new Set(retryableGrpcCodesOf(policy).map((name) => GrpcStatus[name]));
}

/** The failure class of a status code (core's `failureClassOfGrpcStatus`), for a policy's `backoffByClass`. */
export function failureClassOfCode(code: number): FailureClass | undefined {
  return failureClassOfGrpcStatus(grpcStatusName(code));
}
