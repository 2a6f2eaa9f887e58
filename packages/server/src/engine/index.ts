/**
 * The engine: claims due tasks, makes their HTTP attempts, decides outcomes with `@retryd/core`, and group-commits
 * the results through the `Store` port.
 * @packageDocumentation
 */
export { Engine } from './engine.js';
export { defaultWorkerId, resolveEngineOptions, type EngineOptions, type EngineStore, type ResolvedEngineOptions, type StopOptions } from './engine-options.js';
export { CompletionAbandonedError, FencedOutError, taskContext, type EngineErrorContext } from './engine-errors.js';
export { AttemptTracing, AttemptSpanAttribute, type AttemptSpan } from './attempt-tracing.js';
export type { AttemptDispatcher, AttemptResult } from './attempt-result.js';
export type { AttemptProtection, AttemptVerdict } from './attempt-protection.js';
export { applyVerdict } from './apply-verdict.js';
export { observeCompletion, timeStoreCalls, type EngineMetrics, type TimedStore, type TimedStoreCall } from './engine-metrics.js';
export { AttemptTimeoutError, HttpDispatcher, SNIPPET_BYTES, attemptHeaders, type HttpDispatcherOptions, type LoadBody } from './http-dispatcher.js';
export { DeadLetterReason, permanentStatusReason } from '../domain/dead-letter-reason.js';
export {
  decideAttemptOutcome,
  decideBeforeAttempt,
  decideLeaseExpired,
  type DecisionContext,
  type FinishedAttempt,
} from './decide-outcome.js';
export { PolicyNotFoundError, PolicyResolver, type PolicyResolverOptions } from './policy-resolver.js';
export { CompletionBatcher, type CompletionBatcherOptions, type QueuedCompletion } from './completion-batcher.js';
export { LeaseReaper, type LeaseReaperOptions } from './lease-reaper.js';
export { DueTimer } from './due-timer.js';
export { describeError, type TimeoutSettings } from './describe-error.js';
export { StoreBackoff } from './store-backoff.js';
export { FaultPoint, type FaultHook } from './fault-point.js';
export { lastQueueServed } from './claim-cursor.js';
