/**
 * Runs jobs with at most `concurrency` at once, in arrival order. In memory only on purpose: what it loses in a
 * crash is found again from the payment store at start (PENDING and SENDING payments, and BACKOFF ones whose task ended).
 */
export class WorkQueue {
  private readonly waiting: (() => Promise<void>)[] = [];
  private running = 0;

  constructor(
    private readonly concurrency: number,
    /** Told of a job that threw; the job's payment stays where it was, and the sweep or the next start picks it up. */
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Queues `job`. */
  push(job: () => Promise<void>): void {
    this.waiting.push(job);
    this.drain();
  }

  private drain(): void {
    while (this.running < this.concurrency && this.waiting.length > 0) {
      const job = this.waiting.shift() as () => Promise<void>;
      this.running += 1;
      void job()
        .catch(this.onError)
        .finally(() => {
          this.running -= 1;
          this.drain();
        });
    }
  }
}
