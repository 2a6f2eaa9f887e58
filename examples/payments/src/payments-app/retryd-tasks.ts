import { retry, type RetryPolicy, type TaskStatus } from '@retryd/core';

/** The parts of a retryd task (`GET /retry-tasks/{taskId}`) the payments app reads. */
export interface RetrydTask {
  taskId: string;
  status: TaskStatus;
  attemptNumber: number;
  deadLetterReason: string | null;
  lastResponseStatus: number | null;
  lastError: string | null;
}

/** A 5xx, a 429 or no answer: the service is restarting or busy, try again. */
class ServiceUnavailableError extends Error {
  override readonly name = 'ServiceUnavailableError';
}

// The service is itself a remote dependency that crashes and restarts: every call to it is retried (with jitter,
// through the same library), for as long as the caller's signal allows.
const SERVICE_POLICY: Partial<RetryPolicy> = { maxAttempts: 10_000, initialDelayMs: 50, multiplier: 2, maxDelayMs: 1_000, jitterType: 'FULL' };

/**
 * The retryd service's task API, as the payments app reads it: one task at a time, at start-up only (the hand-off
 * writes tasks in the app's own transaction, and their ends come by callback). Calls that fail because the service
 * is down are retried until `signal` aborts.
 */
export class RetrydTasks {
  /** @param baseUrl - the service's URL, e.g. `http://127.0.0.1:8080` */
  constructor(
    private readonly baseUrl: string,
    private readonly signal: AbortSignal,
  ) {}

  /** The task, as the service has it now. */
  get(taskId: string): Promise<RetrydTask> {
    const path = `/retry-tasks/${encodeURIComponent(taskId)}`;
    return retry(
      async ({ signal }) => {
        const response = await fetch(`${this.baseUrl}${path}`, { signal: AbortSignal.any([signal, AbortSignal.timeout(5_000)]) }).catch((error: unknown) => {
          throw new ServiceUnavailableError(`retryd GET ${path}: ${String(error)}`, { cause: error });
        });
        const text = await response.text();
        if (response.status === 200) return JSON.parse(text) as RetrydTask;
        if (response.status >= 500 || response.status === 429) throw new ServiceUnavailableError(`retryd GET ${path}: ${response.status}`);
        throw new Error(`retryd GET ${path} answered ${response.status}: ${text}`);
      },
      SERVICE_POLICY,
      { signal: this.signal, retryOnError: (error) => error instanceof ServiceUnavailableError },
    );
  }
}
