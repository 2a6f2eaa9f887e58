import type { RetryTask } from '../domain/task.js';

/**
 * The points of an attempt where a crash leaves the most interesting state behind, for the chaos suite
 * (`packages/server/chaos/`) to stop a worker at exactly one of them:
 *
 * - `after-claim`: the task is leased and IN_FLIGHT, no request has left;
 * - `after-response`: the downstream has answered, nothing of the answer is recorded yet.
 */
export const FaultPoint = {
  AFTER_CLAIM: 'after-claim',
  AFTER_RESPONSE: 'after-response',
} as const;
export type FaultPoint = (typeof FaultPoint)[keyof typeof FaultPoint];

/**
 * Test only: called at a {@link FaultPoint} of every attempt. It may stop the process there (the service's
 * `RETRYD_FAULT_PAUSE_AT` hook sends itself SIGSTOP). Never set in production; absent, each point costs one
 * `undefined` check.
 */
export type FaultHook = (point: FaultPoint, task: RetryTask) => void;
