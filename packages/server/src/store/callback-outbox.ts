/** A callback owed: a task ended with a `callback`, and its callback is not a task of its own yet. */
export interface OwedCallback {
  tenantId: string;
  taskId: string;
  /** When the task ended (its `updatedAt` then): the order of {@link CallbackOutbox.owed}, and the guard of `settle`. */
  owedAt: number;
}

/**
 * The callbacks owed (the store's outbox of task ends). The transition that ends a task with a `callback` (a
 * completion's final outcome, `cancelTask`) records in the same write that its callback is owed, whichever end it was
 * (the relay decides whether the callback's `on` asks for it); the callback relay reads them, makes each callback a
 * task of its own (its idempotency key derived from the ended task, so making one twice makes one task), and then
 * settles them. While a task's callback is owed, `purgeExpired` and `deleteFinishedTasks` leave the task alone.
 *
 * A task ended again (replayed, then ended) before its callback was settled owes one callback, for its latest end.
 */
export interface CallbackOutbox {
  /** At most `limit` owed callbacks, earliest end first (in Redis Cluster, earliest of each partition reached). */
  owed(limit: number): Promise<OwedCallback[]>;
  /**
   * Forgets owed callbacks, each only while it is owed at the `owedAt` given (a task that ended again since stays owed
   * for its new end). Returns how many it forgot.
   */
  settle(callbacks: readonly OwedCallback[]): Promise<number>;
}
