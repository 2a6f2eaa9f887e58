/**
 * `@retryd/client`: what calling services install to retry their own calls correctly and to hand to the retryd
 * service what must not be lost. Adapters for axios, Express and Fastify live behind their own subpaths, so importing
 * this entry point never loads them.
 *
 * @packageDocumentation
 */
export { createRetryingFetch, retryingFetch, type FetchFunction } from './fetch/retrying-fetch.js';
export type { FetchInput } from './fetch/replayable-request.js';
export type { RetryingFetchOptions } from './fetch/retrying-fetch-options.js';
export { BodyNotReplayableError } from './shared/body-not-replayable-error.js';
export { DEFAULT_KEYED_METHODS, IDEMPOTENCY_KEY_HEADER } from './shared/keyed-methods.js';
export {
  createWebhookVerifier,
  DEFAULT_WEBHOOK_MAX_BODY_BYTES,
  MAX_WEBHOOK_SIGNATURE_HEADER_LENGTH,
  MAX_WEBHOOK_SIGNATURES,
  type VerifiedWebhook,
  type WebhookVerifier,
  type WebhookVerifierOptions,
} from './webhooks/webhook-verifier.js';
export { WebhookRefusal, WebhookVerificationError } from './webhooks/webhook-verification-error.js';
export { MIN_WEBHOOK_KEY_BYTES } from './webhooks/webhook-secret.js';
export { RetryQueue, type RetryQueueRequest, type EnqueueRequest } from './queue/retry-queue.js';
export type { CredentialResolver, QueueClock, RetryQueueOptions } from './queue/retry-queue-options.js';
export { IN_REQUEST_DEADLINE_MS, QUEUE_DEADLINE_MS } from './shared/default-deadline.js';
export type { QueuedCall, QueuedRequest, QueuePersistence } from './queue/queued-call.js';
export { DeadLetterReason, type DeadLetter } from './queue/dead-letter.js';
export { QueueFullError } from './queue/queue-full-error.js';
export * from './service/index.js';
// What callers of this package catch and check, and the policy it takes, so that they need no import of core's own.
export {
  RetryExhaustedError,
  RetryableResultError,
  BrokenCircuitError,
  InvalidPolicyError,
  GiveUpReason,
  AttemptOutcome,
  CircuitState,
  BackoffType,
  JitterType,
  DEFAULT_POLICY,
  type RetryPolicy,
  type BackoffSchedule,
  type BackoffByClass,
  type RetryOptions,
  type AttemptContext,
  type AttemptEvent,
  type CircuitBreakerOptions,
  type PolicyViolation,
} from '@retryd/core';
export { stripCredentials, isCredentialHeader, CredentialRuleError, type CredentialRules, type StrippedHeaders } from './credentials/strip-credentials.js';
export { handoffFetch, RetrydQueued, isRetrydQueued, queuedAnswer, type HandoffOptions, type RequestRetryd } from './handoff/handoff-fetch.js';
export { RetrydSpooled, isRetrydSpooled, spooledAnswer } from './handoff/retryd-spooled.js';
export { handoffKey } from './handoff/handoff-key.js';
export { HandoffSpool } from './spool/handoff-spool.js';
export { SPOOL_MAX_BYTES, SPOOL_MAX_ENTRIES, SPOOL_RETRY, type HandoffSpoolOptions, type SpoolStats } from './spool/handoff-spool-options.js';
export type { DeadSpoolEntry, SpoolContents, SpoolEntry, SpoolStorage } from './spool/spool-entry.js';
export { SpoolFullError, type SpoolLimit } from './spool/spool-full-error.js';
