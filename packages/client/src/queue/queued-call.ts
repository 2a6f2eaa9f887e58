/** A request as plain data, so that it can be persisted and sent again after a reload. */
export interface QueuedRequest {
  url: string;
  /** Upper case. Default GET. */
  method: string;
  headers: Record<string, string>;
  /** The body as text (JSON, form-encoded, …); absent for none. */
  body?: string;
}

/** One call in a {@link RetryQueue}: the request and where its retries stand. Plain data: it is what persistence stores. */
export interface QueuedCall {
  /** Unique in the queue; also the request's `Idempotency-Key` unless the caller gave one. */
  id: string;
  request: QueuedRequest;
  /** Attempts made so far. */
  attempts: number;
  /** When the next attempt is due, in epoch ms. */
  dueAt: number;
  /** When it was enqueued, in epoch ms: the policy's `totalBudgetMs` counts from here. */
  enqueuedAt: number;
  /** The last backoff delay chosen (DECORRELATED jitter reads it). */
  previousDelayMs: number;
}

/**
 * Where a queue keeps its calls so that they outlive the page (see `indexedDbPersistence` in
 * `@retryd/client/indexeddb`). Writes are awaited before the queue goes on, so an enqueued call is stored once
 * `enqueue` resolves.
 */
export interface QueuePersistence {
  /** Every stored call, in any order. */
  load(): Promise<QueuedCall[]>;
  /** Stores a call, replacing the one with the same id. */
  save(call: QueuedCall): Promise<void>;
  /** Forgets a call. */
  remove(id: string): Promise<void>;
}
