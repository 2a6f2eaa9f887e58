// The due-time hints of target queues (`target_queues.next_due_at`, see 002-targets.sql), gathered per call; and,
// for the moves out of IN_FLIGHT, the queues whose in-flight throttle they end (`full_until`, 003-target-limits.sql).
//
// A hint must never be later than the earliest due PENDING task of its queue. A claim or a cancel only takes tasks
// away, so it can only make a hint early (a cancel, and a claim that finds a queue with nothing due, set it exact
// again); every move that makes a task PENDING (insert, retry, lease hand-back, replay) must lower the hint in the
// same transaction. Those moves come in batches that mostly share one queue, so each call gathers the earliest due
// time per queue first and writes each queue once, at its end, and only when that lowers the hint, or, for
// completions and lease hand-backs, ends an in-flight throttle: every queue they touch is noted, due or not, so a
// queue at its concurrency limit is freed once per call, and a queue without limits costs one lookup by number per
// call however many of its tasks the call moved. Queues are named by their number (`queue_id`, which each task row
// keeps).

/** Writes one queue's lowest due time (null: nothing due, but the queue was touched). */
export type LowerHint = (queueId: number, dueAt: number | null) => void;

/**
 * The earliest due time per target queue of the tasks one call makes PENDING (and every queue it touches, due or
 * not). Not shared between calls.
 *
 * @example
 * ```ts
 * const lowering = new QueueLowering();
 * lowering.add(3, T0 + 5);
 * lowering.flush(lowerHint); // one write per queue
 * ```
 */
export class QueueLowering {
  readonly #byQueue = new Map<number, number | null>();

  /** Notes a task of the queue numbered `queueId` due at `dueAt` (null: not due, but its queue was touched). */
  add(queueId: number, dueAt: number | null): void {
    const known = this.#byQueue.get(queueId);
    if (known === undefined || (dueAt !== null && (known === null || dueAt < known))) this.#byQueue.set(queueId, dueAt);
  }

  /** Hands each queue's lowest due time to `lower`, once per queue, and forgets them. */
  flush(lower: LowerHint): void {
    for (const [queueId, dueAt] of this.#byQueue) lower(queueId, dueAt);
    this.#byQueue.clear();
  }
}
