/**
 * HTTP classification: what a status, a response or a thrown error means for retrying a call.
 * @packageDocumentation
 */
export { HttpOutcome } from './http-outcome.js';
export { headerValue, type HeaderFieldValue, type HeadersLike } from './headers.js';
export {
  classifyHttpResponse,
  classifyHttpStatus,
  type ClassifyHttpResponseOptions,
  type HttpClassification,
} from './classify-http.js';
export { classifyError, isConnectionRefused, isNetworkError, isTimeoutError } from './network-errors.js';
export { FailureClass, failureClassOf, failureClassOfError, failureClassOfStatus } from './failure-class.js';
export { CREDENTIAL_HEADER_WORDS, RETRYD_OWN_HEADERS, isCredentialHeader } from './credential-headers.js';
