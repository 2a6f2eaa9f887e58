import { retry, type RetryPolicy, type TaskStatus } from '@retryd/core';
import type { ChargeCall } from '../gateway/payment-gateway.js';

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
 * The retryd service's task API, as the payments app uses it: enqueue a charge with its key, read a task. Calls
 * that fail because the service is down are retried until `signal` aborts.
 */
export class RetrydTasks {
  /** @param baseUrl - the service's URL, e.g. `http://127.0.0.1:8080` */
  constructor(
    private readonly baseUrl: string,
    private readonly signal: AbortSignal,
  ) {}

  /**
   * Hands the charge to retryd with the payment's key as the task's `idempotencyKey`: enqueueing the same key
   * again (a worker that crashed before recording the task id) answers the same task, never a second one.
   */
  async enqueue(call: ChargeCall, idempotencyKey: string, policy: RetryPolicy): Promise<RetrydTask> {
    const { 'idempotency-key': _sentByRetryd, ...headers } = call.headers;
    const body = JSON.stringify({ targetUrl: call.url, method: call.method, headers, body: call.body, idempotencyKey, policy });
    return this.call('POST', '/retry-tasks', body, [200, 201]);
  }

  /** The task, as the service has it now. */
  get(taskId: string): Promise<RetrydTask> {
    return this.call('GET', `/retry-tasks/${encodeURIComponent(taskId)}`, undefined, [200]);
  }

  private call(method: string, path: string, body: string | undefined, ok: number[]): Promise<RetrydTask> {
    return retry(
      async ({ signal }) => {
        const init: RequestInit = { method, signal: AbortSignal.any([signal, AbortSignal.timeout(5_000)]) };
        if (body !== undefined) init.headers = { 'content-type': 'application/json' };
        if (body !== undefined) init.body = body;
        const response = await fetch(`${this.baseUrl}${path}`, init).catch((error: unknown) => {
          throw new ServiceUnavailableError(`retryd ${method} ${path}: ${String(error)}`, { cause: error });
        });
        const text = await response.text();
        if (ok.includes(response.status)) return JSON.parse(text) as RetrydTask;
        if (response.status >= 500 || response.status === 429) throw new ServiceUnavailableError(`retryd ${method} ${path}: ${response.status}`);
        throw new Error(`retryd ${method} ${path} answered ${response.status}: ${text}`);
      },
      SERVICE_POLICY,
      { signal: this.signal, retryOnError: (error) => error instanceof ServiceUnavailableError },
    );
  }
}
