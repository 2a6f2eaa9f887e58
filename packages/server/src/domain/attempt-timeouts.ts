// How long one attempt may take, and how long it may spend opening its connection: the service's timeouts
// (`retryd serve --attempt-timeout`, `--connect-timeout`), a target's defaults (its settings) and a task's own (given at
// enqueue). Each is resolved per attempt, field by field: the task's, else its target's, else the service's.

/** The longest attempt timeout a task or a target may ask for, in ms: 30 minutes, as Cloud Tasks' `dispatchDeadline`. */
export const MAX_ATTEMPT_TIMEOUT_MS = 30 * 60_000;

/** The two timeouts an attempt runs under, in ms. */
export interface AttemptTimeouts {
  /** From sending the request (queueing for a connection included) to the end of the response snippet. */
  attemptTimeoutMs: number;
  /** Opening the TCP (and TLS) connection, name resolution included. Never more than `attemptTimeoutMs`. */
  connectTimeoutMs: number;
}

/** A level's own timeouts (a task's, a target's): null where it has none and the next level's apply. */
export interface TimeoutOverrides {
  attemptTimeoutMs: number | null;
  connectTimeoutMs: number | null;
}

/** The rule of either timeout, as error messages name it. */
export const TIMEOUT_RULE = `a whole number of ms from 1 to ${MAX_ATTEMPT_TIMEOUT_MS} (30 minutes)`;

/** Whether `value` is a timeout a task or a target may ask for ({@link TIMEOUT_RULE}). */
export function isTimeoutMs(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 1 && (value as number) <= MAX_ATTEMPT_TIMEOUT_MS;
}

/**
 * The rule that ties a level's two timeouts together, or undefined when they keep it: a connect timeout longer than
 * the attempt's could never fire (the attempt's timer bounds the connect too), so it is refused where both are given.
 */
export function connectWithinAttempt(own: TimeoutOverrides): string | undefined {
  const { attemptTimeoutMs, connectTimeoutMs } = own;
  if (attemptTimeoutMs === null || connectTimeoutMs === null || connectTimeoutMs <= attemptTimeoutMs) return undefined;
  return `<= attemptTimeoutMs (${attemptTimeoutMs})`;
}

/**
 * The timeouts of one attempt: each of the task's, else its target's, else the service's; the connect timeout cut to
 * the attempt's when levels combine into a longer one (a task's short attempt under a target's long connect).
 *
 * @example
 * ```ts
 * resolveTimeouts({ attemptTimeoutMs: 200, connectTimeoutMs: null }, undefined, { attemptTimeoutMs: 30_000, connectTimeoutMs: 5_000 });
 * // { attemptTimeoutMs: 200, connectTimeoutMs: 200 }
 * ```
 */
export function resolveTimeouts(task: TimeoutOverrides, target: TimeoutOverrides | undefined, service: AttemptTimeouts): AttemptTimeouts {
  const attemptTimeoutMs = task.attemptTimeoutMs ?? target?.attemptTimeoutMs ?? service.attemptTimeoutMs;
  const connectTimeoutMs = task.connectTimeoutMs ?? target?.connectTimeoutMs ?? service.connectTimeoutMs;
  return { attemptTimeoutMs, connectTimeoutMs: Math.min(connectTimeoutMs, attemptTimeoutMs) };
}
