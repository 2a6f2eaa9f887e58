import { DuplicateAttemptError, SOCKET_FAILURE_CODES, StoreUnavailableError } from '../../store/store-errors.js';

/**
 * The Redis store cannot reach its server: the command was not sent (disconnected), was lost with the
 * connection, or got no reply in time. Coded `STORE_UNAVAILABLE`, which the API answers with 503.
 */
export class RedisUnavailableError extends Error {
  readonly code = 'STORE_UNAVAILABLE';
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RedisUnavailableError';
  }
}

/** A task id taken by another task (with another idempotency key): an id generator bug, never a race. */
export class TaskIdTakenError extends Error {
  readonly code = 'TASK_ID_TAKEN';
  constructor(readonly taskId: string) {
    super(`Task id ${taskId} is already used by another task.`);
    this.name = 'TaskIdTakenError';
  }
}

/** A change the store refuses because it would leave a task it could never schedule or reclaim. */
export class InvalidTaskStateError extends Error {
  readonly code = 'INVALID_TASK_STATE';
  constructor(message: string) {
    super(message);
    this.name = 'InvalidTaskStateError';
  }
}

// ioredis's own messages for "not sent" and "lost with the connection" (see redisFailure), and on Redis Cluster
// a cluster not connected, no node reachable, or a slot without a master for longer than the client's redirections
// (a failover that has not settled: CLUSTERDOWN, or MOVED to a node that is gone). A single command that runs out of
// redirections says so ("Too many Cluster redirections"); a pipeline that does hands back the last redirection itself
// (MOVED, ASK or TRYAGAIN), which only reaches the store when the client could not follow it.
const UNAVAILABLE = [
  /Command timed out/,
  /Connection is closed/,
  /Stream isn't writeable/,
  /Reached the max retries/,
  /^Cluster isn't ready/,
  /^None of startup nodes is available/,
  /^Too many Cluster redirections/,
  /^CLUSTERDOWN /,
  /^MOVED \d+ /,
  /^ASK \d+ /,
  /^TRYAGAIN /,
];

/** Turns a driver or script error into the store's typed errors; anything else passes through. */
export function translateError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const message = error.message;
  let match = /^DUPLICATE_ATTEMPT (\S+) (\S+)/.exec(message);
  if (match !== null) return new DuplicateAttemptError(match[1] ?? '', Number(match[2]), { cause: error });
  match = /^TASK_EXISTS (\S+)/.exec(message);
  if (match !== null) return new TaskIdTakenError(match[1] ?? '');
  if (error.name === 'MaxRetriesPerRequestError' || UNAVAILABLE.some((rule) => rule.test(message))) {
    return new RedisUnavailableError(`Redis is unavailable: ${message}`, { cause: error });
  }
  return error;
}

/** ioredis's messages for a command not sent, or lost with its connection, when it reaches the boundary untranslated. */
const NOT_SENT = ['Connection is closed', "Stream isn't writeable"];

/**
 * The Redis store's errors as the port's, at its boundary (its classes' methods, or the store's `#run`): what {@link translateError}
 * made of a failure passes; a socket code, ioredis's `MaxRetriesPerRequestError` or its "not sent" messages become
 * `StoreUnavailableError`, with ioredis's message and code as they were. Anything else passes through as raised.
 */
export function redisFailure(error: unknown): unknown {
  if (typeof error !== 'object' || error === null || (error as { code?: unknown }).code === 'STORE_UNAVAILABLE') return error;
  const { code, name, message } = error as { code?: unknown; name?: unknown; message?: unknown };
  if (typeof code === 'string' && SOCKET_FAILURE_CODES.has(code)) return StoreUnavailableError.of(error);
  if (name === 'MaxRetriesPerRequestError') return StoreUnavailableError.of(error);
  if (typeof message === 'string' && NOT_SENT.some((m) => message.includes(m))) return StoreUnavailableError.of(error);
  return error;
}

/**
 * A failure of the Redis store's round trips as the port will see it: the script's and ioredis's own errors named
 * ({@link translateError}), then the rest of the boundary's rules ({@link redisFailure}). What `RedisStore`'s `#run`
 * and its start-up throw.
 */
export function redisStoreError(error: unknown): unknown {
  return redisFailure(translateError(error));
}
