import type { QueuedCall } from './queued-call.js';

/**
 * Calls waiting for their next attempt, kept sorted by due time (oldest enqueue first among equals), so that the
 * queue needs one timer: for the head.
 */
export class CallSchedule {
  readonly #calls: QueuedCall[] = [];

  get size(): number {
    return this.#calls.length;
  }

  /** The call due first, if any. */
  peek(): QueuedCall | undefined {
    return this.#calls[0];
  }

  shift(): QueuedCall | undefined {
    return this.#calls.shift();
  }

  /** Inserts in due order (binary search: the queue is bounded, but may hold thousands). */
  insert(call: QueuedCall): void {
    let low = 0;
    let high = this.#calls.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const other = this.#calls[mid] as QueuedCall;
      if (other.dueAt < call.dueAt || (other.dueAt === call.dueAt && other.enqueuedAt <= call.enqueuedAt)) low = mid + 1;
      else high = mid;
    }
    this.#calls.splice(low, 0, call);
  }
}
