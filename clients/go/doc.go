// Package retryd is the Go client of the retryd retry service, with the standard library only.
//
// Two halves:
//
//   - [Client] speaks the service's HTTP API: enqueue a call (one or a batch), read a task, wait for it to end (long
//     polls), cancel it, replay a dead letter and list the dead letters. Errors the service answers are an [*APIError]
//     with the problem's code, detail and field errors.
//   - [Transport] is an [net/http.RoundTripper] that retries a request in process (full jitter, the deadline of the
//     request's context, Retry-After within it, one Idempotency-Key on every attempt) and, when told to, hands a
//     request that still fails to the service and answers the caller 202 {"status":"queued","taskId":"…"}.
//
// The idempotency key is derived exactly as @retryd/core's deriveIdempotencyKey derives it ([DeriveIdempotencyKey]),
// and the backoff delays are core's computeDelay ([ComputeDelay]): clients/shared/client-vectors.json, generated from
// core, holds the cases both must agree on.
package retryd
