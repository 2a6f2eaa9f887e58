/** Thrown by `RetryQueue.enqueue` when the queue already holds `maxSize` calls. */
export class QueueFullError extends Error {
  override readonly name = 'QueueFullError';
  readonly code = 'QUEUE_FULL';
  constructor(readonly maxSize: number) {
    super(`the queue is full: it holds maxSize (${maxSize}) calls, waiting or in flight; wait for drained() or raise maxSize`);
  }
}
