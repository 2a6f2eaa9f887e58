/**
 * Runs async operations one at a time, in the order given: one target's state changes, so that two instances' worth of
 * outcomes arriving together read, decide and write the shared state in turn rather than over each other.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly report: (error: unknown) => void) {}

  /** Queues `op`; the promise settles when it is done and never rejects (a failure goes to `report`). */
  run(op: () => Promise<void>): Promise<void> {
    const done = this.tail.then(op).catch((error: unknown) => this.report(error));
    this.tail = done;
    return done;
  }

  /** Resolves once everything queued so far is done. */
  idle(): Promise<void> {
    return this.tail.then(() => undefined);
  }

  /** Queues `op` and hands its result, or its failure, to the caller. */
  call<T>(op: () => Promise<T>): Promise<T> {
    const result = this.tail.then(op);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
